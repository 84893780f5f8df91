"""Large allocation writes in process: time and SQL statements per request.

Builds the application on a fresh database (an SQLite file unless
``--server`` names a database server URL without a database, as
``tools/with-postgresql.sh`` exports in ``PLACEMENT_TEST_DB_URL``) and
sends, for each size, one ``POST /allocations`` creating that many new
consumers over two providers (three classes each), then one
``PUT /allocations/{consumer}`` of a new consumer. It prints the status,
wall time and statements sent to the database for each::

    python3 -m benchmarks.allocation_post_size --sizes 1,100,1000,5000 \\
        [--server postgresql+psycopg2://postgres@127.0.0.1:5432] \\
        [--profile 1000]

``--profile N`` prints the cProfile of the POST of N consumers;
``--puts N`` ends with the median and 90th percentile of N PUT round
trips of new consumers (a small write's cost).
"""

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import time
import uuid

from sqlalchemy import event
import webob

from benchmarks.toolkit import inprocess
from benchmarks.toolkit import stats


CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
HEADERS = {'OpenStack-API-Version': 'placement 1.39',
           'Content-Type': 'application/json',
           'X-Auth-Token': 'admin'}


class Counter:
    """Statements sent through the engine since the last ``reset``."""

    def __init__(self, engine):
        self.count = 0
        event.listen(engine, 'before_cursor_execute', self._seen)

    def _seen(self, *_args):
        self.count += 1

    def reset(self):
        self.count = 0


def _database_url(server, directory):
    if server is None:
        return 'sqlite:///%s/placement.sqlite' % directory
    from placement.tests import fixtures
    return fixtures.create_server_database(server, 'post_size')


def build(url):
    """(app, db) on the fresh database at ``url``, migrated."""
    db = inprocess.database(url)
    return inprocess.application(db), db


def call(app, method, path, body=None):
    req = webob.Request.blank(path, method=method, headers=HEADERS)
    if body is not None:
        req.body = json.dumps(body).encode()
    return req.get_response(app)


def providers(app, count=2, total=10 ** 9):
    uuids = []
    for index in range(count):
        rp = str(uuid.uuid4())
        call(app, 'POST', '/resource_providers',
             {'uuid': rp, 'name': 'post-size-%s' % rp})
        call(app, 'PUT', '/resource_providers/%s/inventories' % rp, {
            'resource_provider_generation': 0,
            'inventories': {rc: {'total': total} for rc in CLASSES}})
        uuids.append(rp)
    return uuids


def post_body(rps, consumers, project='bench-project'):
    """``consumers`` new consumers, each on every provider of ``rps``."""
    return {str(uuid.uuid4()): {
        'allocations': {rp: {'resources': {rc: 1 for rc in CLASSES}}
                        for rp in rps},
        'project_id': project, 'user_id': 'bench-user',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'}
        for _ in range(consumers)}


def measure(app, counter, method, path, body, profile=False):
    """(status, seconds, statements) of one request."""
    counter.reset()
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    resp = call(app, method, path, body)
    if profiler:
        profiler.disable()
    elapsed = time.perf_counter() - start
    if profiler:
        pstats.Stats(profiler).sort_stats('cumulative').print_stats(25)
    return resp.status_int, elapsed, counter.count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', default='1,100,1000,5000')
    parser.add_argument('--server', default=None)
    parser.add_argument('--profile', type=int, default=None)
    parser.add_argument('--puts', type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='placement-post-size-') as tmp:
        app, db = build(_database_url(args.server, tmp))
        try:
            run(app, db, [int(s) for s in args.sizes.split(',') if s],
                args.profile, args.puts)
        finally:
            db.dispose()
    return 0


def run(app, db, sizes, profile_size=None, puts=0):
    """Print one line per request of each size, then the PUT figures."""
    counter = Counter(db.engine)
    rps = providers(app)
    print('%-28s %6s %9s %11s' % ('request', 'status', 'seconds',
                                  'statements'))
    for size in sizes:
        body = post_body(rps, size)
        status, seconds, statements = measure(
            app, counter, 'POST', '/allocations', body,
            profile=profile_size == size)
        print('%-28s %6d %9.3f %11d' % ('POST %d consumers' % size, status,
                                        seconds, statements))
        put = next(iter(post_body(rps, 1).values()))
        status, seconds, statements = measure(
            app, counter, 'PUT', '/allocations/%s' % uuid.uuid4(), put)
        print('%-28s %6d %9.3f %11d' % ('PUT 1 consumer', status, seconds,
                                        statements))
    if puts:
        times = [
            measure(app, counter, 'PUT', '/allocations/%s' % uuid.uuid4(),
                    next(iter(post_body(rps, 1).values())))[1]
            for _ in range(puts)]
        print('PUT round trips: %d, median %.2f ms, p90 %.2f ms' % (
            puts, 1000 * statistics.median(times),
            1000 * stats.percentile(times, 0.9)))


if __name__ == '__main__':
    sys.exit(main())
