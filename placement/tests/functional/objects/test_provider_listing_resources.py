"""The ``resources`` filter of list_providers, answered by the provider
index, against a plain SQL statement of the capacity rule on random
data (inventory units, reserved amounts, ratios, usage above and below
capacity), and across writes the index must notice."""

import random
import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement import exception
from placement.objects import provider_listing
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj

CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')

# The capacity rule written directly as SQL, the way the filter was
# answered before the index did it: room for ``amount`` of class ``rc``.
_FITS = sa.text('''
    SELECT inv.resource_provider_id FROM inventories inv
    WHERE inv.resource_class_id = :rc
      AND inv.min_unit <= :amount AND inv.max_unit >= :amount
      AND :amount % inv.step_size = 0
      AND COALESCE((SELECT SUM(a.used) FROM allocations a
                    WHERE a.resource_provider_id = inv.resource_provider_id
                      AND a.resource_class_id = inv.resource_class_id), 0)
          + :amount <= (inv.total - inv.reserved) * inv.allocation_ratio
''')


def _sql_answer(ctx, class_ids, resources):
    with ctx.db.transaction(write=False) as conn:
        found = None
        for name, amount in resources.items():
            ids = {row[0] for row in conn.execute(
                _FITS, {'rc': class_ids[name], 'amount': amount})}
            found = ids if found is None else found & ids
    return sorted(found)


def _random_cloud(ctx, rng, count):
    """``count`` providers (some nested) with random inventories and
    usage, written as raw rows."""
    class_ids = rc_obj.ids_by_name(ctx, list(CLASSES))
    providers = []
    for i in range(count):
        parent = rng.choice(providers).uuid if providers and \
            rng.random() < 0.3 else None
        providers.append(rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i,
                                       parent))
    inventories, allocations = [], []
    for provider in providers:
        for name in rng.sample(CLASSES, rng.randint(0, 3)):
            total = rng.randint(1, 64)
            step = rng.choice((1, 1, 2, 4))
            inventories.append(dict(
                resource_provider_id=provider.id,
                resource_class_id=class_ids[name], total=total,
                reserved=rng.randint(0, total), min_unit=rng.randint(1, 4),
                max_unit=rng.randint(1, 80), step_size=step,
                allocation_ratio=rng.choice((1.0, 1.5, 0.5, 16.0))))
            for _ in range(rng.randint(0, 3)):
                allocations.append(dict(
                    resource_provider_id=provider.id,
                    resource_class_id=class_ids[name],
                    consumer_id=str(uuid.uuid4()),
                    used=rng.randint(1, 40)))
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.inventories), inventories)
        if allocations:
            conn.execute(sa.insert(tables.allocations), allocations)
    return class_ids


@pytest.mark.parametrize('seed', range(3))
def test_index_answer_matches_sql_on_random_clouds(ctx, seed):
    rng = random.Random(seed)
    class_ids = _random_cloud(ctx, rng, 60)
    for _ in range(40):
        resources = {name: rng.randint(1, 40)
                     for name in rng.sample(CLASSES, rng.randint(1, 3))}
        got = [p.id for p in provider_listing.list_providers(
            ctx, resources=resources)]
        assert got == _sql_answer(ctx, class_ids, resources), resources


def test_many_fitting_providers_are_filtered_after_reading(ctx, monkeypatch):
    # Past the IN-list bound the rows are filtered in Python: same answer.
    rng = random.Random(7)
    class_ids = _random_cloud(ctx, rng, 80)
    resources = {'VCPU': 4}
    expected = _sql_answer(ctx, class_ids, resources)
    assert len(expected) > 3
    monkeypatch.setattr(provider_listing, '_MAX_IDS_IN_QUERY', 3)
    got = [p.id for p in provider_listing.list_providers(
        ctx, resources=resources)]
    assert got == expected


