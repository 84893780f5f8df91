"""Database size: ours and upstream Placement for the same cloud.

Both servers start on fresh databases (``benchmarks.toolkit.servers``; SQLite,
or PostgreSQL / MariaDB through ``tools/with-postgresql.sh`` /
``tools/with-mysql.sh``) and each is loaded through its own API with
the same cloud, so that each database holds what its own writes leave
(dead rows, page splits), not a copy of the other's::

    tools/with-postgresql.sh .venv/bin/python -m benchmarks.db_size \\
        --shape flat --nodes 1000 --seconds 480 --rate 5
    tools/with-mysql.sh .venv/bin/python -m benchmarks.db_size \\
        --bulk --nodes 10000 --seconds 480 --rate 5

The cloud (``--shape``, ``flat`` or ``nested``) is
``benchmarks.cloud_traffic``'s: ``--nodes`` computes in 10 aggregates
with their sharing providers, ``--instances-per-node`` instances each
(0: the perfload shape, providers with inventories, traits and
aggregates and no allocations). ``--bulk`` writes the flat providers
of ``benchmarks.toolkit.cloud_rows`` by SQL instead (minutes less for
10,000 computes; ours' triggers log them as they would the API's
writes). Then, for ``--seconds``, ``--rate`` boot-and-delete cycles a
second on both servers at once (``PUT /allocations`` of a new consumer
on a node, candidates for one instance, ``DELETE`` of the consumer)
add the history a running cloud's writes leave: the change log's rows.
Ours prunes its log six minutes after a row was logged
(``placement.db.changes``), so runs of more than that show a steady
cloud.

It prints, per server, the size of every table and index (PostgreSQL:
``pg_table_size`` of each relation; MySQL/MariaDB: InnoDB's persistent
statistics after ``ANALYZE TABLE``, pages times the page size; SQLite:
the ``dbstat`` table) after the load and after the writes, and the
totals and their ratio.
"""

import argparse
import collections
import concurrent.futures
import random
import sqlite3
import sys
import time

import sqlalchemy as sa

from benchmarks import cloud_traffic
from benchmarks.toolkit import cloud_api
from benchmarks.toolkit import cloud_rows
from benchmarks.toolkit import labels
from benchmarks.toolkit import servers

Relation = collections.namedtuple('Relation', ['table', 'name', 'bytes'])


# -- sizes --------------------------------------------------------------------

