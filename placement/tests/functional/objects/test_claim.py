"""Object-layer tests for claims: candidates searched and written while
concurrent writes (made here between the search and the write, as
another worker would) take their capacity."""

import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects.candidates import engine as ac_obj
from placement.objects import claim as claim_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj

VCPU_1 = ac_obj.Request(groups=[ac_obj.RequestGroup(resources={'VCPU': 1})])


def _providers(ctx, *totals):
    """A provider with a VCPU inventory per total, in creation order."""
    providers = []
    for number, total in enumerate(totals):
        rp = rp_obj.create(ctx, str(uuid.uuid4()), 'cn%d' % number)
        inv_obj.replace_all(ctx, rp, {'VCPU': {'total': total}})
        providers.append(rp_obj.get_by_uuid(ctx, rp.uuid))
    return providers


def _consumer(generation=None):
    return {'uuid': str(uuid.uuid4()), 'project': 'proj', 'user': 'user',
            'generation': generation, 'consumer_type': 'INSTANCE'}


def _fill(ctx, provider, amount):
    """Another consumer takes ``amount`` VCPU of ``provider``."""
    alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
        _consumer(), {provider.uuid: {'VCPU': amount}})], 0)


def _exists(ctx, consumer):
    with ctx.db.transaction(write=False) as conn:
        return conn.execute(sa.select(tables.consumers.c.id).where(
            tables.consumers.c.uuid == consumer['uuid'])).first() is not None


def _used(ctx, provider):
    return inv_obj.usages(ctx, provider)['VCPU']


def test_claim_writes_the_first_candidate(ctx):
    first, second = _providers(ctx, 4, 4)
    consumer = _consumer()
    claimed = claim_obj.claim(ctx, consumer, VCPU_1, ac_obj.Options())
    assert claimed.tries == 1
    assert claimed.mappings == {'': [first.uuid]}
    assert claimed.view.allocations == {
        first.uuid: {'generation': 2, 'resources': {'VCPU': 1}}}
    assert claimed.view.generation == 1
    assert (_used(ctx, first), _used(ctx, second)) == (1, 0)


def _behind(ctx, stale, always=False):
    """A search that answers ``stale`` (choices found before concurrent
    writes) first, or always, then searches for real."""
    calls = []

    def search(_refused):
        calls.append(1)
        if always or len(calls) == 1:
            return stale
        return claim_obj.ordered(
            claim_obj.candidates(ctx, VCPU_1, ac_obj.Options()), 'pack')
    search.calls = calls
    return search


def test_taken_candidate_spills_to_the_next(ctx):
    first, second = _providers(ctx, 2, 2)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    assert [list(c.allocations) for c in stale] == [[first.uuid],
                                                    [second.uuid]]
    _fill(ctx, first, 2)  # after the search, before the write
    search = _behind(ctx, stale)
    claimed = claim_obj.write_one(ctx, _consumer(), search)
    assert claimed.tries == 2
    assert len(search.calls) == 2
    assert claimed.mappings == {'': [second.uuid]}
    assert (_used(ctx, first), _used(ctx, second)) == (2, 1)


def test_refusal_searches_again_rather_than_trusting_the_old_order(ctx):
    """The first search is behind two writes: the second search knows
    the second candidate is full too and goes to the third at once, so
    two writes suffice (walking the first search's order, a claim gave
    up while room remained)."""
    providers = _providers(ctx, 1, 1, 1)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    _fill(ctx, providers[0], 1)
    _fill(ctx, providers[1], 1)
    claimed = claim_obj.write_one(ctx, _consumer(), _behind(ctx, stale),
                                  tries=2)
    assert (claimed.tries, claimed.mappings) == (
        2, {'': [providers[2].uuid]})


def test_all_taken_leaves_nothing_behind(ctx):
    providers = _providers(ctx, 1, 1, 1)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    for provider in providers:
        _fill(ctx, provider, 1)
    consumer = _consumer()
    # The new search finds nothing: nothing fits any more.
    with pytest.raises(exception.NoClaimCandidates):
        claim_obj.write_one(ctx, consumer, _behind(ctx, stale))
    assert not _exists(ctx, consumer)
    assert [_used(ctx, p) for p in providers] == [1, 1, 1]


def test_refused_choices_are_not_written_again(ctx):
    providers = _providers(ctx, 1, 1)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    for provider in providers:
        _fill(ctx, provider, 1)
    search = _behind(ctx, stale, always=True)
    with pytest.raises(exception.NoClaimCandidates):
        claim_obj.write_one(ctx, _consumer(), search)
    assert len(search.calls) == 3


def test_writes_are_bounded(ctx):
    providers = _providers(ctx, 1, 1, 1)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    for provider in providers[:2]:
        _fill(ctx, provider, 1)
    with pytest.raises(exception.ClaimCandidatesTaken) as caught:
        claim_obj.write_one(ctx, _consumer(),
                            _behind(ctx, stale, always=True), tries=2)
    assert str(caught.value) == ('Concurrent writes took the capacity of '
                                 'the 2 candidates tried.')
    assert _used(ctx, providers[2]) == 0


def test_deleted_provider_is_skipped(ctx):
    first, second = _providers(ctx, 2, 2)
    stale = claim_obj.candidates(ctx, VCPU_1, ac_obj.Options())
    rp_obj.destroy(ctx, first.uuid)
    claimed = claim_obj.write_one(ctx, _consumer(), _behind(ctx, stale))
    assert (claimed.tries, claimed.mappings) == (2, {'': [second.uuid]})
    # The consumer was made once, by the write that succeeded.
    assert claimed.view.generation == 1


def test_consumer_generation_mismatch_stops_at_once(ctx):
    first, second = _providers(ctx, 2, 2)
    consumer = _consumer(generation=4)
    with pytest.raises(exception.ConsumerGenerationMismatch):
        claim_obj.claim(ctx, consumer, VCPU_1, ac_obj.Options())
    assert (_used(ctx, first), _used(ctx, second)) == (0, 0)
    assert not _exists(ctx, consumer)


def test_no_candidates(ctx):
    _providers(ctx, 2)
    request = ac_obj.Request(
        groups=[ac_obj.RequestGroup(resources={'VCPU': 3})])
    with pytest.raises(exception.NoClaimCandidates):
        claim_obj.claim(ctx, _consumer(), request, ac_obj.Options())


def test_existing_allocations_replaced(ctx):
    first, second = _providers(ctx, 2, 2)
    consumer = _consumer()
    claim_obj.claim(ctx, consumer, VCPU_1, ac_obj.Options())
    moved = dict(consumer, generation=1)
    request = ac_obj.Request(groups=[ac_obj.RequestGroup(
        resources={'VCPU': 2}, in_tree=second.uuid)])
    claimed = claim_obj.claim(ctx, moved, request, ac_obj.Options())
    assert list(claimed.view.allocations) == [second.uuid]
    assert claimed.view.generation == 2
    assert (_used(ctx, first), _used(ctx, second)) == (0, 2)


@pytest.mark.parametrize('strategy, expected', [('pack', 1), ('spread', 0)])
def test_strategy_orders_by_load(ctx, strategy, expected):
    providers = _providers(ctx, 4, 4)
    _fill(ctx, providers[1], 1)
    claimed = claim_obj.claim(ctx, _consumer(), VCPU_1, ac_obj.Options(),
                              strategy)
    assert claimed.mappings == {'': [providers[expected].uuid]}