def test_writes_after_a_listing_are_seen(ctx):
    cn = rp_obj.create(ctx, str(uuid.uuid4()), 'cn')
    assert provider_listing.list_providers(ctx, resources={'VCPU': 1}) == []
    vcpu = rc_obj.ids_by_name(ctx, ['VCPU'])['VCPU']
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.inventories).values(
            resource_provider_id=cn.id, resource_class_id=vcpu, total=4,
            reserved=0, min_unit=1, max_unit=4, step_size=1,
            allocation_ratio=1.0))
    assert [p.name for p in provider_listing.list_providers(
        ctx, resources={'VCPU': 4})] == ['cn']
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.allocations).values(
            resource_provider_id=cn.id, resource_class_id=vcpu,
            consumer_id=str(uuid.uuid4()), used=1))
    assert provider_listing.list_providers(ctx, resources={'VCPU': 4}) == []
    assert [p.name for p in provider_listing.list_providers(
        ctx, resources={'VCPU': 3})] == ['cn']


def test_unknown_class_is_reported_in_request_order(ctx):
    with pytest.raises(exception.ResourceClassNotFound) as caught:
        provider_listing.list_providers(ctx, resources={
            'VCPU': 1, 'CUSTOM_NOPE': 1, 'CUSTOM_ALSO_NOPE': 1})
    assert 'CUSTOM_NOPE' in str(caught.value)
    assert 'ALSO' not in str(caught.value)


def test_class_created_after_the_index_loaded_is_found(ctx):
    provider_listing.list_providers(ctx, resources={'VCPU': 1})
    with pytest.raises(exception.ResourceClassNotFound):
        provider_listing.list_providers(ctx, resources={'CUSTOM_LATE': 1})
    rc_obj.create(ctx, 'CUSTOM_LATE')
    assert provider_listing.list_providers(
        ctx, resources={'CUSTOM_LATE': 1}) == []


def _shown(provider):
    """What a listing shows of a provider, from ``get_by_uuid``."""
    return (provider.id, provider.uuid, provider.name, provider.generation,
            provider.parent_provider_uuid, provider.root_provider_uuid)


@pytest.mark.parametrize('max_ids,chunk', [(500, 1000), (1, 1), (3, 7)])
def test_part_of_a_tree_names_its_parents_and_roots(ctx, monkeypatch,
                                                    max_ids, chunk):
    # Parents and roots outside the listing (or its chunk) are named too,
    # whether fitting providers are filtered by SQL or after reading.
    monkeypatch.setattr(provider_listing, '_MAX_IDS_IN_QUERY', max_ids)
    monkeypatch.setattr(provider_listing, 'LISTING_CHUNK', chunk)
    rng = random.Random(11)
    _random_cloud(ctx, rng, 50)
    everything = {p.id: p for p in provider_listing.list_providers(ctx)}
    assert len(everything) == 50
    for resources in ({'VCPU': 1}, {'DISK_GB': 2}, {'MEMORY_MB': 1}):
        for listed in provider_listing.list_providers(
                ctx, resources=resources):
            assert listed == everything[listed.id]
    for provider in everything.values():
        assert provider[:6] == _shown(rp_obj.get_by_uuid(ctx, provider.uuid))
        (alone,) = provider_listing.list_providers(ctx, uuid=provider.uuid)
        assert alone == provider


def test_a_parent_created_after_its_child_is_named(ctx):
    # Re-parenting (1.37) can give a provider a parent listed after it.
    child = rp_obj.create(ctx, str(uuid.uuid4()), 'child')
    parent = rp_obj.create(ctx, str(uuid.uuid4()), 'parent')
    rp_obj.update(ctx, child, 'child', parent.uuid, allow_reparent=True)
    listed = {row.name: row for row in provider_listing.list_providers(ctx)}
    assert listed['child'].parent_uuid == parent.uuid
    assert listed['child'].root_uuid == parent.uuid
    assert listed['parent'].root_uuid == parent.uuid
