"""The capacity rule gives one answer wherever it is applied: the
``resources`` filter of list_providers (SQL), the candidates index and
allocation writes, on the same inventories and usage."""

import uuid

import pytest

from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects.candidates import provider_index
from placement.objects import capacity
from placement.objects import inventory as inv_obj
from placement.objects import provider_listing
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj

#: (total, reserved, min_unit, max_unit, step_size, allocation_ratio), used
RECORDS = [
    ((10, 1, 1, 100, 1, 1.5), 2),     # 13 usable, 11 free
    ((8, 0, 2, 6, 2, 1.0), 0),        # units: 2, 4, 6
    ((4, 0, 1, 20, 1, 4.0), 15),      # 16 usable, 1 free
    ((5, 2, 3, 9, 3, 0.5), 0),        # 1 usable: nothing fits
    ((12, 0, 1, 12, 5, 1.25), 0),     # 15 usable, steps of 5
    ((6, 6, 1, 6, 1, 1.0), 0),        # all reserved
]
AMOUNTS = range(1, 18)


def _write(ctx, provider, amount):
    alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
        dict(uuid=str(uuid.uuid4()), project='p', user='u'),
        {provider.uuid: {'VCPU': amount}})], 0)


@pytest.fixture
def providers(ctx):
    made = []
    for i, (record, used) in enumerate(RECORDS):
        provider = rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
        total, reserved, min_unit, max_unit, step, ratio = record
        # The reshaper's way: no minimum capacity, then allocate.
        inv_obj.replace_all(ctx, provider, {'VCPU': dict(
            total=total, reserved=reserved, min_unit=min_unit,
            max_unit=max_unit, step_size=step, allocation_ratio=ratio)})
        if used:
            _write(ctx, provider, used)
        made.append(rp_obj.get_by_uuid(ctx, provider.uuid))
    return made


def _expected(amount):
    names = set()
    for i, (record, used) in enumerate(RECORDS):
        total, reserved, min_unit, max_unit, step, ratio = record
        offer = capacity.offer(capacity.capacity(total, reserved, ratio),
                               used, min_unit, max_unit, step)
        if capacity.allows(offer, amount):
            names.add('rp%d' % i)
    return names


def _by_sql(ctx, amount):
    return {p.name for p in provider_listing.list_providers(
        ctx, resources={'VCPU': amount})}


def _by_index(ctx, providers, amount):
    index = provider_index.of(ctx.db)
    vcpu = rc_obj.ids_by_name(ctx, ['VCPU'])['VCPU']
    with ctx.db.transaction(write=False) as conn, index.lock:
        index.refresh(conn)
        fitting = set(index.fitting([p.id for p in providers],
                                    [(vcpu, amount)]))
    return {p.name for p in providers if p.id in fitting}


def _by_write(ctx, providers, amount):
    accepted = set()
    for provider in providers:
        consumer = str(uuid.uuid4())
        try:
            alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
                dict(uuid=consumer, project='p', user='u'),
                {provider.uuid: {'VCPU': amount}})], 0)
        except exception.InvalidAllocation:
            continue
        accepted.add(provider.name)
        alloc_obj.delete_by_consumer(ctx, consumer)
    return accepted


def test_sql_index_and_writes_agree(ctx, providers):
    for amount in AMOUNTS:
        expected = _expected(amount)
        assert _by_sql(ctx, amount) == expected, amount
        assert _by_index(ctx, providers, amount) == expected, amount
        assert _by_write(ctx, providers, amount) == expected, amount
    # The grid exercises every reason to refuse, and some acceptance.
    assert _expected(4) == {'rp0', 'rp1'}
    assert _expected(5) == {'rp0', 'rp4'}
    assert _expected(15) == set()
