"""The candidate search on hand-built inputs, without a database.

Search spaces are written out literally: which partial candidates each
group has at each anchor, how much room shared classes have, and the
shape of the trees. Candidates are compared by what each group maps to,
``{suffix: providers}``. A seeded random comparison against a plain
product-and-filter search checks every rule together.
"""

import collections
import itertools
import random

import pytest

from placement.objects.candidates import search as search

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2

#   1          5        9   (9: a sharing provider, a tree of its own)
#  / \         |
# 2   3        6
# |
# 4
PARENT = {1: None, 2: 1, 3: 1, 4: 2, 5: None, 6: 5, 9: None}
ROOT = {1: 1, 2: 1, 3: 1, 4: 1, 5: 5, 6: 5, 9: 9}


def on(provider, *amounts):
    """A single-provider partial placing ``(class, amount)`` pairs (none:
    a resourceless group's partial)."""
    return search.Partial((provider,), tuple(
        (provider, rc, amount) for rc, amount in amounts))


def spread(*amounts):
    """A partial placing ``(provider, class, amount)`` triples."""
    return search.Partial(tuple(dict.fromkeys(p for p, _, _ in amounts)),
                          tuple(amounts))


def group(suffix, partials, single=None):
    """A GroupPlan; ``partials`` maps anchors to lists of partials."""
    if single is None:
        single = all(len(p.providers) == 1
                     for ps in partials.values() for p in ps)
    return search.GroupPlan(suffix, partials, single=single)


def classes_of(plan):
    return {rc for ps in plan.partials.values() for p in ps
            for _, rc, _ in p.amounts}


def space(*groups, room=None, shared=None, **options):
    """A SearchSpace over the trees above. ``shared`` defaults, as the
    engine's caller computes it, to the classes several groups place."""
    if shared is None:
        counts = collections.Counter(rc for g in groups
                                     for rc in classes_of(g))
        shared = frozenset(rc for rc, n in counts.items() if n > 1)
    options.setdefault('ancestry', search.Ancestry(PARENT))
    return search.SearchSpace(groups=list(groups), room=room or {},
                              root_of=ROOT, shared_classes=shared, **options)


def mapping(found):
    """``{suffix: provider}`` (or a tuple of providers) of one result."""
    suffixes, partials = found
    return {suffix: (p.providers[0] if len(p.providers) == 1
                     else p.providers)
            for suffix, p in zip(suffixes, partials)}


def picks(space_, anchors=None, limit=None, **kwargs):
    """Each candidate (the first ``limit``) as the providers of its
    groups, in suffix order."""
    anchors = space_.anchors() if anchors is None else anchors
    found = itertools.islice(search.generate(space_, anchors, **kwargs),
                             limit)
    return [tuple(m[s] for s in sorted(m)) for m in map(mapping, found)]


# -- anchors and the lone group ----------------------------------------------

def test_make_partial_is_the_constructor_without_its_checks():
    made = search.make_partial(((2,), ((2, VCPU, 1),), ((VCPU, 1),)))
    assert type(made) is search.Partial
    assert made == search.Partial((2,), ((2, VCPU, 1),), ((VCPU, 1),))
    assert made.template == ((VCPU, 1),)
    assert search.Partial((2,)).amounts == ()



def test_anchors_are_the_roots_every_group_reaches_in_id_order():
    a = group('_A', {5: [on(6)], 1: [on(2)], 9: [on(9)]})
    b = group('_B', {1: [on(3)], 5: [on(6)]})
    assert space(a, b).anchors() == [1, 5]
    assert space(a).anchors() == [1, 5, 9]


def test_a_lone_group_offers_each_partial_in_anchor_order():
    a = group('', {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1))],
                   5: [on(6, (VCPU, 1))]})
    assert picks(space(a), [5, 1]) == [(6,), (2,), (3,)]


# -- consolidated capacity ---------------------------------------------------

