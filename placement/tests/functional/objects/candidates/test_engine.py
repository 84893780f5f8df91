"""The allocation-candidates engine called directly.

Topologies are built with the object layer (inventories and allocations
as rows), and candidates are compared as exact sets of
``({provider name: {class: amount}}, {suffix: provider names})``.
"""

import random
import types
import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement import exception
from placement.handlers import candidate_rendering as rendering
from placement.objects import aggregate as aggregate_obj
from placement.objects.candidates import engine as ac
from placement.objects.candidates import provider_index
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import trait as trait_obj

Group = ac.RequestGroup


class Topology:
    """Providers by name, built with rows the engine reads."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.by_name = {}
        self.aggregates = {}

    def add(self, name, parent=None, inventory=None, traits=(), aggs=()):
        provider = rp_obj.create(
            self.ctx, str(uuid.uuid4()), name,
            self.by_name[parent].uuid if parent else None)
        self.by_name[name] = provider
        ids = rc_obj.ids_by_name(self.ctx, list(inventory or {}))
        for trait in traits:
            trait_obj.ensure(self.ctx, trait)
        trait_ids = trait_obj.ids_by_name(self.ctx, list(traits))
        with self.ctx.db.transaction(write=True) as conn:
            for rc, total in (inventory or {}).items():
                conn.execute(sa.insert(tables.inventories).values(
                    resource_provider_id=provider.id,
                    resource_class_id=ids[rc], total=total, reserved=0,
                    min_unit=1, max_unit=total, step_size=1,
                    allocation_ratio=1.0))
            for trait_id in trait_ids.values():
                conn.execute(sa.insert(tables.resource_provider_traits)
                             .values(resource_provider_id=provider.id,
                                     trait_id=trait_id))
        if aggs:
            aggregate_obj.set_provider_aggregates(
                self.ctx, provider, [self.aggregate(a) for a in aggs])
        return provider

    def aggregate(self, name):
        return self.aggregates.setdefault(name, str(uuid.uuid4()))

    def allocate(self, name, rc, used):
        rc_id = rc_obj.ids_by_name(self.ctx, [rc])[rc]
        with self.ctx.db.transaction(write=True) as conn:
            conn.execute(sa.insert(tables.allocations).values(
                resource_provider_id=self.by_name[name].id,
                resource_class_id=rc_id, consumer_id=str(uuid.uuid4()),
                used=used))

    def name(self, provider_uuid):
        return next(n for n, p in self.by_name.items()
                    if p.uuid == provider_uuid)

    def shape(self, candidate):
        allocations = tuple(sorted(
            (self.name(u), tuple(sorted(r['resources'].items())))
            for u, r in candidate['allocations'].items()))
        mappings = tuple(sorted(
            (s, tuple(sorted(self.name(u) for u in us)))
            for s, us in candidate['mappings'].items()))
        return allocations, mappings

    def find(self, groups, options=ac.Options(), rng=random, **request):
        """The engine's result with candidates and summaries as the
        latest microversion shows them."""
        candidates, summaries = ac.find(
            self.ctx, ac.Request(groups=groups, **request), options, rng,
            present=rendering.latest)
        return types.SimpleNamespace(candidates=candidates,
                                     summaries=summaries)

    def candidates(self, groups, **request):
        found = [self.shape(c) for c in self.find(groups, **request)
                 .candidates]
        assert len(found) == len(set(found)), 'duplicates returned'
        return set(found)


def _alloc(**providers):
    return tuple(sorted((name, tuple(sorted(amounts.items())))
                        for name, amounts in providers.items()))


@pytest.fixture
def t1(ctx):
    """T1 (as gabbi_fixtures.SharedStorageFixture): two compute nodes and
    a sharing disk in A."""
    topo = Topology(ctx)
    topo.add('CN1', inventory={'VCPU': 8, 'MEMORY_MB': 4096}, aggs=['A'])
    topo.add('CN2', inventory={'VCPU': 8, 'MEMORY_MB': 4096,
                               'DISK_GB': 100}, aggs=['A'])
    topo.add('SS', inventory={'DISK_GB': 1000},
             traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=['A'])
    return topo


@pytest.fixture
def t2(ctx):
    """T2 (as gabbi_fixtures.NUMAFixture): a compute node with two NUMA
    nodes and two PFs."""
    topo = Topology(ctx)
    topo.add('CN', inventory={'VCPU': 4},
             traits=['COMPUTE_VOLUME_MULTI_ATTACH'])
    for n in '01':
        topo.add('NUMA' + n, 'CN', inventory={'VCPU': 4, 'MEMORY_MB': 2048},
                 traits=['HW_NUMA_ROOT'])
        topo.add('PF' + n, 'NUMA' + n, inventory={'SRIOV_NET_VF': 8},
                 traits=['CUSTOM_PHYSNET_' + 'AB'[int(n)]])
    return topo


def test_spread_over_tree_and_sharing_provider(t1):
    found = t1.candidates([Group(resources={
        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10})])
    vm = {'VCPU': 1, 'MEMORY_MB': 512}
    assert found == {
        (_alloc(CN1=vm, SS={'DISK_GB': 10}), (('', ('CN1', 'SS')),)),
        (_alloc(CN2=vm, SS={'DISK_GB': 10}), (('', ('CN2', 'SS')),)),
        (_alloc(CN2=dict(vm, DISK_GB=10)), (('', ('CN2',)),)),
    }


def test_lone_trees_nested_trees_and_sharing_in_one_cloud(ctx):
    """Single-provider trees take the short path, unless a sharing
    provider serves them; nested trees spread; the answers are those of
    the unsuffixed-group rules (api-ref/allocation-candidates.rst) for
    every kind of tree at once."""
    topo = Topology(ctx)
    topo.add('LONE', inventory={'VCPU': 8, 'DISK_GB': 100})
    topo.add('LONE_NO_DISK', inventory={'VCPU': 8})
    topo.add('SERVED', inventory={'VCPU': 8, 'DISK_GB': 100}, aggs=['A'])
    topo.add('SS', inventory={'DISK_GB': 1000},
             traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=['A'])
    topo.add('ROOT', inventory={'DISK_GB': 100})
    topo.add('NUMA', 'ROOT', inventory={'VCPU': 8})
    found = topo.candidates([Group(resources={'VCPU': 1, 'DISK_GB': 10})])
    both, disk = {'VCPU': 1, 'DISK_GB': 10}, {'DISK_GB': 10}
    assert found == {
        (_alloc(LONE=both), (('', ('LONE',)),)),
        (_alloc(SERVED=both), (('', ('SERVED',)),)),
        (_alloc(SERVED={'VCPU': 1}, SS=disk), (('', ('SERVED', 'SS')),)),
        (_alloc(NUMA={'VCPU': 1}, ROOT=disk), (('', ('NUMA', 'ROOT')),)),
    }


def test_forbidden_trait_excludes_sharing_provider(t1):
    found = t1.candidates([Group(resources={'VCPU': 1, 'DISK_GB': 10},
                                 forbidden=frozenset(
                                     ['MISC_SHARES_VIA_AGGREGATE']))])
    assert {a for a, _ in found} == {
        _alloc(CN2={'VCPU': 1, 'DISK_GB': 10})}


def test_isolate_keeps_suffixed_groups_apart(t1):
    groups = [Group('1', {'VCPU': 1}), Group('2', {'DISK_GB': 10})]
    assert t1.candidates(groups, isolate=True) == {
        (_alloc(CN1={'VCPU': 1}, SS={'DISK_GB': 10}),
         (('1', ('CN1',)), ('2', ('SS',)))),
        (_alloc(CN2={'VCPU': 1}, SS={'DISK_GB': 10}),
         (('1', ('CN2',)), ('2', ('SS',)))),
    }
    assert (_alloc(CN2={'VCPU': 1, 'DISK_GB': 10}),
            (('1', ('CN2',)), ('2', ('CN2',)))) in t1.candidates(groups)


def test_consolidated_capacity_is_rechecked(ctx):
    topo = Topology(ctx)
    topo.add('CN', inventory={'VCPU': 4})
    topo.add('NUMA', 'CN', inventory={'VCPU': 4})
    topo.allocate('CN', 'VCPU', 1)
    groups = [Group('1', {'VCPU': 2}), Group('2', {'VCPU': 2})]
    # CN has 3 free: both groups fit there one at a time, not together.
    assert {a for a, _ in topo.candidates(groups)} == {
        _alloc(CN={'VCPU': 2}, NUMA={'VCPU': 2}),
        _alloc(NUMA={'VCPU': 4})}


def test_isolate_with_the_same_class_unsuffixed_sums_correctly(t2):
    """Amounts are the sums actually placed, never more (see
    api-ref/behaviour-choices.rst, 'Amounts under group_policy=isolate')."""
    found = t2.candidates([Group('', {'VCPU': 1}), Group('1', {'VCPU': 1})],
                          isolate=True)
    for allocations, _ in found:
        assert sum(dict(r)['VCPU'] for _, r in allocations) == 2
    assert len(found) == 9                 # any of 3 providers for each


def test_nested_combinations_only_from_1_29(t2):
    group = [Group(resources={'VCPU': 1, 'SRIOV_NET_VF': 2})]
    assert len(t2.candidates(group)) == 6
    assert t2.candidates(group, nested_aware=False) == set()
    single = [Group(resources={'SRIOV_NET_VF': 2})]
    assert len(t2.candidates(single, nested_aware=False)) == 2
    summaries = t2.find(single, nested_aware=False).summaries
    assert set(summaries) == {
        t2.by_name['PF0'].uuid, t2.by_name['PF1'].uuid}
    assert len(t2.find(single).summaries) == 5


def test_required_traits_collected_from_contributing_providers(t2):
    found = t2.candidates([Group(
        resources={'VCPU': 1, 'SRIOV_NET_VF': 1},
        required=[frozenset(['CUSTOM_PHYSNET_A']),
                  frozenset(['HW_NUMA_ROOT'])])])
    assert {a for a, _ in found} == {
        _alloc(NUMA0={'VCPU': 1}, PF0={'SRIOV_NET_VF': 1}),
        _alloc(NUMA1={'VCPU': 1}, PF0={'SRIOV_NET_VF': 1})}


def test_same_subtree_with_resourceless_group(t2):
    groups = [Group('_P', {'SRIOV_NET_VF': 1}),
              Group('_R', required=[frozenset(['HW_NUMA_ROOT'])])]
    found = t2.candidates(groups, same_subtree=[frozenset(['_P', '_R'])])
    assert found == {
        (_alloc(PF0={'SRIOV_NET_VF': 1}),
         (('_P', ('PF0',)), ('_R', ('NUMA0',)))),
        (_alloc(PF1={'SRIOV_NET_VF': 1}),
         (('_P', ('PF1',)), ('_R', ('NUMA1',)))),
    }


def test_root_required(t2):
    for name in ('CN1', 'CN2'):
        t2.add(name, inventory={'VCPU': 8})
    group = [Group(resources={'VCPU': 1})]
    with_trait = t2.candidates(
        group, root_required=('COMPUTE_VOLUME_MULTI_ATTACH',))
    assert {a[0][0] for a, _ in with_trait} == {'CN', 'NUMA0', 'NUMA1'}
    without = t2.candidates(
        group, root_forbidden=('COMPUTE_VOLUME_MULTI_ATTACH',))
    assert {a[0][0] for a, _ in without} == {'CN1', 'CN2'}


def test_sharing_associated_through_a_child_aggregate(ctx):
    topo = Topology(ctx)
    topo.add('CN', inventory={'VCPU': 4})
    topo.add('NUMA', 'CN', inventory={'MEMORY_MB': 1024}, aggs=['A'])
    topo.add('SS', inventory={'DISK_GB': 100},
             traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=['A'])
    topo.add('OTHER', inventory={'VCPU': 4})
    found = topo.candidates([Group(resources={'VCPU': 1, 'DISK_GB': 1})])
    assert {a for a, _ in found} == {
        _alloc(CN={'VCPU': 1}, SS={'DISK_GB': 1})}


def test_unsuffixed_member_of_spans_the_tree_from_the_root(t2):
    t2_root = t2.by_name['CN']
    aggregate_obj.set_provider_aggregates(t2.ctx, t2_root,
                                          [t2.aggregate('X')])
    term = [frozenset([t2.aggregate('X')])]
    spread = t2.candidates([Group(resources={'SRIOV_NET_VF': 1},
                                  member_of=term)])
    assert {a[0][0] for a, _ in spread} == {'PF0', 'PF1'}
    assert t2.candidates([Group('1', {'SRIOV_NET_VF': 1},
                                member_of=term)]) == set()


def test_unknown_names(t1):
    with pytest.raises(exception.ResourceClassNotFound):
        t1.find([Group(resources={'NOPE': 1})])
    with pytest.raises(exception.TraitNotFound):
        t1.find([Group(resources={'VCPU': 1},
                       required=[frozenset(['CUSTOM_NOPE'])])])
    unknown_aggregate = [frozenset([str(uuid.uuid4())])]
    assert t1.find([Group(resources={'VCPU': 1},
                          member_of=unknown_aggregate)]).candidates == []


def test_an_aggregate_unknown_at_first_is_found_once_used(t1):
    later = t1.aggregate('LATER')
    group = Group(resources={'VCPU': 1}, member_of=[frozenset([later])])
    assert t1.candidates([group]) == set()
    aggregate_obj.set_provider_aggregates(t1.ctx, t1.by_name['CN1'], [later])
    assert t1.candidates([group]) == {
        (_alloc(CN1={'VCPU': 1}), (('', ('CN1',)),))}


def test_the_index_reads_an_aggregate_id_until_it_exists_then_keeps_it(t1):
    index = provider_index.ProviderIndex()
    known, later = t1.aggregate('A'), t1.aggregate('LATER')
    statements = []

    def note(conn, cursor, statement, *args):
        statements.append(statement)

    def ids(uuids):
        # On the engine: an SQLite reader's connection is not a
        # SQLAlchemy Connection until it needs one
        # (connections.ReaderConnection).
        engine = t1.ctx.db.engine
        sa.event.listen(engine, 'before_cursor_execute', note)
        try:
            with t1.ctx.db.transaction(write=False) as conn:
                return index.aggregate_ids(conn, uuids)
        finally:
            sa.event.remove(engine, 'before_cursor_execute', note)

    assert ids([known, later]).keys() == {known}
    assert len(statements) == 1
    assert ids([known, later]).keys() == {known}
    assert len(statements) == 2
    aggregate_obj.set_provider_aggregates(t1.ctx, t1.by_name['CN1'], [later])
    both = ids([known, later])
    assert both == ids([later, known]) and both.keys() == {known, later}
    assert len(statements) == 3


# -- bounded search -----------------------------------------------------------

def _wide_tree(ctx, devices):
    topo = Topology(ctx)
    rc_obj.create(ctx, 'CUSTOM_DEV')
    topo.add('root')
    for index in range(devices):
        topo.add('dev%02d' % index, 'root', inventory={'CUSTOM_DEV': 1})
    return topo


@pytest.mark.parametrize('devices', [8, 21])
def test_wide_tree_isolate_returns_exactly_limit(ctx, devices):
    topo = _wide_tree(ctx, devices)
    groups = [Group(str(n), {'CUSTOM_DEV': 1}) for n in range(1, 9)]
    result = topo.find(groups, isolate=True, limit=1000)
    assert len(result.candidates) == 1000
    shapes = {topo.shape(c) for c in result.candidates}
    assert len(shapes) == 1000
    for allocations, mappings in shapes:
        assert len(allocations) == 8       # eight distinct devices...
        assert all(r == (('CUSTOM_DEV', 1),) for _, r in allocations)
        assert len({p for _, ps in mappings for p in ps}) == 8
    assert len(result.summaries) == devices + 1


def test_isolate_more_groups_than_devices_finds_nothing(ctx):
    topo = _wide_tree(ctx, 7)
    groups = [Group(str(n), {'CUSTOM_DEV': 1}) for n in range(1, 9)]
    assert topo.find(groups, isolate=True).candidates == []


def test_max_candidates_caps_generation(t1):
    group = [Group(resources={'VCPU': 1})]
    assert len(t1.find(group).candidates) == 2
    for cap, expected in ((0, 1), (1, 1), (5, 2)):
        found = t1.find(group, ac.Options(max_candidates=cap))
        assert len(found.candidates) == expected
    assert len(t1.find(group, ac.Options(max_candidates=1)).summaries) == 1


def _forest(ctx, roots):
    topo = Topology(ctx)
    for r in range(roots):
        topo.add('root%d' % r)
        for c in range(3):
            topo.add('root%d-c%d' % (r, c), 'root%d' % r,
                     inventory={'VCPU': 2})
    return topo


def _roots_of(topo, result):
    return {topo.name(c['mappings'][''][0]).split('-')[0]
            for c in result.candidates}


def test_depth_first_fills_the_limit_from_few_roots(ctx):
    topo = _forest(ctx, 6)
    result = topo.find([Group(resources={'VCPU': 1})], limit=4)
    assert _roots_of(topo, result) == {'root0', 'root1'}


def test_randomize_spreads_the_limit_over_roots_fairly(ctx):
    topo = _forest(ctx, 6)
    options = ac.Options(randomize=True)
    seen = set()
    for seed in range(8):
        result = topo.find([Group(resources={'VCPU': 1})], options,
                           rng=random.Random(seed), limit=4)
        roots = _roots_of(topo, result)
        assert len(roots) == 4             # one candidate per root
        seen |= roots
    assert len(seen) == 6                  # and every root gets its turn


def test_breadth_first_visits_roots_in_turn(ctx):
    topo = _forest(ctx, 3)
    result = topo.find([Group(resources={'VCPU': 1})],
                       ac.Options(breadth_first=True), limit=3)
    assert _roots_of(topo, result) == {'root0', 'root1', 'root2'}
