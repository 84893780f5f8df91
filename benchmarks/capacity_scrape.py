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
import uuid

import sqlalchemy as sa
import webob

from benchmarks.toolkit import inprocess
from placement import context
from placement.db import api as db_api
from placement.db import tables
from placement.objects import resource_class
from placement.objects import trait

CLASSES = {'VCPU': (32, 0, 16.0), 'MEMORY_MB': (131072, 2048, 1.0),
           'DISK_GB': (2000, 0, 1.0)}


def fill(db, providers, aggregates):
    ctx = context.AdminContext(db)
    resource_class.sync_standard(ctx)
    trait.sync_standard(ctx)
    now = db_api.utcnow()
    with db.transaction(write=True) as conn:
        rc_ids = dict(conn.execute(sa.select(
            tables.resource_classes.c.name,
            tables.resource_classes.c.id)).all())
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': i, 'uuid': str(uuid.uuid4()), 'name': 'cn-%05d' % i,
             'generation': 1, 'root_provider_id': i, 'created_at': now}
            for i in range(1, providers + 1)])
        conn.execute(sa.insert(tables.inventories), [
            {'resource_provider_id': i, 'resource_class_id': rc_ids[rc],
             'total': total, 'reserved': reserved, 'min_unit': 1,
             'max_unit': total, 'step_size': 1, 'allocation_ratio': ratio,
             'created_at': now}
            for i in range(1, providers + 1)
            for rc, (total, reserved, ratio) in CLASSES.items()])
        conn.execute(sa.insert(tables.placement_aggregates), [
            {'id': a, 'uuid': str(uuid.uuid4()), 'created_at': now}
            for a in range(1, aggregates + 1)])
        conn.execute(sa.insert(tables.resource_provider_aggregates), [
            {'resource_provider_id': i,
             'aggregate_id': i % aggregates + 1, 'created_at': now}
            for i in range(1, providers + 1)])
        conn.execute(sa.insert(tables.projects),
                     [{'id': 1, 'external_id': 'bench', 'created_at': now}])
        conn.execute(sa.insert(tables.users),
                     [{'id': 1, 'external_id': 'bench', 'created_at': now}])
        consumers = [(i, str(uuid.uuid4()))
                     for i in range(1, providers + 1, 2)]
        conn.execute(sa.insert(tables.consumers), [
            {'uuid': c, 'project_id': 1, 'user_id': 1, 'generation': 1,
             'created_at': now} for _i, c in consumers])
        conn.execute(sa.insert(tables.allocations), [
            {'resource_provider_id': i, 'consumer_id': c,
             'resource_class_id': rc_ids[rc], 'used': used,
             'created_at': now}
            for i, c in consumers
            for rc, used in (('VCPU', 8), ('MEMORY_MB', 16384),
                             ('DISK_GB', 80))])


def time_get(app, path, repeat):
    times, size = [], 0
    for _ in range(repeat):
        req = webob.Request.blank(path, remote_addr='127.0.0.1')
        start = time.perf_counter()
        resp = req.get_response(app)
        times.append(time.perf_counter() - start)
        assert resp.status_int == 200, resp.text[:300]
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
        fill(db, args.providers, args.aggregates)
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
