"""Database CPU of the reads behind ``GET /usages`` and ``GET
/allocations/{consumer}``, without HTTP or a worker in between.

A database on the server of ``tools/with-postgresql.sh`` or
``tools/with-mysql.sh`` gets the head schema and, written as rows,
``--nodes`` computes with one instance each (three classes on its
compute), the instances' consumers spread at random over ``--projects``
projects and three users, as ``benchmarks.cloud_traffic`` places them.
Each read is then called through the object layer (its reader
transaction and statement, as a request calls it) ``--loops`` times per
round, the reads interleaved, for ``--rounds`` rounds; it prints per
read the database server's CPU per call (all its processes,
``schedstat``) and this process's CPU per call, medians with the
spread of the rounds. The provider inventory read of the refresh GETs
is the floor a one-statement request costs the server::

    tools/with-mysql.sh .venv/bin/python -m benchmarks.read_statements
    tools/with-postgresql.sh .venv/bin/python -m benchmarks.read_statements

On MySQL/MariaDB it also prints the rows each read asked the storage
engine for (the server's global ``Handler_read_*`` counters around one
call, so run it on a server nothing else uses);
``--explain`` prints the server's own account of each usages statement
(``ANALYZE FORMAT=JSON`` on MariaDB, ``EXPLAIN (ANALYZE, BUFFERS)`` on
PostgreSQL).
"""

import argparse
import json
import random
import statistics
import sys
import time
import uuid

import sqlalchemy as sa

from benchmarks.toolkit import db_server
from placement import context
from placement.db import api as db_api
from placement.db import migration
from placement.db import tables
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_class
from placement.objects import usage as usage_obj
from placement.tests import fixtures

#: Each instance's claim on its compute, and the compute's inventory.
CLAIM = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
TOTALS = {'VCPU': 32, 'MEMORY_MB': 131072, 'DISK_GB': 2000}
TYPE = 'INSTANCE'


