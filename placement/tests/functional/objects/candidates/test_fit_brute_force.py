"""GET /capacity/fit against brute force on many random small fleets.

Each seed builds a fleet (flat hosts, nested hosts with two NUMA nodes
and a PF, sharing providers; traits, aggregates, every inventory field,
usage already there, some of it beyond capacity) with bulk SQL, picks a
candidates query, and compares the fit with the largest number of
simultaneous instances an exhaustive search finds among the candidates
GET /allocation_candidates returns, with the capacity of each provider
worked out from the fleet's own numbers. The best set the search found
for the whole fleet is then written through PUT /allocations, one
consumer per instance (every write must succeed), after which GET
/allocation_candidates must find nothing more: the search's model of
what fits is the allocation path's.

``limited_by`` is checked too: for the trees holding an instance, over
their candidates; for the full ones, over the candidates GET
/allocation_candidates finds once every inventory is made unlimited
(any amount, any usage), each class's units and room judged on its own
(api-ref/capacity-fit.rst).

``PLACEMENT_FIT_FLEETS`` sets the number of fleets (default 1,000).
"""

import collections
import os
import random
import uuid

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement.objects import capacity as capacity_rule
from placement.tests import fixtures

FLEETS = int(os.environ.get('PLACEMENT_FIT_FLEETS', '1000'))
#: Fleets per test (each test gets a fresh database).
CHUNK = 250

DISABLED = 'COMPUTE_STATUS_DISABLED'
FAST = 'HW_CPU_X86_AVX2'
SRIOV = 'HW_NIC_SRIOV'
SHARES = 'MISC_SHARES_VIA_AGGREGATE'


# -- random fleets ------------------------------------------------------------

class Provider:
    def __init__(self, fleet, name, parent=None):
        self.id = fleet.next_id()
        self.uuid = str(uuid.uuid4())
        self.name = name
        self.parent = parent
        self.root = parent.root if parent else self
        self.inventories = {}
        self.used = {}
        self.traits = set()
        self.aggregates = set()


def _record(rng, amount_hint):
    """An inventory record, mostly roomy, every field sometimes odd."""
    total = rng.randint(2, 7)
    odd = rng.random() < 0.12
    step = rng.choice([1, 2]) if odd else 1
    return {'total': total,
            'reserved': rng.choice([1, total]) if odd else 0,
            'min_unit': rng.choice([1, 2]) if odd else 1,
            'max_unit': rng.choice([1, amount_hint, 3]) if odd else total,
            'step_size': step,
            'allocation_ratio': rng.choice([1.0, 1.0, 1.5, 2.0, 0.5])}


def capacity(record):
    return int((record['total'] - record['reserved'])
               * record['allocation_ratio'])


