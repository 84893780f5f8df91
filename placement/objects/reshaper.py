"""The reshaper: inventories and allocations of several providers
replaced in one transaction (api-ref/reshaper.rst, and
api-ref/behaviour-choices.rst, 'Generation of a provider emptied by a
reshape')."""

from placement.db import api as db_api
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import provider_generation


@db_api.writer
def _reshape(ctx, inventories, requests):
    # Every provider's generation is checked under the lock, including
    # those given empty inventories, which skip the interim step.
    locked = provider_generation.lock(
        ctx, [provider.id for provider, _, _ in inventories])
    for provider, _records, generation in inventories:
        if locked.get(provider.id) != generation:
            raise exception.ResourceProviderConcurrentUpdateDetected()
    writes = alloc_obj.prepare(ctx, requests)
    rp_ids, missing = alloc_obj.known_providers(ctx, writes)
    if missing is not None:
        return missing
    # Interim: current and new inventory together, so allocations can
    # move before classes disappear.
    for provider, records, _generation in inventories:
        if records:
            current = {inventory.resource_class: inventory.record()
                       for inventory in inv_obj.get_all(ctx, provider)}
            inv_obj.replace_all(ctx, provider, {**current, **records})
    alloc_obj.replace(ctx, writes, rp_ids)
    for provider, records, _generation in inventories:
        inv_obj.replace_all(ctx, provider, records)
    return None


def reshape(ctx, inventories, requests, min_capacity):
    """Give each provider of ``inventories`` ((provider, {class: record},
    generation) triples) exactly its new inventory and each consumer of
    ``requests`` (allocation.ConsumerRequest) its new allocations, in one
    transaction.

    The new records pass the check of every inventory write first
    (``inventory.check_records`` with ``min_capacity``; see
    api-ref/behaviour-choices.rst, 'Inventories written by the
    reshaper'). Raises what it and ``inventory.replace_all``,
    ``allocation.prepare`` and ``allocation.replace`` raise, and
    ResourceProviderNotFound (after committing the prepared consumers,
    see api-ref/behaviour-choices.rst, 'Orphan consumers') if an
    allocation names an unknown provider.
    """
    for provider, records, _generation in inventories:
        inv_obj.check_records(
            provider.uuid,
            {name: inv_obj.with_defaults(record)
             for name, record in records.items()}, min_capacity)
    missing = _reshape(ctx, inventories, requests)
    if missing is not None:
        raise missing