def _load(db, nodes, projects, rng):
    """(compute uuids, consumer uuids) of the cloud written into ``db``."""
    computes = [str(uuid.uuid4()) for _ in range(nodes)]
    consumers = [str(uuid.uuid4()) for _ in range(nodes)]
    with db.transaction(write=True) as conn:
        classes = dict(conn.execute(sa.select(
            tables.resource_classes.c.name,
            tables.resource_classes.c.id)).all())
        conn.execute(sa.insert(tables.projects), [
            {'id': n + 1, 'external_id': 'project-%d' % n}
            for n in range(projects)])
        conn.execute(sa.insert(tables.users), [
            {'id': n + 1, 'external_id': 'user-%d' % n} for n in range(3)])
        conn.execute(sa.insert(tables.consumer_types),
                     [{'id': 1, 'name': TYPE}])
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': n + 1, 'uuid': rp, 'name': 'cn%d' % n, 'generation': 1,
             'root_provider_id': n + 1} for n, rp in enumerate(computes)])
        conn.execute(sa.insert(tables.inventories), [
            {'resource_provider_id': n + 1, 'resource_class_id': classes[rc],
             'total': total, 'reserved': 0, 'min_unit': 1,
             'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
            for n in range(nodes) for rc, total in TOTALS.items()])
        conn.execute(sa.insert(tables.consumers), [
            {'id': n + 1, 'uuid': consumer,
             'project_id': rng.randrange(projects) + 1,
             'user_id': rng.randrange(3) + 1, 'consumer_type_id': 1,
             'generation': 1} for n, consumer in enumerate(consumers)])
        conn.execute(sa.insert(tables.allocations), [
            {'resource_provider_id': n + 1, 'consumer_id': consumer,
             'resource_class_id': classes[rc], 'used': used}
            for n, consumer in enumerate(consumers)
            for rc, used in CLAIM.items()])
    with db.engine.connect() as conn:
        names = 'allocations, consumers, projects, inventories'
        if db.dialect == 'postgresql':
            conn.execution_options(isolation_level='AUTOCOMMIT') \
                .exec_driver_sql('VACUUM ANALYZE ' + names)
        else:
            conn.exec_driver_sql('ANALYZE TABLE ' + names).all()
    return computes, consumers


def reads(computes, consumers, rng):
    """{label: function(ctx)} of the reads measured: a compute's or a
    consumer's picked at random, the usages of ``project-0``."""
    return {
        'provider inventories (floor)': lambda ctx: (
            inv_obj.get_provider_inventories(ctx, rng.choice(computes))),
        'allocations of a consumer': lambda ctx: (
            alloc_obj.get_by_consumer(ctx, rng.choice(consumers))),
        'usages at 1.9': lambda ctx: usage_obj.totals(ctx, 'project-0'),
        'usages by type (1.38)': lambda ctx: (
            usage_obj.by_consumer_type(ctx, 'project-0')),
        'usages, consumer_type=all': lambda ctx: (
            usage_obj.by_consumer_type(ctx, 'project-0', consumer_type='all')),
    }


def _handler_reads(db, read, ctx):
    """{counter: rows} the storage engine was asked for by one call of
    ``read`` (MySQL/MariaDB): the server's counters, nothing else
    running on it, less what reading them costs."""
    def counters():
        with db.engine.connect() as conn:
            return {name.replace('Handler_read_', ''): int(value)
                    for name, value in conn.exec_driver_sql(
                        "SHOW GLOBAL STATUS LIKE 'Handler_read%%'")}

    first = counters()
    read(ctx)
    second = counters()
    third = counters()
    spent = {name: second[name] - first[name]
             - (third[name] - second[name]) for name in first}
    return {name: rows for name, rows in spent.items() if rows}


def _explain(db, out):
    """The server's account of the usage statements on project-0."""
    for label, statement in (
            ('usages by type', usage_obj._by_type(False, None, True)[0]),
            ('usages at 1.9', usage_obj._totals(False))):
        compiled = statement._for(db.engine.dialect)
        values = compiled.parameters({'project': 'project-0', 'user': None,
                                      'consumer_type': None})
        prefix = ('ANALYZE FORMAT=JSON ' if db.dialect == 'mysql'
                  else 'EXPLAIN (ANALYZE, BUFFERS) ')
        with db.engine.connect() as conn:
            rows = conn.exec_driver_sql(prefix + compiled.sql, values).all()
        out.write('-- %s\n' % label)
        if db.dialect == 'mysql':
            out.write(json.dumps(json.loads(rows[0][0]), indent=1) + '\n')
        else:
            out.write('\n'.join(row[0] for row in rows) + '\n')


def main(argv=None, out=sys.stdout):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--projects', type=int, default=3)
    parser.add_argument('--loops', type=int, default=200,
                        help='calls of each read per round')
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--explain', action='store_true')
    args = parser.parse_args(argv)
    server = db_server.from_environment()
    if server is None:
        parser.error('needs a database server: run it under '
                     'tools/with-postgresql.sh or tools/with-mysql.sh')
    rng = random.Random(1)
    url = server.urls[0].render_as_string(hide_password=False)
    db = db_api.Database(fixtures.create_server_database(
        url, 'read_statements'))
    try:
        migration.create_schema_for_tests(db)
        ctx = context.AdminContext(db)
        resource_class.sync_standard(ctx)
        computes, consumers = _load(db, args.nodes, args.projects, rng)
        measured = reads(computes, consumers, rng)
        held = usage_obj.by_consumer_type(ctx, 'project-0')
        out.write('%d computes, %d consumers in %d projects; project-0 '
                  'holds %d of them\n' % (
                      args.nodes, len(consumers), args.projects,
                      held.get(TYPE, {}).get('consumer_count', 0)))
        found = {label: [] for label in measured}
        for read in measured.values():
            read(ctx)  # statements compiled, connection pooled
        for _ in range(args.rounds):
            for label, read in measured.items():
                database = server.exact_cpu_seconds()
                client = time.process_time()
                for _ in range(args.loops):
                    read(ctx)
                found[label].append((
                    (server.exact_cpu_seconds() - database) / args.loops,
                    (time.process_time() - client) / args.loops))
        out.write('per call, median (lowest-highest round), ms:\n')
        for label, rounds in found.items():
            figures = []
            for index, name in ((0, 'database CPU'), (1, 'client CPU')):
                values = [r[index] * 1000 for r in rounds]
                figures.append('%s %.3f (%.3f-%.3f)' % (
                    name, statistics.median(values), min(values),
                    max(values)))
            line = '  %-30s %s' % (label, ', '.join(figures))
            if db.dialect == 'mysql':
                line += '; handler reads %s' % ' '.join(
                    '%s=%d' % item for item in sorted(
                        _handler_reads(db, measured[label], ctx).items()))
            out.write(line + '\n')
        if args.explain:
            _explain(db, out)
    finally:
        db.dispose()
        server.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
