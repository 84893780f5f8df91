"""Partials worked out anchor by anchor (``_FittingPartials``) give
exactly the candidates, in the same order, with the same summaries, as
partials worked out for every matching provider first, on random clouds
and requests."""

import random

import pytest

from placement.handlers import candidate_rendering as rendering
from placement.objects.candidates import engine as ac
from placement.tests.functional.objects.candidates import test_engine

CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
TRAITS = ('CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C')
AGGREGATES = ('X', 'Y', 'Z')


class _Eager(ac._SpaceBuilder):
    def __init__(self, *args, lazy=False, **kwargs):
        super().__init__(*args, lazy=False, **kwargs)


def _cloud(ctx, rng, nested):
    topo = test_engine.Topology(ctx)
    names = []
    for i in range(30):
        parent = None
        if nested and names and rng.random() < 0.4:
            parent = rng.choice(names)
        name = 'rp%d' % i
        inventory = {rc: rng.randint(1, 16)
                     for rc in rng.sample(CLASSES, rng.randint(0, 3))}
        topo.add(name, parent, inventory=inventory,
                 traits=rng.sample(TRAITS, rng.randint(0, 2)),
                 aggs=rng.sample(AGGREGATES, rng.randint(0, 2)))
        names.append(name)
        if 'VCPU' in inventory and rng.random() < 0.5:
            topo.allocate(name, 'VCPU', rng.randint(1, inventory['VCPU']))
    return topo, names


def _group(rng, topo, names, suffix):
    group = ac.RequestGroup(suffix=suffix, resources={
        rc: rng.randint(1, 8)
        for rc in rng.sample(CLASSES, rng.randint(1, 2))})
    if rng.random() < 0.4:
        group.required = [frozenset(rng.sample(TRAITS, rng.randint(1, 2)))]
    if rng.random() < 0.3:
        group.forbidden = frozenset([rng.choice(TRAITS)])
    if rng.random() < 0.4:
        group.member_of = [frozenset(
            topo.aggregate(a) for a in rng.sample(AGGREGATES, 2))]
    if rng.random() < 0.2:
        group.forbidden_aggregates = frozenset([topo.aggregate('Z')])
    if rng.random() < 0.15:
        group.in_tree = topo.by_name[rng.choice(names)].uuid
    return group


def _request(rng, topo, names):
    groups = [_group(rng, topo, names, '')]
    for n in range(rng.randint(0, 2)):
        groups.append(_group(rng, topo, names, str(n + 1)))
    return ac.Request(groups=groups, isolate=rng.random() < 0.5,
                      limit=rng.choice((None, 1, 3, 10)),
                      root_required=tuple(
                          rng.sample(TRAITS, rng.randint(0, 1))))


def _find(topo, request):
    return ac.find(topo.ctx, request, ac.Options(), random,
                   present=rendering.latest)


@pytest.mark.parametrize('nested', [False, True])
@pytest.mark.parametrize('seed', range(2))
def test_lazy_partials_find_what_eager_ones_do(ctx, monkeypatch, seed,
                                               nested):
    rng = random.Random(seed)
    topo, names = _cloud(ctx, rng, nested)
    requests = [_request(rng, topo, names) for _ in range(40)]
    lazy = [_find(topo, request) for request in requests]
    monkeypatch.setattr(ac, '_SpaceBuilder', _Eager)
    eager = [_find(topo, request) for request in requests]
    assert lazy == eager
    assert any(candidates for candidates, _ in lazy)


def test_lazy_only_where_the_search_may_stop_early(ctx, monkeypatch):
    """Without a cap, or with one above the providers that may match,
    every anchor is reached: partials are worked out at once."""
    topo = test_engine.Topology(ctx)
    for i in range(5):
        topo.add('rp%d' % i, inventory={'VCPU': 4})
    made = []

    class Counted(ac._FittingPartials):
        def __init__(self, *args):
            made.append(self)
            super().__init__(*args)
    monkeypatch.setattr(ac, '_FittingPartials', Counted)
    group = ac.RequestGroup(resources={'VCPU': 1})
    found = {}
    for limit in (None, 5, 4, 1):
        made.clear()
        candidates, _ = _find(topo, ac.Request(groups=[group], limit=limit))
        found[limit] = (len(candidates), bool(made))
    assert found == {None: (5, False), 5: (5, False), 4: (4, True),
                     1: (1, True)}
