"""What the change log's triggers cost an allocation write, per form.

Two databases on one server get the head schema; one of them then gets
the row triggers back (``triggers.create_triggers(statement_level=
False)``, the form of revision 8c49c564818b). On PostgreSQL the other
keeps the head's statement triggers; elsewhere both forms are the same,
which shows the noise floor. Each round claims three classes on one of
20 computes for ``--writes`` new consumers, one write each (in process,
the object layer, no HTTP), then deletes them; rounds alternate between
the databases, in alternating order. It prints per form the median
time of a claim and of a delete, the database server's CPU per write
(all its processes, ``schedstat``) and the log rows per claim and per
delete, then per round the ratio of the head's form to the row form::

    tools/with-postgresql.sh .venv/bin/python -m benchmarks.trigger_cost \\
        --writes 300 --rounds 12
"""

import argparse
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
from placement.db import triggers
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures

#: The trigger forms compared: label -> ``statement_level``.
FORMS = {'row': False, 'head': True}
CLAIM = {'VCPU': 1, 'MEMORY_MB': 8, 'DISK_GB': 1}
COMPUTES = 20


def _database(url, label, statement_level):
    """(context, computes) of a new database with ``label``'s triggers."""
    db = db_api.Database(fixtures.create_server_database(
        url, 'trigger_cost_' + label))
    migration.create_schema_for_tests(db)
    with db.engine.begin() as conn:
        triggers.drop_triggers(conn)
        triggers.create_triggers(conn, statement_level=statement_level)
    ctx = context.AdminContext(db)
    computes = []
    for number in range(COMPUTES):
        rp = rp_obj.create(ctx, str(uuid.uuid4()), 'cn%d' % number, None)
        inv_obj.replace_all(ctx, rp, {rc: {'total': 10 ** 6}
                                      for rc in CLAIM})
        computes.append(rp)
    return ctx, computes


def _newest_logged(ctx):
    with ctx.db.engine.connect() as conn:
        return conn.execute(sa.select(
            sa.func.max(tables.provider_change_log.c.id))).scalar()


def _round(ctx, computes, writes, server):
    """{figure: value} of one round of claims and deletes."""
    consumers = [str(uuid.uuid4()) for _ in range(writes)]
    first = _newest_logged(ctx)
    cpu = server.exact_cpu_seconds()
    start = time.perf_counter()
    for number, consumer in enumerate(consumers):
        alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
            dict(uuid=consumer, project='project', user='user'),
            {computes[number % COMPUTES].uuid: dict(CLAIM)})], 0)
    claimed = time.perf_counter()
    middle = _newest_logged(ctx)
    for consumer in consumers:
        alloc_obj.delete_by_consumer(ctx, consumer)
    deleted = time.perf_counter()
    cpu = server.exact_cpu_seconds() - cpu
    return {'claim ms': (claimed - start) * 1000 / writes,
            'delete ms': (deleted - claimed) * 1000 / writes,
            'database CPU ms per write': cpu * 1000 / (2 * writes),
            'log rows per claim': (middle - first) / writes,
            'log rows per delete': (_newest_logged(ctx) - middle) / writes}


def main(argv=None, out=sys.stdout):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--writes', type=int, default=300,
                        help='claims (and deletes) per round')
    parser.add_argument('--rounds', type=int, default=12)
    args = parser.parse_args(argv)
    server = db_server.from_environment()
    if server is None:
        parser.error('needs a database server: run it under '
                     'tools/with-postgresql.sh or tools/with-mysql.sh')
    try:
        url = str(server.urls[0].render_as_string(hide_password=False))
        databases = {label: _database(url, label, statement_level)
                     for label, statement_level in FORMS.items()}
        found = {label: [] for label in FORMS}
        for number in range(args.rounds):
            order = list(databases.items())
            if number % 2:
                order.reverse()
            for label, (ctx, computes) in order:
                found[label].append(_round(ctx, computes, args.writes,
                                           server))
        _report(found, out)
    finally:
        server.close()
    return 0


def _report(found, out):
    figures = list(found['row'][0])
    for label, rounds in found.items():
        out.write('%s triggers: %s\n' % (
            label, '; '.join(
                '%s %.3f' % (figure, statistics.median(
                    r[figure] for r in rounds)) for figure in figures)))
    for figure in figures[:3]:
        ratios = [head[figure] / row[figure]
                  for row, head in zip(found['row'], found['head'])]
        out.write('head / row, %s: median %.3f (rounds %s)\n' % (
            figure, statistics.median(ratios),
            ' '.join('%.2f' % ratio for ratio in ratios)))


if __name__ == '__main__':
    sys.exit(main())