def _postgresql(conn):
    conn.execute(sa.text('CHECKPOINT'))
    rows = conn.execute(sa.text(
        "SELECT coalesce(t.relname, c.relname), c.relname, "
        "pg_table_size(c.oid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_index i ON i.indexrelid = c.oid "
        "LEFT JOIN pg_class t ON t.oid = i.indrelid "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i')"))
    return [Relation(*row) for row in rows]


def _mysql(conn):
    tables = [name for (name,) in conn.execute(sa.text(
        'SELECT table_name FROM information_schema.tables '
        'WHERE table_schema = DATABASE()'))]
    for table in tables:
        conn.execute(sa.text('ANALYZE TABLE `%s`' % table)).all()
    page = conn.execute(sa.text('SELECT @@innodb_page_size')).scalar()
    rows = conn.execute(sa.text(
        "SELECT table_name, index_name, stat_value FROM "
        "mysql.innodb_index_stats WHERE database_name = DATABASE() "
        "AND stat_name = 'size'"))
    # The clustered index (PRIMARY) holds the rows: it is the table.
    return [Relation(table, table if index == 'PRIMARY' else index,
                     pages * page) for table, index, pages in rows]


def _sqlite(path):
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            'SELECT m.tbl_name, s.name, sum(s.pgsize) FROM dbstat s '
            'JOIN sqlite_master m ON m.name = s.name GROUP BY s.name'
        ).fetchall()
        free = conn.execute('PRAGMA freelist_count').fetchone()[0] * \
            conn.execute('PRAGMA page_size').fetchone()[0]
    finally:
        conn.close()
    return [Relation(*row) for row in rows] + [
        Relation('(free pages)', '(free pages)', free)]


def relations(url):
    """[Relation] of every table and index of the database at ``url``
    (a table's own row: ``name == table``)."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == 'sqlite':
        return _sqlite(parsed.database)
    engine = sa.create_engine(url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as conn:
            if engine.dialect.name == 'postgresql':
                return _postgresql(conn)
            return _mysql(conn)
    finally:
        engine.dispose()


def log_rows(url):
    """(rows in our change log, its newest id: rows ever logged), or
    None: no such table."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table('provider_change_log'):
                return None
            return tuple(conn.execute(sa.text(
                'SELECT count(*), coalesce(max(id), 0) '
                'FROM provider_change_log')).one())
    finally:
        engine.dispose()


def report(when, found):
    """Print per table (its indexes indented) every server's sizes."""
    print('\n== %s' % when)
    servers_shown = list(found)
    by_name = {label: {(r.table, r.name): r.bytes for r in rels}
               for label, (rels, _rows) in found.items()}
    keys = sorted(set().union(*by_name.values()),
                  key=lambda k: (k[0], k[0] != k[1], k[1]))
    print('%-52s %s' % ('relation', ' '.join(
        '%12s' % (label + ' KiB') for label in servers_shown)))
    for table, name in keys:
        shown = name if name == table else '  ' + name
        print('%-52s %s' % (shown[:52], ' '.join(
            '%12s' % ('%.0f' % (by_name[label][(table, name)] / 1024)
                      if (table, name) in by_name[label] else '-')
            for label in servers_shown)))
    totals = {label: sum(by_name[label].values()) for label in servers_shown}
    print('%-52s %s' % ('total', ' '.join(
        '%12.0f' % (totals[label] / 1024) for label in servers_shown)))
    upstream = totals.get(labels.UPSTREAM)
    for label in servers_shown:
        if label == labels.UPSTREAM:
            continue
        rels, (rows, logged) = found[label]
        log = sum(r.bytes for r in rels if r.table == 'provider_change_log')
        line = '%s: change log %d rows of %d ever logged, %.0f KiB' % (
            label, rows, logged, log / 1024)
        if upstream:
            line += '; total %.2f x upstream' % (totals[label] / upstream)
        print(line, flush=True)


# -- the cloud ----------------------------------------------------------------

class Cloud:
    """What ``--shape`` loads into a server, and the writes after."""

    def __init__(self, args):
        self.args = args
        self.topology = cloud_traffic.Topology(args.shape, args.nodes,
                                               args.aggregates)

    def client(self, url):
        return cloud_api.Client(url, 'admin', 120)

    def load(self, label, url):
        """The cloud through the API, as its computes would write it."""
        client = self.client(url)
        cloud_api.load(client, self.topology.jobs(), self.args.threads, label)
        placed = [(cloud_api.ident('size-%s-%d-%d' % (label, node, i)), node)
                  for node in range(self.args.nodes)
                  for i in range(self.args.instances_per_node)]
        batch = cloud_traffic.POPULATE_BATCH
        with concurrent.futures.ThreadPoolExecutor(self.args.threads) as pool:
            list(pool.map(lambda some: client.write(
                'POST', '/allocations', {
                    consumer: cloud_traffic.claim_body(
                        self.allocation(node), cloud_traffic.PROJECTS[0],
                        None)
                    for consumer, node in some}),
                [placed[i:i + batch] for i in range(0, len(placed), batch)]))

    def bulk_load(self, label, url, database):
        """The flat providers of ``benchmarks.toolkit.cloud_rows``, by
        SQL (ours' triggers log them as they would the API's writes)."""
        client = self.client(url)
        for path in ('/traits', '/resource_classes'):
            client.get(path)  # the standard names, synced on first use
        start = time.monotonic()
        count = cloud_rows.bulk_load(database,
                                cloud_rows.flat_providers(self.args.nodes))
        print('%s: %d providers written in %.1f s' % (
            label, count, time.monotonic() - start), flush=True)

    def allocation(self, node):
        if self.args.bulk:
            name = 'flat-%d-cn%d' % (self.args.nodes, node)
            return {cloud_api.ident(name): {
                'resources': dict(cloud_traffic.FLAVOUR)}}
        return self.topology.allocation(node)

    def writes(self, label, url):
        """Boot-and-delete cycles, ``--rate`` a second for ``--seconds``
        (a server that falls behind by half of that skips cycles):
        (cycles run, seconds taken)."""
        client = self.client(url)
        rng = random.Random(self.args.seed)
        start = time.monotonic()
        count = int(self.args.rate * self.args.seconds)

        def cycle(number):
            delay = start + number / self.args.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -self.args.seconds / 2:
                return 0  # behind by half the run: not started, counted
            consumer = cloud_api.ident('size-write-%s-%d' % (label, number))
            client.write('PUT', '/allocations/' + consumer,
                         cloud_traffic.claim_body(
                             self.allocation(rng.randrange(self.args.nodes)),
                             cloud_traffic.PROJECTS[0], None))
            client.get('/allocation_candidates?resources=VCPU:1&limit=1')
            client.write('DELETE', '/allocations/' + consumer,
                         ok=(204, 404))
            return 1
        with concurrent.futures.ThreadPoolExecutor(self.args.threads) as pool:
            done = sum(pool.map(cycle, range(count)))
        return done, time.monotonic() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--shape', choices=['flat', 'nested'],
                        default='flat')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--aggregates', type=int, default=10)
    parser.add_argument('--instances-per-node', type=int, default=1)
    parser.add_argument('--bulk', action='store_true',
                        help='write the flat providers of '
                        'benchmarks.toolkit.cloud_rows by SQL instead (no '
                        'instances)')
    parser.add_argument('--rate', type=float, default=5.0,
                        help='write cycles a second, per server')
    parser.add_argument('--seconds', type=float, default=0.0,
                        help='seconds of write cycles (both servers at '
                        'once)')
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--ours-only', action='store_true')
    args = parser.parse_args(argv)
    cloud = Cloud(args)
    with servers.side_by_side(
            workers=args.workers, with_upstream=not args.ours_only,
            prepare=None if args.bulk else cloud.load,
            copy=False) as served:
        if args.bulk:
            for server in served:
                cloud.bulk_load(server.label, server.url, server.database)

        def measure(when):
            # A read first, as any scheduler's: ours' readers prune.
            for server in served:
                cloud.client(server.url).get(
                    '/allocation_candidates?resources=VCPU:1&limit=1')
            report(when, {s.label: (relations(s.database),
                                    log_rows(s.database)) for s in served})
        measure('after loading %s %d' % (args.shape, args.nodes))
        if args.seconds:
            with concurrent.futures.ThreadPoolExecutor(len(served)) as pool:
                done = list(pool.map(lambda s: cloud.writes(s.label, s.url),
                                     served))
            for server, (count, seconds) in zip(served, done):
                print('%s: %d write cycles in %.1f s' % (
                    server.label, count, seconds), flush=True)
            measure('after %.0f s of write cycles' % args.seconds)
    return 0


if __name__ == '__main__':
    sys.exit(main())