class Fleet:
    """A random fleet, as plain values."""

    def __init__(self, rng, ids):
        self.rng = rng
        self._ids = ids
        self.providers = []
        self.aggregates = [str(uuid.uuid4()) for _ in range(2)]
        shape = rng.choice(['flat', 'nested', 'sharing', 'mixed'])
        for i in range(rng.randint(1, 3)):
            nested = shape == 'nested' or (shape == 'mixed' and i % 2)
            self._host(i, nested)
        if shape in ('sharing', 'mixed'):
            for i in range(rng.randint(1, 2)):
                pool = self._add('pool%d' % i)
                pool.inventories['DISK_GB'] = _record(rng, 2)
                pool.traits.add(SHARES)
                pool.aggregates.add(rng.choice(self.aggregates))
        for provider in self.providers:
            for rc, record in provider.inventories.items():
                cap = capacity(record)
                # Mostly room left, sometimes full or beyond capacity.
                provider.used[rc] = rng.choice(
                    [0] * 14 + [1] * 6 + [max(cap - 1, 0), cap, cap + 1])

    def next_id(self):
        return next(self._ids)

    def _add(self, name, parent=None):
        provider = Provider(self, name, parent)
        self.providers.append(provider)
        return provider

    def _host(self, i, nested):
        rng = self.rng
        root = self._add('cn%d' % i)
        if rng.random() < 0.25:
            root.traits.add(DISABLED)
        if rng.random() < 0.5:
            root.traits.add(FAST)
        for aggregate in self.aggregates:
            if rng.random() < 0.5:
                root.aggregates.add(aggregate)
        if not nested:
            root.inventories['VCPU'] = _record(rng, 1)
            root.inventories['MEMORY_MB'] = _record(rng, 2)
            if rng.random() < 0.5:
                root.inventories['DISK_GB'] = _record(rng, 2)
            return
        if rng.random() < 0.5:
            root.inventories['DISK_GB'] = _record(rng, 2)
        numas = []
        for n in range(2):
            numa = self._add('cn%d-numa%d' % (i, n), root)
            numa.inventories['VCPU'] = _record(rng, 1)
            numa.inventories['MEMORY_MB'] = _record(rng, 2)
            numas.append(numa)
        pf = self._add('cn%d-pf' % i, rng.choice(numas + [root]))
        pf.inventories['SRIOV_NET_VF'] = _record(rng, 1)
        pf.traits.add(SRIOV)

    def query(self):
        """A random candidates query over this fleet."""
        rng = self.rng
        vcpu, mem, disk = rng.randint(1, 2), rng.randint(1, 3), rng.randint(
            1, 2)
        kinds = ['plain', 'split']
        if any(p.parent for p in self.providers):
            kinds += ['isolate', 'device', 'subtree', 'plain']
        if any('DISK_GB' in p.inventories for p in self.providers):
            kinds += ['disk', 'disk']
        kind = rng.choice(kinds)
        if kind == 'plain':
            query = 'resources=VCPU:%d,MEMORY_MB:%d' % (vcpu, mem)
        elif kind == 'disk':
            query = 'resources=VCPU:%d,DISK_GB:%d' % (vcpu, disk)
        elif kind == 'isolate':
            query = ('resources1=VCPU:%d&resources2=VCPU:1'
                     '&group_policy=isolate' % vcpu)
        elif kind == 'device':
            query = ('resources=VCPU:%d&resources1=SRIOV_NET_VF:1'
                     '&required1=%s&group_policy=none' % (vcpu, SRIOV))
        elif kind == 'subtree':
            query = ('resources_C=VCPU:%d,MEMORY_MB:%d'
                     '&resources_N=SRIOV_NET_VF:1&same_subtree=_C,_N'
                     '&group_policy=%s' % (vcpu, mem, rng.choice(
                         ['none', 'isolate'])))
        else:
            query = ('resources1=VCPU:%d&resources2=VCPU:%d,MEMORY_MB:%d'
                     '&group_policy=none' % (vcpu, 1, mem))
        first = query.split('=', 1)[0][len('resources'):]
        extra = rng.random()
        if extra < 0.3:
            # Where nova puts it: on the unsuffixed group, else the root.
            query += '&%s=!%s' % (
                'required' if query.startswith('resources=')
                else 'root_required', DISABLED)
        elif extra < 0.4:
            query += '&root_required=%s' % FAST
        elif extra < 0.5:
            query += '&member_of%s=%s' % (first, self.aggregates[0])
        elif extra < 0.55:
            query += '&member_of%s=!%s' % (first, self.aggregates[1])
        return query

    def free(self):
        """{(provider uuid, class): what is free}, from the numbers."""
        return {(p.uuid, rc): capacity(record) - p.used[rc]
                for p in self.providers
                for rc, record in p.inventories.items()}


# -- writing a fleet with bulk SQL --------------------------------------------

