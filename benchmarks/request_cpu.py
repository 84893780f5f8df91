"""CPU time per small request, in process, without HTTP or a second
server: the fixed cost of the application stack, and where it goes.

The application is built as ``placement.wsgi.api`` builds it for gunicorn
(configuration from ``OS_<GROUP>__<OPTION>`` variables, oslo.log set up,
metrics on by default), on a fresh SQLite file unless ``--db-url`` names
another database, with the provider ``benchmarks.small_gets`` creates.
Every path of ``toolkit.small_requests.PATHS`` is called ``--requests``
times per round, in ``--rounds`` interleaved rounds, with the WSGI
environ a server would pass; it prints the median CPU milliseconds per request
with the spread of the rounds::

    python3 -m benchmarks.request_cpu
    python3 -m benchmarks.request_cpu --profile /resource_providers/%s/traits

``--profile PATH`` (``%s`` stands for the provider's uuid) prints the
cProfile of that path's requests instead, sorted by cumulative time,
to see what a request spends its time on. Log lines go to a temporary
file, as they go to gunicorn's log.

Back to back, a request finds the interpreter's and the processor's
caches warm with the previous one; under real load other requests,
other processes and the kernel run in between, and the same code costs
more. ``--gap MS`` sleeps that long between requests (the sleep is not
counted: CPU time only), which shows that colder cost::

    python3 -m benchmarks.request_cpu --gap 0.5

``--perfload N`` also loads upstream's perfload cloud of N compute
nodes (``toolkit/perfload.py``) and measures its candidates query
(``--profile`` may then name its path), the whole request in process::

    python3 -m benchmarks.request_cpu --perfload 1000 --requests 300
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time

from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import inprocess
from benchmarks.toolkit import perfload
from benchmarks.toolkit import small_requests

class _Writer:
    """``cloud_api.Client``'s ``write``, in process."""

    def __init__(self, app):
        self.app = app

    def write(self, method, path, body=None, ok=(200, 201, 204)):
        status, data = inprocess.call(self.app, method, path,
                                      json.dumps(body).encode())
        if status not in ok:
            raise RuntimeError('%s %s -> %s %s' % (method, path, status,
                                                   data[:200]))
        return json.loads(data) if data else None


def prepare(app, perfload_providers=0):
    """Create the provider of the small GETs, and the perfload cloud of
    ``perfload_providers`` compute nodes if any."""
    writer = _Writer(app)
    small_requests.create_provider(writer)
    for job in perfload.jobs(perfload_providers):
        for args, kwargs in job:
            cloud_api.create_provider(writer, *args, **kwargs)


def cpu_per_request(app, path, requests, gap=0.0):
    """CPU seconds per GET of ``path``, sleeping ``gap`` seconds between
    two requests."""
    start = time.process_time()
    for _ in range(requests):
        status, _data = inprocess.call(app, 'GET', path)
        if status != 200:
            raise RuntimeError('%s -> %s' % (path, status))
        if gap:
            time.sleep(gap)
    return (time.process_time() - start) / requests


def measure(app, paths, requests, rounds, gap=0.0):
    """{path: [CPU seconds per request, one per round]}."""
    found = {path: [] for path in paths}
    for _ in range(rounds):
        for path in paths:
            found[path].append(cpu_per_request(app, path, requests, gap))
    return found


def profile(app, path, requests, limit=40):
    """The cProfile report of ``requests`` GETs of ``path``."""
    cpu_per_request(app, path, min(requests, 50))  # warm caches first
    profiler = cProfile.Profile()
    profiler.enable()
    cpu_per_request(app, path, requests)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats('cumulative').print_stats(limit)
    return out.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--db-url', help='default: a new SQLite file')
    parser.add_argument('--requests', type=int, default=500)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--profile', metavar='PATH',
                        help='print the profile of GET PATH instead')
    parser.add_argument('--gap', type=float, default=0.0, metavar='MS',
                        help='milliseconds to sleep between requests '
                             '(not counted), for the cost with cold '
                             'caches (default: none)')
    parser.add_argument('--perfload', type=int, default=0, metavar='N',
                        help='also the perfload candidates query, on N '
                        'compute nodes that all qualify (e.g. 1000)')
    args = parser.parse_args(argv)
    paths = list(small_requests.PATHS)
    if args.perfload:
        paths.append(perfload.path())
    with tempfile.TemporaryDirectory(prefix='request-cpu.') as tmp:
        db_url = args.db_url or 'sqlite:///%s' % os.path.join(
            tmp, 'placement.sqlite')
        app = inprocess.application(inprocess.database(db_url),
                                    os.path.join(tmp, 'placement.log'))
        prepare(app, args.perfload)
        if args.profile:
            path = args.profile.replace('%s', small_requests.PROVIDER)
            print(profile(app, path, args.requests))
            return 0
        cpu_per_request(app, '/', 50)
        found = measure(app, paths, args.requests, args.rounds,
                        args.gap / 1000)
        for path in paths:
            values = [v * 1000 for v in found[path]]
            print('GET %-62s %.3f ms CPU (rounds %.3f-%.3f)' % (
                path[:62], statistics.median(values), min(values),
                max(values)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
