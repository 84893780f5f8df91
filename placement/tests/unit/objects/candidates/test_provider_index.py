"""What the provider index answers from memory, on an index filled by
hand. Loading and refreshing it need a database: every test that asks
for candidates checks them (``placement/tests/conftest.py``)."""

import pytest

from placement.objects.candidates import provider_index
from placement.objects import capacity

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
NAMES = {VCPU: 'VCPU', MEMORY_MB: 'MEMORY_MB', DISK_GB: 'DISK_GB'}
TRAITS = {10: 'HW_CPU_X86_AVX2', 11: 'COMPUTE_STATUS_DISABLED',
          12: 'CUSTOM_Z', 13: 'CUSTOM_A'}


def inventory(total, min_unit=1, max_unit=None, step_size=1):
    """An inventory record's capacity and units; ``add`` makes it the
    Offer a load would, given the provider's usage."""
    return (total, min_unit, total if max_unit is None else max_unit,
            step_size)


def add(index, provider, parent=None, inventories=None, usage=None,
        traits=(), aggregates=()):
    """Fill ``index`` with one provider as a load from the tables would."""
    root = provider if parent is None else index.root[parent]
    index.uuid[provider] = 'uuid-%d' % provider
    index.by_uuid['uuid-%d' % provider] = provider
    index.parent[provider] = parent
    index.root[provider] = root
    index.members[root].add(provider)
    if parent is not None:
        index.nested += 1
    used = dict(usage or {})
    index.inventories[provider] = {
        rc: capacity.offer(total, used.get(rc, 0), min_unit, max_unit,
                           step_size)
        for rc, (total, min_unit, max_unit, step_size)
        in (inventories or {}).items()}
    for rc in index.inventories[provider]:
        index.with_class[rc].add(provider)
    if usage:
        index.usage[provider] = used
    index.traits[provider] = frozenset(traits)
    for trait in traits:
        index.with_trait[trait].add(provider)
    index.aggregates[provider] = frozenset(aggregates)
    for aggregate in aggregates:
        index.in_aggregate[aggregate].add(provider)


@pytest.fixture
def index():
    """1 (compute) with children 2 (a NUMA node) and 3 (a NIC); 4 alone;
    5 a storage provider alone."""
    index = provider_index.ProviderIndex()
    index.class_names = dict(NAMES)
    index.trait_names = dict(TRAITS)
    add(index, 1, inventories={MEMORY_MB: inventory(2048, max_unit=1024)},
        usage={MEMORY_MB: 512}, traits=(10, 13, 12))
    add(index, 2, parent=1, inventories={VCPU: inventory(8)},
        usage={VCPU: 6})
    add(index, 3, parent=1, traits=(11,))
    add(index, 4, inventories={VCPU: inventory(4), MEMORY_MB: inventory(
        4096, min_unit=256, step_size=256)}, aggregates=(7,))
    add(index, 5, inventories={DISK_GB: inventory(1000, max_unit=100)},
        usage={DISK_GB: 950}, aggregates=(7, 8))
    return index


def fitting(index, providers, **amounts):
    return list(index.fitting(providers, [
        (rc, amounts[NAMES[rc]]) for rc in sorted(NAMES)
        if NAMES[rc] in amounts]))


def test_fitting_subtracts_usage_from_capacity(index):
    assert fitting(index, [2, 4], VCPU=2) == [2, 4]
    assert fitting(index, [2, 4], VCPU=3) == [4]        # 8 - 6 used
    assert fitting(index, [2, 4], VCPU=5) == []


def test_fitting_keeps_the_order_it_was_given(index):
    assert fitting(index, [4, 2], VCPU=1) == [4, 2]


def test_fitting_verdicts_carry_over_between_calls(index):
    """Verdicts passed in are reused: one test per inventory map across
    calls (the lazy search asks tree by tree)."""
    verdicts = {}
    assert list(index.fitting([2], [(VCPU, 3)], verdicts)) == []
    assert list(index.fitting([4], [(VCPU, 3)], verdicts)) == [4]
    assert len(verdicts) == 2
    index.inventories[4] = index.inventories[2]  # now the same map
    assert list(index.fitting([4], [(VCPU, 3)], verdicts)) == []
    assert len(verdicts) == 2


def test_fitting_honours_min_max_and_step(index):
    assert fitting(index, [4], MEMORY_MB=256) == [4]
    assert fitting(index, [4], MEMORY_MB=128) == []     # below min_unit
    assert fitting(index, [4], MEMORY_MB=300) == []     # not a step
    assert fitting(index, [4], MEMORY_MB=4096) == [4]
    assert fitting(index, [1], MEMORY_MB=1024) == [1]
    assert fitting(index, [1], MEMORY_MB=1025) == []    # above max_unit
    assert fitting(index, [5], DISK_GB=50) == [5]
    assert fitting(index, [5], DISK_GB=51) == []        # 1000 - 950 used


