"""Claims: how candidates become Choices and how strategies order them."""

import random

import pytest

from placement.objects.candidates import engine as ac_obj
from placement.objects.candidates import provider_index
from placement.objects.candidates import search as search
from placement.objects import claim as claim_obj

VCPU, DISK = 1, 2
UUID = {10: 'cn1', 20: 'cn2', 30: 'shared'}
NAMES = {VCPU: 'VCPU', DISK: 'DISK_GB'}
SUMMARIES = {
    10: provider_index.Summary('cn1', (('VCPU', 8, 6),), (), None, 'cn1'),
    20: provider_index.Summary('cn2', (('VCPU', 8, 2),), (), None, 'cn2'),
    30: provider_index.Summary('shared', (('DISK_GB', 0, 0),), (), None,
                               'shared'),
}


def _result(candidates):
    return ac_obj.Result(candidates, UUID, NAMES, lambda providers: [
        SUMMARIES[p] for p in sorted(providers)])


def test_template_partial():
    [choice] = claim_obj._choices(_result([
        (('',), (search.Partial((10,), template=((VCPU, 2),)),))]))
    assert choice.allocations == {'cn1': {'VCPU': 2}}
    assert choice.mappings == {'': ['cn1']}
    assert choice.load == 6 / 8


def test_groups_sharing_a_provider_add_up():
    [choice] = claim_obj._choices(_result([
        (('_A', '_B'), (search.Partial((20,), ((20, VCPU, 1),)),
                        search.Partial((20,), ((20, VCPU, 3),))))]))
    assert choice.allocations == {'cn2': {'VCPU': 4}}
    assert choice.mappings == {'_A': ['cn2'], '_B': ['cn2']}


def test_mean_load_and_zero_capacity_counts_full():
    [choice] = claim_obj._choices(_result([
        (('',), (search.Partial((20, 30), ((20, VCPU, 1), (30, DISK, 5))),))
    ]))
    assert choice.allocations == {'cn2': {'VCPU': 1}, 'shared': {'DISK_GB': 5}}
    assert choice.mappings == {'': ['cn2', 'shared']}
    assert choice.load == (2 / 8 + 1.0) / 2


def test_resourceless_group_is_mapped_only():
    [choice] = claim_obj._choices(_result([
        (('', '_N'), (search.Partial((10,), template=((VCPU, 1),)),
                      search.Partial((20,))))]))
    assert choice.allocations == {'cn1': {'VCPU': 1}}
    assert choice.mappings == {'': ['cn1'], '_N': ['cn2']}


def _choice(name, load):
    return claim_obj.Choice({name: {'VCPU': 1}}, {'': [name]}, load)


CHOICES = [_choice('a', 0.5), _choice('b', 0.0), _choice('c', 0.5),
           _choice('d', 0.9)]


@pytest.mark.parametrize('strategy, expected', [
    ('pack', ['d', 'a', 'c', 'b']),
    ('spread', ['b', 'a', 'c', 'd']),
])
def test_ordered_keeps_engine_order_on_ties(strategy, expected):
    ordered = claim_obj.ordered(CHOICES, strategy)
    assert [c.mappings[''][0] for c in ordered] == expected


def test_unknown_strategy():
    with pytest.raises(ValueError):
        claim_obj.ordered(CHOICES, 'first-fit')


def test_default_strategy_is_pack():
    assert claim_obj.DEFAULT_STRATEGY == 'pack'


def _flat_result(used_by_provider, capacity=8):
    """One candidate per provider (ids 1..n, one VCPU partial each),
    with the given VCPU used of ``capacity``."""
    providers = range(1, len(used_by_provider) + 1)
    uuid = {p: 'rp%d' % p for p in providers}
    summaries = {p: provider_index.Summary(
        uuid[p], (('VCPU', capacity, used),), (), None, uuid[p])
        for p, used in zip(providers, used_by_provider)}
    candidates = [(('',), (search.Partial((p,), template=((VCPU, 1),)),))
                  for p in providers]
    return ac_obj.Result(candidates, uuid, NAMES, lambda wanted: [
        summaries[p] for p in sorted(wanted)])


@pytest.mark.parametrize('strategy', claim_obj.STRATEGIES)
@pytest.mark.parametrize('seed', range(20))
def test_best_is_the_first_of_ordered_not_refused(strategy, seed):
    """The heap picks what sorting every Choice picked, ties included
    (few distinct loads make many ties), skipping refused choices."""
    rng = random.Random(seed)
    result = _flat_result([rng.randint(0, 4) for _ in range(40)])
    everything = claim_obj.ordered(claim_obj._choices(result), strategy)
    refused = {claim_obj._key(c) for c in everything[:rng.randint(0, 5)]}
    expected = [c for c in everything if claim_obj._key(c) not in refused]
    assert claim_obj._best(result, strategy, refused) == expected[:1]


def test_best_of_all_refused_is_nothing():
    result = _flat_result([1, 2])
    refused = {claim_obj._key(c) for c in claim_obj._choices(result)}
    assert claim_obj._best(result, 'pack', refused) == []


def test_best_builds_only_the_choices_it_pops(monkeypatch):
    built = []
    choice = claim_obj._choice
    monkeypatch.setattr(claim_obj, '_choice', lambda *args: built.append(1)
                        or choice(*args))
    result = _flat_result(list(range(8)) * 100)
    [first] = claim_obj._best(result, 'pack', frozenset())
    assert first.load == 7 / 8 and first.mappings == {'': ['rp8']}
    assert len(built) == 1


def test_strategies_are_the_schema_enum():
    from placement.schemas import claim as claim_schema
    assert claim_schema.POST_V1_38['properties']['strategy']['enum'] == [
        'pack', 'spread']
    assert claim_schema.STRATEGIES == list(claim_obj.STRATEGIES)