def test_groups_sharing_a_class_may_not_exceed_its_room_together():
    a = group('_A', {1: [on(2, (VCPU, 2)), on(3, (VCPU, 2))]})
    b = group('_B', {1: [on(2, (VCPU, 2)), on(3, (VCPU, 2))]})
    room = {(2, VCPU): 3, (3, VCPU): 4}
    # 2 + 2 fits the 4 of provider 3, not the 3 of provider 2.
    assert sorted(picks(space(a, b, room=room))) == [(2, 3), (3, 2), (3, 3)]


def test_room_counts_the_unsuffixed_group_spread_over_the_tree():
    unsuffixed = group('', {1: [spread((1, VCPU, 2), (2, MEMORY_MB, 512)),
                                spread((3, VCPU, 2), (2, MEMORY_MB, 512))]})
    device = group('_A', {1: [on(2, (MEMORY_MB, 512)),
                              on(4, (MEMORY_MB, 512))]})
    room = {(2, MEMORY_MB): 1000, (4, MEMORY_MB): 1000}
    assert sorted(picks(space(unsuffixed, device, room=room))) == [
        ((1, 2), 4), ((3, 2), 4)]


def test_room_is_given_back_when_the_walk_backs_out():
    # Three groups of one VCPU each on a provider with room for two: each
    # of the three ways to leave one group elsewhere fits, so every
    # abandoned branch must have returned what it placed.
    groups = [group(s, {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1))]})
              for s in ('_A', '_B', '_C')]
    room = {(2, VCPU): 2, (3, VCPU): 2}
    found = picks(space(*groups, room=room))
    assert sorted(found) == sorted(
        c for c in itertools.product((2, 3), repeat=3)
        if c.count(2) <= 2 and c.count(3) <= 2)
    assert len(found) == 6


def test_only_shared_classes_are_checked_against_room():
    # Each partial fits on its own (its builder checked that); a class
    # only one group places is never tracked, so needs no room entry.
    a = group('_A', {1: [on(2, (VCPU, 1), (DISK_GB, 50))]})
    b = group('_B', {1: [on(2, (VCPU, 1))]})
    assert picks(space(a, b, room={(2, VCPU): 2})) == [(2, 2)]
    assert picks(space(a, b, room={(2, VCPU): 1})) == []


# -- limit and laziness ------------------------------------------------------

class Counted:
    """Partials made on demand, counting how many were made."""

    def __init__(self, partials):
        self.made = 0
        self.lazy = search.LazyPartials(self._make(partials), len(partials))

    def _make(self, partials):
        for partial in partials:
            self.made += 1
            yield partial


def lazy_group(suffix, counted):
    """A GroupPlan over ``Counted`` partials (nothing made yet)."""
    return search.GroupPlan(suffix, {anchor: c.lazy
                                     for anchor, c in counted.items()})


def _wide(count, rc=VCPU, first=1000):
    """``count`` partials of one ``rc`` on providers ``first`` onwards."""
    return [on(first + n, (rc, 1)) for n in range(count)]


@pytest.mark.parametrize('isolate, pulled', [(False, (1, 5)),
                                              (True, (1, 6))])
def test_a_limited_search_pulls_only_the_partials_it_uses(isolate, pulled):
    a, b = Counted(_wide(1000)), Counted(_wide(1000, MEMORY_MB))
    space_ = space(lazy_group('_A', {1: a}), lazy_group('_B', {1: b}),
                   shared=frozenset(), isolate=isolate)
    found = search.generate(space_, [1])
    assert a.made == b.made == 0           # nothing before the first pull
    assert len(list(itertools.islice(found, 5))) == 5
    # _B's partials use _A's providers: isolated, it skips the one taken.
    assert (a.made, b.made) == pulled


