"""Time GET /metrics and GET /capacity on a large fleet.

Fills an empty database with ``--providers`` compute nodes (VCPU,
MEMORY_MB, DISK_GB; each in one of ``--aggregates`` aggregates; every
other one with an allocation) by bulk inserts, which is much faster than
the API for 10,000 providers, then times the pages through the whole
WSGI stack in this process::

    python3 -m benchmarks.capacity_scrape --providers 10000
    python3 -m benchmarks.capacity_scrape --providers 10000 \\
        --db-url postgresql://user@127.0.0.1:5432/empty_db

``cold`` scrapes compute the capacity snapshot each time (the cost of
the one scrape per ``capacity_refresh_interval`` that reads the
tables); ``cached`` scrapes reuse it. Prints the median, lowest and
highest time of ``--repeat`` requests and the size of each answer.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time


from benchmarks.toolkit import cloud_rows
from benchmarks.toolkit import inprocess

def time_get(app, path, repeat):
    times, size = [], 0
    for _ in range(repeat):
        seconds, resp = inprocess.timed_get(app, path)
        times.append(seconds)
        size = len(resp.body)
    return times, size


def report(name, times, size):
    print('%-16s median %8.1f ms  (min %.1f, max %.1f; %d requests)  '
          '%d bytes' % (name, statistics.median(times) * 1000,
                        min(times) * 1000, max(times) * 1000, len(times),
                        size), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--providers', type=int, default=10000)
    parser.add_argument('--aggregates', type=int, default=50)
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--db-url', help='an EMPTY database (default: a '
                        'temporary SQLite file)')
    args = parser.parse_args(argv)
    path = None
    url = args.db_url
    if url is None:
        fd, path = tempfile.mkstemp(suffix='.sqlite')
        os.close(fd)
        url = 'sqlite:///' + path
    try:
        db = inprocess.database(url)
        start = time.perf_counter()
        cloud_rows.fill_compute_nodes(db, args.providers, args.aggregates)
        print('%s: %d providers loaded in %.1f s' % (
            db.dialect, args.providers, time.perf_counter() - start))
        for name, interval in (('cold', 0), ('cached', 3600)):
            app = inprocess.application(
                db, metrics__capacity_refresh_interval=interval)
            if name == 'cached':
                time_get(app, '/metrics', 1)
            report('/metrics ' + name, *time_get(app, '/metrics',
                                                 args.repeat))
            report('/capacity ' + name, *time_get(app, '/capacity',
                                                  args.repeat))
        db.dispose()
    finally:
        if path:
            for suffix in ('', '-wal', '-shm'):
                if os.path.exists(path + suffix):
                    os.unlink(path + suffix)


if __name__ == '__main__':
    sys.exit(main())
