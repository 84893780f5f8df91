"""The reshaper: inventories and allocations of several providers
replaced in one transaction (spec 08 §3)."""

from placement.db import api as db_api
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.objects import inventory as inv_obj


@db_api.writer
def _reshape(ctx, inventories, writes):
    # Interim: current and new inventory together, so allocations can
    # move before classes disappear.
    for provider, records, generation in inventories:
        if records:
            current = {inventory.resource_class: inventory.record()
                       for inventory in inv_obj.get_all(ctx, provider)}
            inv_obj.replace_all(ctx, provider, {**current, **records},
                                generation)
    alloc_obj.replace(ctx, writes)
    for provider, records, _generation in inventories:
        inv_obj.replace_all(ctx, provider, records)


def reshape(ctx, inventories, writes):
    """Give each provider of ``inventories`` ((provider, {class: record},
    generation) triples) exactly its new inventory and each consumer of
    ``writes`` (ConsumerAllocations) its new allocations, atomically.

    Inventory capacity rules are not applied. Raises what
    ``inventory.replace_all`` and ``allocation.replace`` raise;
    ResourceProviderNotFound before anything is written if an allocation
    names an unknown provider.
    """
    alloc_obj.provider_ids(ctx, alloc_obj.request_uuids(writes))
    with consumer_obj.removed_on_failure(ctx, [w.consumer for w in writes]):
        _reshape(ctx, inventories, writes)