def test_a_limited_search_with_shared_room_stops_early_too():
    a, b = Counted(_wide(1000)), Counted(_wide(1000))
    room = {(p, VCPU): 1 for p in range(1000, 2000)}
    found = search.generate(space(lazy_group('_A', {1: a}),
                                  lazy_group('_B', {1: b}), room=room,
                                  shared=frozenset({VCPU})), [1])
    # _A takes 1000 first, so _B skips it: one more partial pulled.
    assert len(list(itertools.islice(found, 5))) == 5
    assert (a.made, b.made) == (1, 6)


def test_depth_first_leaves_later_anchors_untouched():
    per_anchor = {anchor: (Counted(_wide(50, VCPU, anchor * 100)),
                           Counted(_wide(50, DISK_GB, anchor * 100)))
                  for anchor in (1, 5)}
    space_ = space(lazy_group('_A', {k: v[0] for k, v in per_anchor.items()}),
                   lazy_group('_B', {k: v[1] for k, v in per_anchor.items()}),
                   shared=frozenset())
    assert len(picks(space_, [1, 5], limit=3)) == 3
    assert [c.made for c in per_anchor[5]] == [0, 0]


def test_round_robin_pulls_from_the_anchors_it_reaches_only():
    anchors = range(1, 11)
    counted = {anchor: (Counted(_wide(50, VCPU, anchor * 100)),
                        Counted(_wide(50, DISK_GB, anchor * 100)))
               for anchor in anchors}
    space_ = space(lazy_group('_A', {k: v[0] for k, v in counted.items()}),
                   lazy_group('_B', {k: v[1] for k, v in counted.items()}),
                   shared=frozenset())
    assert len(picks(space_, anchors, limit=3, round_robin=True)) == 3
    assert [(a.made, b.made) for a, b in counted.values()] == (
        [(1, 1)] * 3 + [(0, 0)] * 7)


def test_the_generator_ends_when_the_space_is_exhausted():
    a = group('_A', {1: [on(2, (VCPU, 1))], 5: [on(6, (VCPU, 1))]})
    b = group('_B', {1: [on(3, (DISK_GB, 1))], 5: [on(6, (DISK_GB, 1))]})
    found = search.generate(space(a, b), [1, 5])
    assert len(list(itertools.islice(found, 10))) == 2


# -- group_policy=isolate ----------------------------------------------------

def test_isolate_maps_suffixed_groups_to_different_providers():
    a = group('_A', {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1))]})
    b = group('_B', {1: [on(2, (DISK_GB, 1)), on(3, (DISK_GB, 1))]})
    assert sorted(picks(space(a, b))) == [(2, 2), (2, 3), (3, 2), (3, 3)]
    assert sorted(picks(space(a, b, isolate=True))) == [(2, 3), (3, 2)]


def test_isolate_leaves_the_unsuffixed_group_free_to_share():
    unsuffixed = group('', {1: [on(2, (VCPU, 1))]})
    a = group('_A', {1: [on(2, (DISK_GB, 1)), on(3, (DISK_GB, 1))]})
    assert sorted(picks(space(unsuffixed, a, isolate=True))) == [
        (2, 2), (2, 3)]


def test_isolate_applies_to_resourceless_groups():
    a = group('_A', {1: [on(2, (VCPU, 1))]})
    marker = group('_M', {1: [on(2), on(3)]})
    assert picks(space(a, marker, isolate=True)) == [(2, 3)]


def test_isolate_with_more_groups_than_providers_finds_nothing():
    groups = [group(s, {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1))]})
              for s in ('_A', '_B', '_C')]
    assert picks(space(*groups, room={(2, VCPU): 9, (3, VCPU): 9},
                       isolate=True)) == []
    lazy = [lazy_group(s, {1: Counted([on(2, (VCPU, 1)), on(3, (VCPU, 1))])})
            for s in ('_A', '_B', '_C')]
    assert picks(space(*lazy, room={(2, VCPU): 9, (3, VCPU): 9},
                       shared=frozenset({VCPU}), isolate=True)) == []


