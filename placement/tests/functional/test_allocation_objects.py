"""Object-layer tests for consumers and allocation writes: atomicity,
the provider-race retry and consumer generation races."""

import uuid

import pytest

from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.objects import inventory as inv_obj
from placement.objects import reshaper as reshaper_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import usage as usage_obj


@pytest.fixture
def provider(ctx):
    rp = rp_obj.create(ctx, str(uuid.uuid4()), 'compute')
    inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 2}})
    return rp_obj.get_by_uuid(ctx, rp.uuid)


def _write(ctx, provider, amounts, retries=0):
    """Write {consumer uuid: VCPU amount} (0: empty set) as one request."""
    writes = [alloc_obj.ConsumerAllocations(
                  consumer_obj.prepare(ctx, consumer, 'proj', 'user'),
                  {provider.uuid: {'VCPU': amount}} if amount else {})
              for consumer, amount in amounts.items()]
    alloc_obj.write(ctx, writes, retries)


def _exists(ctx, consumer):
    """Whether a consumer record exists (a null-generation prepare says)."""
    try:
        consumer_obj.prepare(ctx, consumer, 'proj', 'user', generation=None)
    except exception.ConsumerGenerationMismatch:
        return True
    consumer_obj.delete_unused(ctx, [consumer_obj.prepare(
        ctx, consumer, 'proj', 'user')])
    return False


def test_failure_in_last_consumer_writes_nothing(ctx, provider):
    first, second, last = (str(uuid.uuid4()) for _ in range(3))
    with pytest.raises(exception.InvalidAllocationCapacityExceeded):
        _write(ctx, provider, {first: 1, second: 1, last: 1})
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 1
    assert not any(_exists(ctx, c) for c in (first, second, last))


def test_unknown_class_in_last_consumer_writes_nothing(ctx, provider):
    first, last = str(uuid.uuid4()), str(uuid.uuid4())
    writes = [
        alloc_obj.ConsumerAllocations(
            consumer_obj.prepare(ctx, first, 'proj', 'user'),
            {provider.uuid: {'VCPU': 1}}),
        alloc_obj.ConsumerAllocations(
            consumer_obj.prepare(ctx, last, 'proj', 'user'),
            {provider.uuid: {'CUSTOM_NOPE': 1}})]
    with pytest.raises(exception.ResourceClassNotFound):
        alloc_obj.write(ctx, writes, 0)
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    assert alloc_obj.get_by_consumer(ctx, first).allocations == {}


def test_unknown_provider_keeps_prepared_consumers(ctx, provider):
    """The orphan quirk of spec 11 §5.4."""
    consumer = str(uuid.uuid4())
    writes = [alloc_obj.ConsumerAllocations(
        consumer_obj.prepare(ctx, consumer, 'proj', 'user'),
        {str(uuid.uuid4()): {'VCPU': 1}})]
    with pytest.raises(exception.ResourceProviderNotFound):
        alloc_obj.write(ctx, writes, 0)
    assert _exists(ctx, consumer)


def _losing_races(monkeypatch, losses):
    """Make the first ``losses`` provider compare-and-sets fail."""
    real = rp_obj.increment_generation
    calls = []

    def flaky(ctx, provider_id, expected):
        calls.append(provider_id)
        if len(calls) <= losses:
            raise exception.ResourceProviderConcurrentUpdateDetected()
        return real(ctx, provider_id, expected)
    monkeypatch.setattr(rp_obj, 'increment_generation', flaky)
    return calls


def test_provider_race_is_retried(ctx, provider, monkeypatch):
    calls = _losing_races(monkeypatch, 2)
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2}, retries=2)
    assert len(calls) == 3
    assert inv_obj.usages(ctx, provider) == {'VCPU': 2}
    view = alloc_obj.get_by_consumer(ctx, consumer)
    assert view.generation == 1
    assert view.allocations[provider.uuid]['generation'] == 2


def test_provider_race_gives_up_after_the_retries(ctx, provider,
                                                  monkeypatch):
    calls = _losing_races(monkeypatch, 3)
    consumer = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderConcurrentUpdateDetected):
        _write(ctx, provider, {consumer: 1}, retries=2)
    assert len(calls) == 3
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    monkeypatch.undo()
    assert not _exists(ctx, consumer)


def test_consumer_changed_since_prepared_is_not_retried(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 1})
    stale = consumer_obj.prepare(ctx, consumer, 'proj', 'user')
    _write(ctx, provider, {consumer: 2})
    with pytest.raises(exception.ConsumerGenerationConflict):
        alloc_obj.write(ctx, [alloc_obj.ConsumerAllocations(
            stale, {provider.uuid: {'VCPU': 1}})], 5)
    assert inv_obj.usages(ctx, provider) == {'VCPU': 2}


def test_emptied_consumer_is_deleted_and_providers_bumped(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2})
    _write(ctx, provider, {consumer: 0})
    assert not _exists(ctx, consumer)
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 3


def test_over_capacity_may_stay_but_not_grow(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2})
    inv_obj.update(ctx, provider, 'VCPU', {'total': 1}, 2, min_capacity=1)
    _write(ctx, provider, {consumer: 2})
    with pytest.raises(exception.InvalidAllocationCapacityExceeded):
        _write(ctx, provider, {str(uuid.uuid4()): 1})


def test_usages_by_type(ctx, provider):
    typed = consumer_obj.prepare(ctx, str(uuid.uuid4()), 'proj', 'user',
                                 consumer_type='INSTANCE')
    untyped = consumer_obj.prepare(ctx, str(uuid.uuid4()), 'proj', 'other')
    alloc_obj.write(ctx, [
        alloc_obj.ConsumerAllocations(typed, {provider.uuid: {'VCPU': 1}}),
        alloc_obj.ConsumerAllocations(untyped, {provider.uuid: {'VCPU': 1}}),
    ], 0)
    assert usage_obj.totals(ctx, 'proj') == {'VCPU': 2}
    assert usage_obj.totals(ctx, 'proj', 'other') == {'VCPU': 1}
    assert usage_obj.by_consumer_type(ctx, 'proj') == {
        'INSTANCE': {'VCPU': 1, 'consumer_count': 1},
        'unknown': {'VCPU': 1, 'consumer_count': 1}}
    assert usage_obj.by_consumer_type(ctx, 'proj', consumer_type='all') == {
        'all': {'VCPU': 2, 'consumer_count': 2}}
    assert usage_obj.by_consumer_type(ctx, 'nobody') == {}


def test_reshape_checks_emptied_provider_generation_in_transaction(
        ctx, provider):
    """A provider given empty inventories must still be generation-checked
    under the lock, or a write landing between the handler's check and the
    transaction would be silently overwritten."""
    stale = provider.generation
    inv_obj.replace_all(ctx, provider, {'VCPU': {'total': 4}})
    with pytest.raises(exception.ConcurrentUpdateDetected):
        reshaper_obj.reshape(ctx, [(provider, {}, stale)], [])
    assert inv_obj.get_all(ctx, provider)
