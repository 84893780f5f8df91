"""Database round trips and their time per request of the cloud mix, in
process, on a real database.

On a database server every statement is a round trip over the socket,
and the transaction's ``BEGIN`` (psycopg2 sends it before the first
statement) and ``COMMIT`` are two more; on a loaded server they, not the
Python code, set the service time of the write paths. This counts them
at the driver, below SQLAlchemy, so statements run on the driver's
cursor (``placement.db.prepared``) are counted too, for each kind of
request ``benchmarks.cloud_traffic`` sends, on a small cloud built the
same way (flat nodes, aggregates with sharing providers, instances)::

    tools/with-postgresql.sh .venv/bin/python -m benchmarks.round_trips
    tools/with-mysql.sh .venv/bin/python -m benchmarks.round_trips
    python3 -m benchmarks.round_trips            # SQLite file
    ... -m benchmarks.round_trips --show 'PUT inventories'

It prints per kind the median round trips, the median milliseconds
spent waiting for the database and in the whole request, and the CPU
milliseconds of this process per request (less disturbed than times by
other work on a shared machine); ``--show`` lists one request's
statements with their times.
"""

import argparse
import collections
import os
import statistics
import sys
import tempfile
import threading
import time

import sqlalchemy as sa

from benchmarks.toolkit import mix_requests

_TALLY = threading.local()


def _note(sql, seconds):
    sent = getattr(_TALLY, 'sent', None)
    if sent is not None:
        sent.append((' '.join(str(sql).split()), seconds))


def _timed(method, sql, *args):
    start = time.perf_counter()
    try:
        return method(sql, *args)
    finally:
        _note(sql, time.perf_counter() - start)


def _psycopg2_factory():
    from psycopg2 import extensions

    class Cursor(extensions.cursor):
        def execute(self, sql, args=None):
            if (self.connection.status == extensions.STATUS_READY
                    and not self.connection.autocommit):
                _note('BEGIN (implicit)', 0.0)
            return _timed(super().execute, sql, args)

        def executemany(self, sql, args):
            # psycopg2 runs the statement once per parameter set.
            args = list(args)
            start = time.perf_counter()
            try:
                return super().executemany(sql, args)
            finally:
                share = (time.perf_counter() - start) / max(len(args), 1)
                for _ in args:
                    _note(sql, share)

    class Connection(extensions.connection):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.cursor_factory = Cursor

        def commit(self):
            if self.status != extensions.STATUS_READY:
                return _timed(lambda _sql: super(Connection, self).commit(),
                              'COMMIT')
            return super().commit()

        def rollback(self):
            if self.status != extensions.STATUS_READY:
                return _timed(
                    lambda _sql: super(Connection, self).rollback(),
                    'ROLLBACK')
            return super().rollback()

    return 'connection_factory', Connection


def _sqlite_factory():
    import sqlite3

    class Cursor(sqlite3.Cursor):
        def execute(self, sql, *args):
            return _timed(super().execute, sql, *args)

        def executemany(self, sql, *args):
            return _timed(super().executemany, sql, *args)

    class Connection(sqlite3.Connection):
        def cursor(self, factory=Cursor):
            return super().cursor(factory)

        def execute(self, sql, *args):
            return self.cursor().execute(sql, *args)

        def commit(self):
            return _timed(lambda _sql: super(Connection, self).commit(),
                          'COMMIT')

    return 'factory', Connection


def _pymysql_factory():
    from placement.db import pymysql_connection

    class Connection(pymysql_connection.connection_class()):
        # Every statement, BEGIN, COMMIT and ROLLBACK is a round trip;
        # ours send no COMMIT or ROLLBACK outside a transaction in
        # autocommit mode.
        def query(self, sql, unbuffered=False):
            return _timed(super().query, sql, unbuffered)

        def commit(self):
            if pymysql_connection.idle(self):
                return super().commit()
            return _timed(lambda _sql: super(Connection, self).commit(),
                          'COMMIT')

        def rollback(self):
            if pymysql_connection.idle(self):
                return super().rollback()
            return _timed(lambda _sql: super(Connection, self).rollback(),
                          'ROLLBACK')

        def begin(self):
            return _timed(lambda _sql: super(Connection, self).begin(),
                          'BEGIN')

    return None, Connection