def test_isolate_releases_a_provider_when_the_walk_backs_out():
    a = group('_A', {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1)),
                         on(4, (VCPU, 1))]})
    b = group('_B', {1: [on(2, (DISK_GB, 1)), on(3, (DISK_GB, 1))]})
    c = group('_C', {1: [on(2, (MEMORY_MB, 1)), on(4, (MEMORY_MB, 1))]})
    assert sorted(picks(space(a, b, c, isolate=True))) == [
        (2, 3, 4), (3, 2, 4), (4, 3, 2)]


# -- same_subtree ------------------------------------------------------------

def test_same_subtree_keeps_groups_under_one_of_their_providers():
    a = group('_A', {1: [on(p, (VCPU, 1)) for p in (2, 3, 4)]})
    b = group('_B', {1: [on(p, (DISK_GB, 1)) for p in (2, 3, 4)]})
    together = space(a, b, same_subtree=[frozenset({'_A', '_B'})])
    assert sorted(picks(together)) == [(2, 2), (2, 4), (3, 3), (4, 2),
                                       (4, 4)]


def test_same_subtree_with_a_resourceless_group_anchors_the_subtree():
    marker = group('_M', {1: [on(2)]})
    a = group('_A', {1: [on(p, (VCPU, 1)) for p in (1, 2, 3, 4)]})
    b = group('_B', {1: [on(p, (DISK_GB, 1)) for p in (1, 2, 3, 4)]})
    found = picks(space(a, b, marker,
                        same_subtree=[frozenset({'_M', '_A', '_B'})]))
    # The marker's provider 2 or one of _A, _B above it must be an
    # ancestor-or-self of all three.
    assert sorted(found) == [
        (1, 1, 2), (1, 2, 2), (1, 3, 2), (1, 4, 2), (2, 1, 2), (2, 2, 2),
        (2, 4, 2), (3, 1, 2), (4, 1, 2), (4, 2, 2), (4, 4, 2)]


def test_same_subtree_resourceless_group_below_the_others():
    marker = group('_M', {1: [on(4)]})
    a = group('_A', {1: [on(p, (VCPU, 1)) for p in (1, 2, 3)]})
    found = picks(space(a, marker, same_subtree=[frozenset({'_M', '_A'})]))
    assert sorted(found) == [(1, 4), (2, 4)]


def test_same_subtree_constraints_are_independent():
    a = group('_A', {1: [on(p, (VCPU, 1)) for p in (2, 3)]})
    b = group('_B', {1: [on(p, (DISK_GB, 1)) for p in (2, 3, 4)]})
    c = group('_C', {1: [on(p, (MEMORY_MB, 1)) for p in (3, 4)]})
    found = picks(space(a, b, c, same_subtree=[frozenset({'_A', '_B'}),
                                               frozenset({'_B', '_C'})]))
    assert sorted(found) == [(2, 2, 4), (2, 4, 4), (3, 3, 3)]


def test_same_subtree_tests_groups_spread_over_several_providers():
    # A group whose partials map to several providers is checked by
    # testing the whole choice rather than filtering (GroupPlan.single).
    a = group('_A', {1: [spread((2, VCPU, 1), (4, DISK_GB, 1)),
                         spread((2, VCPU, 1), (3, DISK_GB, 1))]})
    b = group('_B', {1: [on(p, (MEMORY_MB, 1)) for p in (1, 3, 4)]})
    assert not a.single
    found = picks(space(a, b, same_subtree=[frozenset({'_A', '_B'})]))
    assert sorted(found, key=repr) == sorted(
        [((2, 4), 1), ((2, 4), 4), ((2, 3), 1)], key=repr)


