"""Usages by consumer type read while allocations are written."""

import uuid

import pytest

from placement import context
from placement.db import prepared
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import usage as usage_obj


@pytest.fixture
def provider(ctx):
    rp = rp_obj.create(ctx, str(uuid.uuid4()), 'host')
    inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 100}})
    return rp_obj.get_by_uuid(ctx, rp.uuid)


def _claim(ctx, provider, consumer_type):
    alloc_obj.write(ctx, [alloc_obj.ConsumerRequest(
        dict(uuid=str(uuid.uuid4()), project='proj', user='user',
             generation=None, consumer_type=consumer_type),
        {provider.uuid: {'VCPU': 1}})], 0)


@pytest.mark.parametrize('kept', [None, 'all', 'INSTANCE'])
def test_a_consumer_type_committed_during_the_read(ctx, provider, kept,
                                                   monkeypatch):
    """A write committed while usages are read (a migration starting)
    never leaves a group half counted; it used to answer 500 on
    PostgreSQL, whose statements each see the latest commits."""
    _claim(ctx, provider, 'INSTANCE')
    wrote = []
    rows = prepared.Prepared.rows

    def meanwhile(statement, conn, **values):
        # The usage statements run on the driver's cursor: the write
        # commits right after the first one that sums.
        found = rows(statement, conn, **values)
        if not wrote and 'sum(' in str(statement.stmt).lower():
            wrote.append(True)
            _claim(context.AdminContext(ctx.db), provider, 'MIGRATION')
        return found

    monkeypatch.setattr(prepared.Prepared, 'rows', meanwhile)
    usages = usage_obj.by_consumer_type(ctx, 'proj', consumer_type=kept)
    monkeypatch.undo()
    assert wrote
    for group in usages.values():
        assert group['VCPU'] >= group['consumer_count'] >= 1
    expected = {None: {'INSTANCE', 'MIGRATION'}, 'all': {'all'},
                'INSTANCE': {'INSTANCE'}}[kept]
    assert set(usages) <= expected and usages