def count_round_trips(engine):
    """Make every new connection of ``engine`` report its statements to
    ``sent()``."""
    backend = engine.dialect.name
    if backend == 'postgresql':
        key, factory = _psycopg2_factory()
    elif backend == 'sqlite':
        key, factory = _sqlite_factory()
    elif backend == 'mysql' and engine.dialect.driver == 'pymysql':
        key, factory = _pymysql_factory()
    else:
        raise SystemExit('round trips are counted on PostgreSQL, MySQL '
                         '(PyMySQL) and SQLite')

    if key is None:
        # Instead of the engine's own, which makes the class counted.
        from placement.db import pymysql_connection
        if sa.event.contains(engine, 'do_connect',
                             pymysql_connection.connect):
            sa.event.remove(engine, 'do_connect',
                            pymysql_connection.connect)

    @sa.event.listens_for(engine, 'do_connect')
    def _connect(_dialect, _record, cargs, cparams):
        if key is None:  # the driver takes no factory: connect here
            return factory(*cargs, **cparams)
        cparams[key] = factory
    engine.dispose()


class sent:
    """Collects the statements the current thread sends."""

    def __enter__(self):
        _TALLY.sent = self.statements = []
        return self.statements

    def __exit__(self, *_exc):
        _TALLY.sent = None


def build(url):
    """The application on the fresh database at ``url``, migrated, its
    round trips counted."""
    from benchmarks.toolkit import inprocess
    db = inprocess.database(url)
    count_round_trips(db.engine)
    return inprocess.application(db)


def measure(cloud, rounds):
    """{kind: [(statements, seconds of the request, CPU seconds of
    this process)]}."""
    found = collections.defaultdict(list)
    for index in range(rounds):
        for kind, method, path, body in mix_requests.requests(cloud,
                                                              index):
            with sent() as statements:
                start, cpu = time.perf_counter(), time.process_time()
                status, answer = mix_requests.call(cloud.app, method,
                                                   path, body)
                seconds = time.perf_counter() - start
                cpu = time.process_time() - cpu
            if status >= 300:
                raise RuntimeError('%s -> %s %s' % (kind, status, answer))
            found[kind].append((list(statements), seconds, cpu))
    return found


def report(found, show=None):
    lines = ['%-30s %11s %9s %10s %9s' % ('request', 'round trips',
                                          'db ms', 'request ms', 'CPU ms')]
    for kind, samples in found.items():
        trips = statistics.median(len(s) for s, _, _ in samples)
        db = statistics.median(sum(t for _, t in s) for s, _, _ in samples)
        total = statistics.median(seconds for _, seconds, _ in samples)
        cpu = statistics.median(cpu for _, _, cpu in samples)
        lines.append('%-30s %11g %9.2f %10.2f %9.2f' % (
            kind, trips, db * 1000, total * 1000, cpu * 1000))
    for kind in show or ():
        statements = found[kind][-1][0]
        lines.append('')
        lines.append('%s (last round):' % kind)
        lines.extend('  %7.3f ms  %s' % (t * 1000, sql[:160])
                     for sql, t in statements)
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--db-url', help='default: PLACEMENT_TEST_DB_URL '
                        '(a new database on it), else a new SQLite file')
    parser.add_argument('--nodes', type=int, default=20)
    parser.add_argument('--aggregates', type=int, default=4)
    parser.add_argument('--rounds', type=int, default=11)
    parser.add_argument('--show', metavar='KIND', action='append',
                        help="list one request's statements, e.g. "
                        "'PUT inventories'")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='round-trips.') as tmp:
        url = args.db_url
        server = os.environ.get('PLACEMENT_TEST_DB_URL')
        if url is None and server:
            from placement.tests import fixtures
            url = fixtures.create_server_database(server, 'round_trips')
        url = url or 'sqlite:///%s/placement.sqlite' % tmp
        app = build(url)
        cloud = mix_requests.Cloud(app, args.nodes, args.aggregates)
        measure(cloud, 1)                       # warm caches
        found = measure(cloud, args.rounds)
        print('%s, %d nodes, %d rounds' % (
            sa.engine.make_url(url).get_backend_name(), args.nodes,
            args.rounds))
        for line in report(found, args.show):
            print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