def test_ancestry_lines_and_subtrees():
    ancestry = search.Ancestry(PARENT)
    assert ancestry.of(4) == {4, 2, 1}
    assert ancestry.of(9) == {9}
    assert ancestry.in_one_subtree({4, 2}) and ancestry.in_one_subtree({4})
    assert ancestry.in_one_subtree({1, 3, 4})
    assert not ancestry.in_one_subtree({3, 4})
    assert not ancestry.in_one_subtree({6, 4})
    assert 4 in ancestry.lines           # computed once, kept
    options = [on(p) for p in (1, 2, 3, 4, 6)]
    assert [q.providers[0] for q in ancestry.joining(options, [4])] == [
        1, 2, 4]
    assert [q.providers[0] for q in ancestry.joining(options, [2])] == [
        1, 2, 4]
    assert [q.providers[0] for q in ancestry.joining(options, [3, 4])] == [
        1]


# -- the pre-1.29 one-provider-per-tree rule ---------------------------------

def test_before_1_29_a_tree_contributes_one_provider():
    unsuffixed = group('', {1: [spread((1, VCPU, 1), (2, DISK_GB, 10)),
                                spread((1, VCPU, 1), (9, DISK_GB, 10)),
                                on(1, (VCPU, 1), (DISK_GB, 10))]})
    assert sorted(picks(space(unsuffixed)), key=repr) == sorted(
        [((1, 2),), ((1, 9),), (1,)], key=repr)
    assert sorted(picks(space(unsuffixed, one_provider_per_tree=True)),
                  key=repr) == sorted([((1, 9),), (1,)], key=repr)


def test_before_1_29_groups_may_share_a_provider_but_not_a_tree():
    a = group('_A', {1: [on(2, (VCPU, 1)), on(3, (VCPU, 1))]})
    b = group('_B', {1: [on(2, (DISK_GB, 1))]})
    assert sorted(picks(space(a, b))) == [(2, 2), (3, 2)]
    assert picks(space(a, b, one_provider_per_tree=True)) == [(2, 2)]


def test_before_1_29_the_tree_is_free_again_after_backing_out():
    a = group('_A', {1: [on(3, (VCPU, 1)), on(2, (VCPU, 1))]})
    b = group('_B', {1: [on(2, (DISK_GB, 1)), on(9, (DISK_GB, 1))]})
    c = group('_C', {1: [on(2, (MEMORY_MB, 1)), on(4, (MEMORY_MB, 1))]})
    found = picks(space(a, b, c, one_provider_per_tree=True))
    assert sorted(found) == [(2, 2, 2), (2, 9, 2)]


# -- dedupe ------------------------------------------------------------------

def test_a_sharing_provider_offered_at_two_anchors_is_one_candidate():
    disk = group('', {1: [on(9, (DISK_GB, 10))], 5: [on(9, (DISK_GB, 10))]})
    assert picks(space(disk), [1, 5], dedupe=False) == [(9,), (9,)]
    assert picks(space(disk), [1, 5]) == [(9,)]
    assert picks(space(disk), [1, 5], round_robin=True) == [(9,)]


def test_dedupe_keeps_candidates_that_map_groups_differently():
    a = group('_A', {1: [on(9, (DISK_GB, 1)), on(2, (DISK_GB, 1))],
                     5: [on(9, (DISK_GB, 1))]})
    b = group('_B', {1: [on(2, (DISK_GB, 1)), on(9, (DISK_GB, 1))],
                     5: [on(9, (DISK_GB, 1))]})
    room = {(2, DISK_GB): 9, (9, DISK_GB): 9}
    assert len(picks(space(a, b, room=room), [1, 5], dedupe=False)) == 5
    found = picks(space(a, b, room=room), [1, 5])
    assert sorted(found) == [(2, 2), (2, 9), (9, 2), (9, 9)]


# -- anchor order: depth-first, round-robin, randomised ----------------------

def _per_anchor(counts):
    """One group with ``counts[anchor]`` candidates at each anchor, each
    on a provider numbered ``anchor * 100 + n``."""
    return group('', {anchor: [on(anchor * 100 + n, (VCPU, 1))
                               for n in range(count)]
                      for anchor, count in counts.items()})