def write(db, fleet):
    now = db_api.utcnow()
    with db.transaction(write=True) as conn:
        rc_ids = dict(conn.execute(sa.select(
            tables.resource_classes.c.name,
            tables.resource_classes.c.id)).all())
        trait_ids = dict(conn.execute(sa.select(
            tables.traits.c.name, tables.traits.c.id)).all())
        conn.execute(sa.insert(tables.placement_aggregates), [
            {'uuid': a, 'created_at': now} for a in fleet.aggregates])
        agg_ids = dict(conn.execute(sa.select(
            tables.placement_aggregates.c.uuid,
            tables.placement_aggregates.c.id)).all())
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': p.id, 'uuid': p.uuid, 'name': p.name + p.uuid[:8],
             'generation': 1, 'root_provider_id': p.root.id,
             'parent_provider_id': p.parent.id if p.parent else None,
             'created_at': now} for p in fleet.providers])
        rows = [dict(record, resource_provider_id=p.id,
                     resource_class_id=rc_ids[rc], created_at=now)
                for p in fleet.providers
                for rc, record in p.inventories.items()]
        conn.execute(sa.insert(tables.inventories), rows)
        traits = [{'resource_provider_id': p.id, 'trait_id': trait_ids[t],
                   'created_at': now}
                  for p in fleet.providers for t in p.traits]
        if traits:
            conn.execute(sa.insert(tables.resource_provider_traits), traits)
        members = [{'resource_provider_id': p.id,
                    'aggregate_id': agg_ids[a], 'created_at': now}
                   for p in fleet.providers for a in p.aggregates]
        if members:
            conn.execute(sa.insert(tables.resource_provider_aggregates),
                         members)
        used = [(p, rc, amount) for p in fleet.providers
                for rc, amount in p.used.items() if amount]
        if used:
            project = _external_id(conn, tables.projects, 'fit-project')
            user = _external_id(conn, tables.users, 'fit-user')
            consumer = str(uuid.uuid4())
            conn.execute(sa.insert(tables.consumers), [
                {'uuid': consumer, 'project_id': project, 'user_id': user,
                 'generation': 1, 'created_at': now}])
            conn.execute(sa.insert(tables.allocations), [
                {'resource_provider_id': p.id, 'consumer_id': consumer,
                 'resource_class_id': rc_ids[rc], 'used': amount,
                 'created_at': now} for p, rc, amount in used])


def _external_id(conn, table, name):
    found = conn.execute(sa.select(table.c.id).where(
        table.c.external_id == name)).scalar()
    if found is None:
        conn.execute(sa.insert(table), [{'external_id': name,
                                         'created_at': db_api.utcnow()}])
        found = conn.execute(sa.select(table.c.id).where(
            table.c.external_id == name)).scalar()
    return found


def empty(db):
    with db.transaction(write=True) as conn:
        for table in (tables.allocations, tables.consumers,
                      tables.inventories, tables.resource_provider_traits,
                      tables.resource_provider_aggregates,
                      tables.placement_aggregates):
            conn.execute(sa.delete(table))
        rps = tables.resource_providers
        conn.execute(sa.update(rps).values(root_provider_id=None,
                                           parent_provider_id=None))
        conn.execute(sa.delete(rps))


# -- brute force --------------------------------------------------------------

def most(candidates, free):
    """The largest multiset of ``candidates`` (tuples of ((provider,
    class), amount)) whose amounts add up within ``free``, by trying
    every count of every candidate: (its size, one such multiset)."""
    memo = {}

    def best(i, room):
        if i == len(candidates):
            return 0, ()
        key = (i, tuple(sorted(room.items())))
        if key in memo:
            return memo[key]
        result = best(i + 1, room)
        candidate = candidates[i]
        taken, left = 0, dict(room)
        while True:
            for pair, amount in candidate:
                left[pair] -= amount
            if any(left[pair] < 0 for pair, _ in candidate):
                break
            taken += 1
            count, chosen = best(i + 1, left)
            if count + taken > result[0]:
                result = (count + taken, (candidate,) * taken + chosen)
            left = dict(left)
        memo[key] = result
        return result

    return best(0, dict(free))


def candidates_of(app, query):
    resp = fixtures.call_as_admin(app, 'GET',
                                  '/allocation_candidates?' + query)
    assert resp.status_int == 200, resp.text
    return [tuple(sorted(((rp, rc), amount)
                         for rp, entry in request['allocations'].items()
                         for rc, amount in entry['resources'].items()))
            for request in resp.json['allocation_requests']]


def only_class(candidates, rc, records=None):
    """``candidates``' amounts of class ``rc``; with ``records`` ({(provider
    uuid, class): inventory record}), only those the units allow."""
    found = []
    for candidate in candidates:
        part = tuple(item for item in candidate if item[0][1] == rc)
        if records is None or all(_units_allow(records[pair], amount)
                                  for pair, amount in part):
            found.append(part)
    return found


def _units_allow(record, amount):
    return (record['min_unit'] <= amount <= record['max_unit']
            and amount % record['step_size'] == 0)


