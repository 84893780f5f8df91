"""The packing behind GET /capacity/fit, on hand-made candidates."""

import itertools
import random

from placement.objects.candidates import fit as capacity_fit

V0, V1, M0, M1 = ('n0', 'VCPU'), ('n1', 'VCPU'), ('n0', 'MEM'), ('n1', 'MEM')


def solve(candidates, free, sharing=None, exact=True):
    """The knot's packing, asserted to be ``exact`` (or not)."""
    n, found_exact = capacity_fit._Knot(*capacity_fit._shape(
        candidates, free.__getitem__, sharing)).solve()
    assert found_exact is exact
    return n


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


def test_a_search_out_of_work_answers_a_packing_not_exact(monkeypatch):
    # Was a refusal (FitTooComplex, a 400): now the best packing found,
    # which fits (at most the optimum), flagged as not exact.
    monkeypatch.setattr(capacity_fit, 'MAX_WORK', 5)
    candidates = [((V0, 1), (M0, 1)), ((V0, 1), (M1, 1)),
                  ((V1, 1), (M0, 1))]
    free = {V0: 3, V1: 3, M0: 3, M1: 1}
    found = solve(candidates, free, exact=False)
    assert 0 < found <= brute(candidates, free)


def test_two_sharing_providers_for_many_trees_are_counted_exactly():
    pools = [('pool-a', 'DISK_GB'), ('pool-b', 'DISK_GB')]
    candidates = [((('cn%d' % i, 'VCPU'), 1), (pool, 10))
                  for i in range(600) for pool in pools]
    free = {('cn%d' % i, 'VCPU'): 4 for i in range(600)}
    free.update({pools[0]: 1005, pools[1]: 1005})
    # 100 instances on each pool: their 5 spare units do not add up.
    assert solve(candidates, free) == 200


def _pools_fleet(rng, hosts, pools):
    """Hosts (VCPU and MEMORY_MB of their own) each able to use one or
    two DISK_GB pools of tight room: the greedy packing misses."""
    candidates, free = [], {}
    for i in range(hosts):
        vcpu, mem = ('cn%d' % i, 'VCPU'), ('cn%d' % i, 'MEM')
        free[vcpu], free[mem] = rng.randint(1, 4), rng.randint(2, 8)
        reach = {i % pools, rng.randrange(pools)}
        for j in sorted(reach):
            candidates.append(((vcpu, 1), (mem, 2), (('pool%d' % j, 'DISK'),
                                                     3)))
    for j in range(pools):
        free['pool%d' % j, 'DISK'] = rng.randint(3, 30)
    return candidates, free


def test_hosts_on_pools_are_a_flow_matching_brute_force():
    for seed in range(40):
        rng = random.Random(seed)
        candidates, free = _pools_fleet(rng, rng.randint(2, 3), 2)
        sharing = {'pool0', 'pool1'}
        assert solve(candidates, free, sharing) == brute(
            candidates, free, most=4), seed


def test_hosts_on_pools_beyond_the_search_are_exact(monkeypatch):
    # 1,000 hosts linked through 40 pools: a knot of some 1,500
    # candidates the greedy packing does not settle, beyond MAX_DEPTH
    # (it was refused with a 400). As a flow it is exact: the hosts
    # reaching each pool are set so that its answer is known.
    candidates, free = [], {}
    pools = ['pool%d' % j for j in range(40)]
    for i in range(1000):
        vcpu = ('cn%d' % i, 'VCPU')
        free[vcpu] = 1
        # Host i reaches pool i % 40, and every other host the next.
        for j in sorted({i % 40, (i % 40 + i % 2) % 40}):
            candidates.append(((vcpu, 1), ((pools[j], 'DISK'), 10)))
    # Each pool has room for 30 instances: 1,200 in all, but only the
    # 1,000 hosts to hold them.
    free.update({(pool, 'DISK'): 300 for pool in pools})
    knot = capacity_fit._Knot(*capacity_fit._shape(
        candidates, free.__getitem__))
    assert len(knot.shape) > capacity_fit.MAX_DEPTH
    assert knot._greedy() < knot._bound(0, knot.room, pairs=True)
    assert solve(candidates, free, set(pools)) == 1000
    # The pools the tight way round: 20 instances each, 800 in all.
    free.update({(pool, 'DISK'): 200 for pool in pools})
    assert solve(candidates, free, set(pools)) == 800


def test_overlapping_parts_are_not_a_flow():
    # Two NUMA nodes' candidates share the PF: the search, not a flow.
    pf, pool = ('pf', 'VF'), ('pool', 'DISK')
    candidates = [((V0, 1), (pf, 1), (pool, 1)), ((V1, 1), (pf, 1),
                                                   (pool, 1)),
                  ((V0, 1), (M0, 1), (pool, 1))]
    knot = capacity_fit._Knot(*capacity_fit._shape(
        candidates, {V0: 2, V1: 2, M0: 1, pf: 3, pool: 9}.__getitem__,
        {'pool'}))
    assert knot._flow() is None


def test_max_flow_matches_brute_force():
    for seed in range(60):
        rng = random.Random(seed)
        left = [rng.randint(0, 5) for _ in range(rng.randint(1, 4))]
        right = [rng.randint(0, 5) for _ in range(rng.randint(1, 3))]
        edges = sorted({(rng.randrange(len(left)), rng.randrange(len(right)))
                        for _ in range(rng.randint(1, 6))})
        best = 0
        for counts in itertools.product(range(6), repeat=len(edges)):
            if all(sum(c for c, (i, _) in zip(counts, edges) if i == a)
                   <= cap for a, cap in enumerate(left)) and all(
                    sum(c for c, (_, j) in zip(counts, edges) if j == b)
                    <= cap for b, cap in enumerate(right)):
                best = max(best, sum(counts))
        assert capacity_fit._max_flow(left, right, edges) == best, seed