def _anchors_of(found):
    """The anchors of candidates made from ``_per_anchor`` partials."""
    return [providers[0] // 100 for providers in found]


@pytest.mark.parametrize('groups', [1, 2])
def test_depth_first_and_round_robin_order(groups):
    plans = [_per_anchor({1: 3, 2: 1, 3: 2})]
    if groups == 2:
        plans.append(group('_B', {a: [on(a, (DISK_GB, 1))]
                                  for a in (1, 2, 3)}))
    s = space(*plans)
    assert _anchors_of(picks(s, [1, 2, 3])) == [1, 1, 1, 2, 3, 3]
    assert _anchors_of(picks(s, [3, 1, 2], round_robin=True)) == [
        3, 1, 2, 3, 1, 1]


def test_round_robin_spreads_a_capped_result_over_anchors():
    s = space(_per_anchor({1: 100, 2: 1, 3: 1, 4: 50}))
    found = picks(s, [1, 2, 3, 4], limit=6, round_robin=True)
    assert _anchors_of(found) == [1, 2, 3, 4, 1, 4]
    assert _anchors_of(picks(s, [1, 2, 3, 4], limit=6)) == [1] * 6


def test_randomised_anchor_order_is_fair_to_every_anchor():
    """What ``randomize_allocation_candidates`` does: shuffle the anchors,
    take round-robin up to the limit. Every anchor, however many
    candidates it has, is as likely as any other to be in the result."""
    counts = {1: 40, 2: 1, 3: 5, 4: 1, 5: 20, 6: 2}
    s = space(_per_anchor(counts))
    rng = random.Random(42)
    chosen = collections.Counter()
    trials = 600
    for _ in range(trials):
        anchors = list(counts)
        rng.shuffle(anchors)
        got = _anchors_of(picks(s, anchors, limit=3, round_robin=True))
        assert len(set(got)) == 3          # three anchors, one each
        chosen.update(got)
    expected = trials * 3 / len(counts)    # 300 each
    assert all(abs(n - expected) < expected * 0.2
               for n in chosen.values()), chosen
    assert set(chosen) == set(counts)


# -- every rule together, against a plain product-and-filter search ----------

def _oracle(space_, parent, anchors):
    """Valid combinations per anchor by brute force, as multisets of
    ``frozenset((suffix, partial))``, from the rules stated plainly."""
    def root(p):
        while parent[p] is not None:
            p = parent[p]
        return p

    def line(p):
        found = set()
        while p is not None:
            found.add(p)
            p = parent[p]
        return found

    def one_subtree(providers):
        return any(all(top in line(p) for p in providers)
                   for top in providers)

    groups = space_.groups
    result = []
    for anchor in anchors:
        for combo in itertools.product(
                *[list(g.partials[anchor]) for g in groups]):
            load = collections.Counter()
            for partial in combo:
                for p, rc, amount in partial.amounts:
                    load[p, rc] += amount
            if any(load[p, rc] > space_.room[p, rc]
                   for p, rc in load if rc in space_.shared_classes):
                continue
            isolated = [pt.providers[0] for g, pt in zip(groups, combo)
                        if g.suffix]
            if space_.isolate and len(set(isolated)) < len(isolated):
                continue
            contributing = {p for p, _ in load}
            if space_.one_provider_per_tree and len(
                    {root(p) for p in contributing}) < len(contributing):
                continue
            by_suffix = {g.suffix: pt for g, pt in zip(groups, combo)}
            if not all(one_subtree({p for s in suffixes
                                    for p in by_suffix[s].providers})
                       for suffixes in space_.same_subtree):
                continue
            result.append(frozenset(by_suffix.items()))
    return result


def _rendered(combination):
    """What a client sees of a combination: amounts per provider and
    class, and each group's providers."""
    load = collections.Counter()
    for _, partial in combination:
        for p, rc, amount in partial.amounts:
            load[p, rc] += amount
    return (frozenset(load.items()),
            frozenset((s, frozenset(pt.providers)) for s, pt in combination))


def _random_forest(rng):
    parent, providers = {}, 0
    for _ in range(rng.randint(1, 3)):
        providers += 1
        root, parent[providers] = providers, None
        members = [root]
        for _ in range(rng.randint(0, 4)):
            providers += 1
            parent[providers] = rng.choice(members)
            members.append(providers)
    sharing = None
    if rng.random() < 0.5:
        providers += 1
        sharing, parent[providers] = providers, None
    return parent, sharing


def _random_space(rng):
    """A small random space over a random forest (and perhaps a sharing
    provider offered at every anchor), with its parent map."""
    parent, sharing = _random_forest(rng)
    root_of = {}
    for p in parent:
        r = p
        while parent[r] is not None:
            r = parent[r]
        root_of[p] = r
    anchors = sorted({r for r in root_of.values() if r != sharing})
    isolate = rng.random() < 0.4
    groups, requested = [], collections.Counter()
    for suffix in ['', '_A', '_B', '_C'][rng.randint(0, 1):
                                         rng.randint(2, 4)]:
        classes = rng.sample(range(3), rng.randint(0 if suffix else 1, 2))
        requested.update(classes)
        amounts = [(rc, rng.randint(1, 3)) for rc in classes]
        # The unsuffixed group may spread over providers; a suffixed one
        # does not in practice, but the search must cope (GroupPlan.single).
        single = len(amounts) < 2 or (suffix and (isolate
                                                  or rng.random() < 0.6))
        partials = {}
        for anchor in anchors:
            pool = [p for p in parent if root_of[p] == anchor]
            pool += [sharing] if sharing else []
            if single:
                options = [on(p, *amounts) for p in pool]
            else:
                options = [spread(*[(p, rc, n) for p, (rc, n)
                                    in zip(ps, amounts)])
                           for ps in itertools.product(pool, repeat=2)]
            rng.shuffle(options)
            options = options[:rng.randint(0, 6)]
            if options:
                partials[anchor] = (search.LazyPartials(
                    iter(options), rng.randint(1, 9))
                    if rng.random() < 0.3 else options)
        groups.append(search.GroupPlan(suffix, partials, single=bool(single)))
    shared = frozenset(rc for rc, n in requested.items() if n > 1)
    room = {(p, rc): rng.randint(1, 6) for p in parent for rc in shared}
    suffixed = [g.suffix for g in groups if g.suffix]
    same_subtree = []
    if len(suffixed) >= 2 and rng.random() < 0.5:
        same_subtree.append(frozenset(rng.sample(
            suffixed, rng.randint(2, len(suffixed)))))
    s = search.SearchSpace(
        groups=groups, room=room, root_of=root_of,
        ancestry=search.Ancestry(parent), isolate=isolate,
        same_subtree=same_subtree,
        one_provider_per_tree=rng.random() < 0.3, shared_classes=shared)
    return s, parent


def test_search_matches_a_brute_force_search_on_random_spaces():
    rng = random.Random(1729)
    checked = nonempty = 0
    for _ in range(1000):
        space_, parent = _random_space(rng)
        anchors = space_.anchors()
        rng.shuffle(anchors)
        round_robin = rng.random() < 0.5
        exact = [frozenset(zip(*found)) for found in search.generate(
            space_, anchors, round_robin=round_robin, dedupe=False)]
        expected = _oracle(space_, parent, anchors)
        assert collections.Counter(exact) == collections.Counter(expected)
        distinct = [_rendered(frozenset(zip(*found)))
                    for found in search.generate(
                        space_, anchors, round_robin=round_robin)]
        assert len(distinct) == len(set(distinct))
        assert set(distinct) == {_rendered(c) for c in expected}
        checked += 1
        nonempty += bool(expected)
    assert checked == 1000 and nonempty > 400