def _per_root(fleet, candidates):
    """{root Provider: its candidates} (a candidate's root: that of its
    providers other than sharing ones)."""
    root_of = {p.uuid: p.root for p in fleet.providers}
    sharing = {p.uuid for p in fleet.providers if SHARES in p.traits}
    per_root = collections.defaultdict(list)
    for candidate in candidates:
        roots = {root_of[pair[0]] for pair, _ in candidate
                 if pair[0] not in sharing}
        (root,) = roots
        per_root[root].append(candidate)
    return per_root


def _limits(found, free, records=None):
    """The classes that alone allow the fewest of ``found``."""
    classes = {pair[1] for pair, _ in found[0]}
    alone = {rc: most(only_class(found, rc, records), free)[0]
             for rc in classes}
    return [rc for rc, n in alone.items() if n == min(alone.values())]


def expected(fleet, candidates, unlimited):
    """What the fit must say, worked out by brute force; ``unlimited``:
    the candidates with every inventory made unlimited."""
    free = fleet.free()
    per_root = _per_root(fleet, candidates)
    by_root, limited = {}, collections.Counter()
    for root, found in per_root.items():
        by_root[root.uuid] = most(found, free)[0]
        limited.update(_limits(found, free))
    records = {(p.uuid, rc): record for p in fleet.providers
               for rc, record in p.inventories.items()}
    for root, found in _per_root(fleet, unlimited).items():
        if root not in per_root:
            limited.update(_limits(found, free, records))
    by_aggregate = {}
    for aggregate in fleet.aggregates:
        found = [c for root, cs in per_root.items()
                 if aggregate in root.aggregates for c in cs]
        if found:
            by_aggregate[aggregate] = most(found, free)[0]
    return {'total': most(candidates, free)[0], 'by_root': by_root,
            'by_aggregate': by_aggregate, 'limited_by': dict(limited),
            'exact': True}


def unlimit(db, fleet):
    """Every inventory of the fleet made to take any amount whatever
    its usage, but those with a problem, which offer nothing."""
    inventories = tables.inventories
    with db.transaction(write=True) as conn:
        rc_ids = dict(conn.execute(sa.select(
            tables.resource_classes.c.name,
            tables.resource_classes.c.id)).all())
        for provider in fleet.providers:
            for rc, record in provider.inventories.items():
                if capacity_rule.problem(*(record[field] for field in
                                           capacity_rule.FIELDS)):
                    continue
                conn.execute(sa.update(inventories).where(
                    inventories.c.resource_provider_id == provider.id,
                    inventories.c.resource_class_id == rc_ids[rc]).values(
                        total=10 ** 6, reserved=0, min_unit=1,
                        max_unit=10 ** 6, step_size=1, allocation_ratio=1.0))


def allocate(app, candidate):
    allocations = collections.defaultdict(dict)
    for (rp, rc), amount in candidate:
        allocations[rp][rc] = amount
    resp = fixtures.call_as_admin(
        app, 'PUT', '/allocations/%s' % uuid.uuid4(),
        {'allocations': {rp: {'resources': r}
                         for rp, r in allocations.items()},
         'project_id': 'fit', 'user_id': 'fit',
         'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return resp


# -- the test -----------------------------------------------------------------

def _ids():
    n = 1
    while True:
        yield n
        n += 1


@pytest.mark.parametrize('first', range(0, FLEETS, CHUNK))
def test_fit_is_the_brute_force_maximum(first):
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(fixtures.new_conf(), db)
    ids = _ids()
    disagreements = []
    try:
        for seed in range(first, min(first + CHUNK, FLEETS)):
            rng = random.Random(seed)
            fleet = Fleet(rng, ids)
            write(db, fleet)
            query = fleet.query()
            resp = fixtures.call_as_admin(app, 'GET',
                                          '/capacity/fit?' + query)
            assert resp.status_int == 200, (seed, query, resp.text)
            got = resp.json['fit']
            candidates = candidates_of(app, query)
            best = most(candidates, fleet.free())[1]
            for candidate in best:
                resp = allocate(app, candidate)
                assert resp.status_int == 204, (seed, query, resp.text)
            assert candidates_of(app, query) == [], (seed, query)
            unlimit(db, fleet)
            want = expected(fleet, candidates, candidates_of(app, query))
            if got != want:
                disagreements.append((seed, query, got, want))
            empty(db)
    finally:
        cleanup()
    assert not disagreements, disagreements[:3]
