"""Object-layer tests for inventories and resource classes."""

import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement import exception
from placement.objects import inventory as inv_obj
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures


@pytest.fixture
def provider(ctx):
    rp = rp_obj.create(ctx, str(uuid.uuid4()), 'inventoried')
    inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 8},
                                  'MEMORY_MB': {'total': 1024},
                                  'DISK_GB': {'total': 100}})
    return rp_obj.get_by_uuid(ctx, rp.uuid)


def _allocate(ctx, provider, class_id, used):
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.allocations).values(
            resource_provider_id=provider.id, consumer_id=str(uuid.uuid4()),
            resource_class_id=class_id, used=used))


def test_classes_with_allocations_cannot_be_dropped(ctx, provider):
    _allocate(ctx, provider, 0, 2)
    _allocate(ctx, provider, 1, 512)
    with pytest.raises(exception.InventoryInUse) as caught:
        inv_obj.replace_all(ctx, provider, {'DISK_GB': {'total': 100}})
    assert str(caught.value) == (
        "Inventory for 'VCPU, MEMORY_MB' on resource provider '%s' in use."
        % provider.uuid)
    with pytest.raises(exception.InventoryInUse):
        inv_obj.delete(ctx, provider, 'VCPU')
    with pytest.raises(exception.InventoryInUse):
        inv_obj.delete_all(ctx, provider)
    # Nothing was changed by the refused writes.
    assert {i.resource_class for i in inv_obj.get_all(ctx, provider)} == {
        'VCPU', 'MEMORY_MB', 'DISK_GB'}
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 1


def test_reducing_total_below_usage_is_allowed(ctx, provider):
    _allocate(ctx, provider, 0, 6)
    inv_obj.update(ctx, provider, 'VCPU', {'total': 4}, 1, min_capacity=1)
    assert inv_obj.usages(ctx, provider) == {
        'VCPU': 6, 'MEMORY_MB': 0, 'DISK_GB': 0}


def test_usages_sum_every_allocation(ctx, provider):
    _allocate(ctx, provider, 0, 2)
    _allocate(ctx, provider, 0, 3)
    assert inv_obj.usages(ctx, provider)['VCPU'] == 5


def test_replace_without_capacity_rule(ctx, provider):
    """The reshaper's way: no capacity rule at all."""
    inv_obj.replace_all(ctx, provider, {'VCPU': {'total': 4, 'reserved': 10}})
    assert inv_obj.get_one(ctx, provider, 'VCPU').reserved == 10


def test_custom_class_ids_follow_the_highest(ctx):
    rc_obj.create(ctx, 'CUSTOM_A')
    rc_obj.create(ctx, 'CUSTOM_B')
    ids = {rc.name: rc.id for rc in rc_obj.list_classes(ctx)}
    assert (ids['VCPU'], ids['CUSTOM_A'], ids['CUSTOM_B']) == (0, 10000,
                                                               10001)
    rc_obj.destroy(ctx, 'CUSTOM_A')
    rc_obj.create(ctx, 'CUSTOM_C')
    assert rc_obj.get_by_name(ctx, 'CUSTOM_C').id == 10002


def test_custom_class_id_collision_is_retried(ctx, monkeypatch):
    """An id another writer took between our read and insert is skipped."""
    rc_obj.create(ctx, 'CUSTOM_OTHER')                # takes 10000
    stale = iter([10000])
    real = rc_obj._next_custom_id
    monkeypatch.setattr(rc_obj, '_next_custom_id',
                        lambda ctx: next(stale, None) or real(ctx))
    rc_obj.create(ctx, 'CUSTOM_MINE')
    assert rc_obj.get_by_name(ctx, 'CUSTOM_MINE').id == 10001


def test_custom_class_id_retries_are_bounded(ctx, monkeypatch):
    rc_obj.create(ctx, 'CUSTOM_OTHER')
    monkeypatch.setattr(rc_obj, '_next_custom_id', lambda ctx: 10000)
    with pytest.raises(exception.MaxDBRetriesExceeded):
        rc_obj.create(ctx, 'CUSTOM_MINE')
    assert 'CUSTOM_MINE' not in {rc.name for rc in rc_obj.list_classes(ctx)}


