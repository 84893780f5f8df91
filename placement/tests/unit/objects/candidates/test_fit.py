"""The packing behind GET /capacity/fit, on hand-made candidates."""

import itertools

import pytest

from placement import exception
from placement.objects.candidates import fit as capacity_fit

V0, V1, M0, M1 = ('n0', 'VCPU'), ('n1', 'VCPU'), ('n0', 'MEM'), ('n1', 'MEM')


def solve(candidates, free):
    return capacity_fit._Knot(
        *capacity_fit._shape(candidates, free.__getitem__)).solve()


def brute(candidates, free, most=8):
    best = 0
    for counts in itertools.product(range(most + 1), repeat=len(candidates)):
        used = {}
        for count, candidate in zip(counts, candidates):
            for pair, amount in candidate:
                used[pair] = used.get(pair, 0) + count * amount
        if all(used[pair] <= free[pair] for pair in used):
            best = max(best, sum(counts))
    return best


def test_greedy_is_not_enough():
    # Taking the first candidate blocks both others: the search finds
    # the two that fit together.
    candidates = [((V0, 1), (M0, 1)), ((V0, 1), (M1, 1)),
                  ((V1, 1), (M0, 1))]
    free = {V0: 1, V1: 1, M0: 1, M1: 1}
    assert solve(candidates, free) == 2 == brute(candidates, free)


def test_spread_over_two_numa_nodes():
    candidates = [((v, 1), (m, 2)) for v in (V0, V1) for m in (M0, M1)]
    free = {V0: 3, V1: 1, M0: 2, M1: 6}
    assert solve(candidates, free) == 4 == brute(candidates, free)


def test_consolidated_amounts():
    # Two groups on one node place 2 VCPU there, or 1 on each node.
    candidates = [((V0, 2),), ((V0, 1), (V1, 1)), ((V1, 2),)]
    free = {V0: 3, V1: 2}
    assert solve(candidates, free) == 2 == brute(candidates, free)


def test_one_sharing_provider_for_many_trees_is_greedy_and_fast():
    disk = ('pool', 'DISK_GB')
    candidates = [((('cn%d' % i, 'VCPU'), 1), (disk, 10))
                  for i in range(1000)]
    free = {('cn%d' % i, 'VCPU'): 4 for i in range(1000)}
    free[disk] = 25000
    assert solve(candidates, free) == 2500


def test_knots_split_candidates_sharing_nothing():
    a, b, c = ((V0, 1),), ((V0, 1), (M0, 1)), ((V1, 1),)
    knots = capacity_fit._knots([a, b, c])
    assert sorted(map(sorted, knots)) == sorted([sorted([a, b]), [c]])


def test_too_many_states_are_refused(monkeypatch):
    monkeypatch.setattr(capacity_fit, 'MAX_WORK', 5)
    candidates = [((V0, 1), (M0, 1)), ((V0, 1), (M1, 1)),
                  ((V1, 1), (M0, 1))]
    with pytest.raises(exception.FitTooComplex):
        solve(candidates, {V0: 3, V1: 3, M0: 3, M1: 1})


def test_two_sharing_providers_for_many_trees_are_counted_exactly():
    pools = [('pool-a', 'DISK_GB'), ('pool-b', 'DISK_GB')]
    candidates = [((('cn%d' % i, 'VCPU'), 1), (pool, 10))
                  for i in range(600) for pool in pools]
    free = {('cn%d' % i, 'VCPU'): 4 for i in range(600)}
    free.update({pools[0]: 1005, pools[1]: 1005})
    # 100 instances on each pool: their 5 spare units do not add up.
    assert solve(candidates, free) == 200
