"""Clouds written straight into a database with bulk SQL, for sizes the
API would take hours to load.

``bulk_load`` writes rows exactly as the API leaves them for what
``cloud_api`` creates (the same uuids, names, generations, inventory
defaults, traits and aggregates), reading the schema from the database,
so that upstream's database can be filled alike. ``fill_compute_nodes``
writes ours only, through our tables: compute nodes with random uuids,
every other one with an allocation.
"""

import datetime
import uuid

import sqlalchemy as sa

from benchmarks.toolkit import cloud_api
from placement import context
from placement.db import api as db_api
from placement.db import tables
from placement.objects import resource_class
from placement.objects import trait

MAX_INT = 2147483647


def _inventory(rc, total, ratio=1.0):
    return {'resource_class': rc, 'total': total, 'reserved': 0,
            'min_unit': 1, 'max_unit': MAX_INT, 'step_size': 1,
            'allocation_ratio': ratio}


def flat_providers(n):
    """(name, parent name, inventories, traits, aggregate names) per
    provider, parents before children."""
    for i in range(n):
        yield ('flat-%d-cn%d' % (n, i), None,
               [_inventory('VCPU', 32, 16.0), _inventory('MEMORY_MB', 131072),
                _inventory('DISK_GB', 2000)],
               ['HW_CPU_X86_AVX2'], ['flat-agg-%d' % (i % 3)])


def nested_providers(t):
    for i in range(t):
        cn = 'nested-%d-cn%d' % (t, i)
        yield cn, None, [], [], []
        for numa in range(2):
            nn = '%s-numa%d' % (cn, numa)
            yield nn, cn, [_inventory('VCPU', 16),
                           _inventory('MEMORY_MB', 65536)], [], []
            for dev in range(2):
                yield ('%s-dev%d' % (nn, dev), nn,
                       [_inventory('SRIOV_NET_VF', 8),
                        _inventory('NET_BW_EGR_KILOBIT_PER_SEC', 10000000)],
                       [], [])


def _max_id(conn, table):
    return conn.execute(sa.select(sa.func.coalesce(
        sa.func.max(table.c.id), 0))).scalar()


def bulk_load(url, providers):
    """Insert ``providers`` into the (migrated, name-synced) database at
    ``url`` with a few executemany statements; return how many. Their
    names and aggregates must be new to it."""
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    names = ['resource_providers', 'inventories', 'traits',
             'resource_classes', 'resource_provider_traits',
             'placement_aggregates', 'resource_provider_aggregates']
    meta.reflect(engine, only=names)
    t = meta.tables
    now = datetime.datetime.utcnow().replace(microsecond=0)
    with engine.begin() as conn:
        classes = dict(conn.execute(sa.select(
            t['resource_classes'].c.name, t['resource_classes'].c.id)).all())
        traits = dict(conn.execute(sa.select(
            t['traits'].c.name, t['traits'].c.id)).all())
        start = _max_id(conn, t['resource_providers'])
        first_aggregate = _max_id(conn, t['placement_aggregates']) + 1
        aggregates = {}
        ids = {}
        rps, invs, rp_traits, rp_aggs = [], [], [], []
        for name, parent, inventories, trait_names, agg_names in providers:
            rp = ids[name] = start + len(ids) + 1
            parent_id = ids[parent] if parent else None
            root = rp if parent is None else rps[parent_id - start - 1][
                'root_provider_id']
            # One generation bump per PUT the API loader makes.
            generation = sum(map(bool, (inventories, trait_names,
                                        agg_names)))
            rps.append({'id': rp, 'uuid': cloud_api.ident(name), 'name': name,
                        'generation': generation, 'root_provider_id': root,
                        'parent_provider_id': parent_id, 'created_at': now,
                        'updated_at': now if generation else None})
            for inv in inventories:
                row = dict(inv, resource_provider_id=rp, created_at=now)
                row['resource_class_id'] = classes[row.pop('resource_class')]
                invs.append(row)
            rp_traits += [{'resource_provider_id': rp,
                           'trait_id': traits[trait], 'created_at': now}
                          for trait in trait_names]
            for agg in agg_names:
                aggregates.setdefault(agg, first_aggregate + len(aggregates))
                rp_aggs.append({'resource_provider_id': rp,
                                'aggregate_id': aggregates[agg],
                                'created_at': now})
        if aggregates:
            conn.execute(t['placement_aggregates'].insert(), [
                {'id': i, 'uuid': cloud_api.ident(name), 'created_at': now}
                for name, i in aggregates.items()])
        for table, rows in (('resource_providers', rps),
                            ('inventories', invs),
                            ('resource_provider_traits', rp_traits),
                            ('resource_provider_aggregates', rp_aggs)):
            for chunk in range(0, len(rows), 20000):
                conn.execute(t[table].insert(), rows[chunk:chunk + 20000])
        if engine.dialect.name == 'postgresql':
            # Ids were given: move the sequences past them, as inserts
            # by the API would have.
            for table in ('resource_providers', 'placement_aggregates'):
                conn.execute(sa.text(
                    "SELECT setval(pg_get_serial_sequence(:table, 'id'), "
                    "(SELECT COALESCE(MAX(id), 0) + 1 FROM %s), false)"
                    % table), {'table': table})
    engine.dispose()
    return len(rps)


CLASSES = {'VCPU': (32, 0, 16.0), 'MEMORY_MB': (131072, 2048, 1.0),
           'DISK_GB': (2000, 0, 1.0)}


def fill_compute_nodes(db, providers, aggregates):
    """``providers`` compute nodes with VCPU, MEMORY_MB and DISK_GB, each
    in one of ``aggregates`` aggregates, every other one with an
    allocation, in our database ``db`` (migrated, empty)."""
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