def test_replaced_records_are_written_by_one_statement(ctx, provider):
    sent = fixtures.statements_sent(
        ctx, inv_obj.replace_all, ctx, provider, {
            'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 2048},
            'DISK_GB': {'total': 100, 'reserved': 5},
            'IPV4_ADDRESS': {'total': 4}})
    updates = [s for s in sent if s.startswith('UPDATE inventories')]
    inserts = [s for s in sent if s.startswith('INSERT INTO inventories')]
    assert (len(updates), len(inserts)) == (1, 1), sent
    assert {i.resource_class: (i.total, i.reserved)
            for i in inv_obj.get_all(ctx, provider)} == {
        'VCPU': (16, 0), 'MEMORY_MB': (2048, 0), 'DISK_GB': (100, 5),
        'IPV4_ADDRESS': (4, 0)}


def test_standard_class_ids_need_no_statement(ctx):
    rc_obj.create(ctx, 'CUSTOM_GOLD')
    sent = fixtures.statements_sent(
        ctx, rc_obj.ids_by_name, ctx, ['VCPU', 'DISK_GB'])
    assert [s for s in sent if 'resource_classes' in s] == []
    ids = rc_obj.ids_by_name(ctx, ['DISK_GB', 'CUSTOM_GOLD', 'VCPU'])
    with ctx.db.transaction(write=False) as conn:
        stored = dict(conn.execute(sa.select(
            tables.resource_classes.c.name,
            tables.resource_classes.c.id)).all())
    assert ids == {name: stored[name] for name in ids}
    with pytest.raises(exception.ResourceClassNotFound) as caught:
        rc_obj.ids_by_name(ctx, ['VCPU', 'CUSTOM_NOPE', 'CUSTOM_GOLD'])
    assert caught.value.kwargs['name'] == 'CUSTOM_NOPE'


def test_replace_by_uuid_finds_and_locks_the_provider_in_one_statement(
        ctx, provider):
    records = {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 2048},
               'DISK_GB': {'total': 100, 'reserved': 1}}
    sent = fixtures.statements_sent(
        ctx, inv_obj.replace_all_by_uuid, ctx, provider.uuid, records,
        provider.generation, 1, prepared_too=True)
    reads = [s for s in sent if s.startswith(('SELECT', 'UPDATE'))
             and 'FROM resource_providers' in s]
    assert len(reads) == 1, sent
    if ctx.db.engine.dialect.update_returning:
        # The lock bumps the generation: lock, existing rows, update.
        assert reads[0].startswith('UPDATE resource_providers'), sent
        assert len(sent) == 3, sent
    else:
        assert len(sent) == 4, sent     # lock, bump, existing rows, update
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == (
        provider.generation + 1)
    assert {i.resource_class: (i.total, i.reserved)
            for i in inv_obj.get_all(ctx, provider)} == {
        'VCPU': (16, 0), 'MEMORY_MB': (2048, 0), 'DISK_GB': (100, 1)}


def test_replace_by_uuid_of_an_unknown_provider(ctx):
    with pytest.raises(exception.ResourceProviderNotFound):
        inv_obj.replace_all_by_uuid(ctx, str(uuid.uuid4()),
                                    {'VCPU': {'total': 1}}, 0, 1)
    with pytest.raises(exception.ResourceProviderNotFound):
        inv_obj.replace_all_by_uuid(ctx, 'nul\x00', {}, 0, 1)


def test_replace_by_uuid_checks_the_generation(ctx, provider):
    with pytest.raises(exception.ResourceProviderGenerationMismatch):
        inv_obj.replace_all_by_uuid(ctx, provider.uuid, {},
                                    provider.generation - 1, 1)
    assert len(inv_obj.get_all(ctx, provider)) == 3
    # The bump the lock made is rolled back with the refused write.
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == (
        provider.generation)


def test_replace_by_uuid_returns_the_new_generation(ctx, provider):
    assert inv_obj.replace_all_by_uuid(
        ctx, provider.uuid, {'VCPU': {'total': 4}}, provider.generation,
        1) == provider.generation + 1 == rp_obj.get_by_uuid(
            ctx, provider.uuid).generation