def test_fitting_needs_every_class_on_the_one_provider(index):
    assert fitting(index, [1, 2, 4], VCPU=1, MEMORY_MB=512) == [4]
    assert fitting(index, [3], VCPU=1) == []            # no inventory


def test_fitting_is_lazy(index):
    asked = []

    def providers():
        for provider in (4, 2):
            asked.append(provider)
            yield provider

    found = index.fitting(providers(), [(VCPU, 1)])
    assert asked == []
    assert next(found) == 4 and asked == [4]


def test_room_is_free_capacity_capped_by_max_unit(index):
    assert index.room(2, VCPU) == 2
    assert index.room(4, VCPU) == 4                      # nothing used
    assert index.room(1, MEMORY_MB) == 1024              # 1536 free
    assert index.room(5, DISK_GB) == 50


def test_room_of_an_overcommitted_provider_is_negative(index):
    add(index, 6, inventories={VCPU: inventory(8)}, usage={VCPU: 10})
    assert index.room(6, VCPU) == -2


def test_summary_shape(index):
    assert index.summary(1) == provider_index.Summary(
        uuid='uuid-1', resources=(('MEMORY_MB', 2048, 512),),
        traits=('CUSTOM_A', 'CUSTOM_Z', 'HW_CPU_X86_AVX2'),
        parent_uuid=None, root_uuid='uuid-1')
    assert index.summary(3) == provider_index.Summary(
        uuid='uuid-3', resources=(), traits=('COMPUTE_STATUS_DISABLED',),
        parent_uuid='uuid-1', root_uuid='uuid-1')


def test_summary_reports_unused_classes_as_zero(index):
    assert sorted(index.summary(4).resources) == [
        ('MEMORY_MB', 4096, 0), ('VCPU', 4, 0)]


def test_summary_is_built_once_and_shared(index):
    first = index.summary(2)
    assert index.summary(2) is first
    assert index.summaries[2] is first


def test_lone_roots_are_trees_of_one_provider(index):
    assert index.lone_roots() == {4, 5}


def test_union_and_trees(index):
    assert index.union(index.in_aggregate, [7]) == {4, 5}
    assert index.union(index.in_aggregate, [8, 9]) == {5}
    assert index.union(index.in_aggregate, [9]) == frozenset()
    assert index.union(index.with_class, iter([VCPU, DISK_GB])) == {2, 4, 5}
    assert index.trees([1]) == {1, 2, 3}
    assert index.trees([1, 5]) == {1, 2, 3, 5}


def test_trees_keep_a_lone_provider_as_its_id_and_read_as_sets():
    trees = provider_index.Trees()
    trees.join(1, 1)
    trees.join(2, 2)
    trees.join(2, 3)
    assert dict.get(trees, 1) == 1
    assert trees.get(1) == {1} and trees.get(2) == {2, 3}
    assert trees.get(9) is None and trees.get(9, 'none') == 'none'
    assert trees.of_one() == {1}
    assert dict(trees.items()) == {1: {1}, 2: {2, 3}}
    # A tree left by all but one provider shrinks back to an id.
    trees.leave(2, 2)
    assert dict.get(trees, 2) == 3 and trees.of_one() == {1, 2}
    trees.leave(2, 3)
    trees.leave(1, 7)
    assert 2 not in trees and trees.get(1) == {1}
    trees.leave(1, 1)
    assert not trees
    # Indexing gives a stored set, as a defaultdict(set) would.
    trees[4].add(4)
    trees.join(5, 5)
    trees[5].add(6)
    assert trees.get(4) == {4} and trees.get(5) == {5, 6}


def test_trees_of_several_providers_are_kept_as_tuples_once_compacted():
    trees = provider_index.Trees()
    for provider in (1, 2, 3):
        trees.join(1, provider)
    trees.join(4, 4)
    trees.compact()
    assert sorted(dict.get(trees, 1)) == [1, 2, 3]
    assert isinstance(dict.get(trees, 1), tuple)
    assert dict.get(trees, 4) == 4
    assert trees.get(1) == {1, 2, 3} and trees.of_one() == {4}
    assert sorted(trees.providers(1)) == [1, 2, 3]
    assert list(trees.providers(4)) == [4] and not trees.providers(9)
    # Changed, a tuple becomes a set again.
    trees.join(1, 5)
    assert dict.get(trees, 1) == {1, 2, 3, 5}
    trees.compact()
    trees.leave(1, 5)
    trees.leave(1, 2)
    assert dict.get(trees, 1) == {1, 3}
    trees.compact()
    trees[1].add(6)
    assert trees.get(1) == {1, 3, 6}
