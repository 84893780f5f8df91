"""Usages by consumer type read while allocations are written."""

import random
import uuid

import pytest
import sqlalchemy as sa

from placement import context
from placement.db import prepared
from placement.db import tables
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


def _random_cloud(ctx, rng):
    """Consumers of a few projects, users and types (or none) with random
    allocations, written as rows; returns the allocations as (project,
    user, type, consumer, class, used), a consumer without a record with
    project None."""
    names = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'SRIOV_NET_VF']
    with ctx.db.transaction(write=True) as conn:
        classes = dict(conn.execute(
            sa.select(tables.resource_classes.c.name,
                      tables.resource_classes.c.id)
            .where(tables.resource_classes.c.name.in_(names))).all())
        conn.execute(sa.insert(tables.projects), [
            {'id': i, 'external_id': 'p%d' % i} for i in (1, 2, 3)])
        conn.execute(sa.insert(tables.users), [
            {'id': i, 'external_id': 'u%d' % i} for i in (1, 2)])
        conn.execute(sa.insert(tables.consumer_types), [
            {'id': 1, 'name': 'INSTANCE'}, {'id': 2, 'name': 'MIGRATION'},
            {'id': 3, 'name': 'UNUSED'}])
        conn.execute(sa.insert(tables.resource_providers), [
            {'id': i, 'uuid': str(uuid.uuid4()), 'name': 'rp%d' % i,
             'generation': 0, 'root_provider_id': i} for i in (1, 2, 3)])
        consumers, allocations, expected = [], [], []
        for number in range(1, rng.randint(1, 40)):
            consumer = str(uuid.uuid4())
            owner = (rng.choice([1, 1, 2, 3]), rng.choice([1, 2]),
                     rng.choice([None, 1, 1, 2]))
            if rng.random() < 0.9:
                consumers.append({
                    'id': number, 'uuid': consumer, 'project_id': owner[0],
                    'user_id': owner[1], 'consumer_type_id': owner[2],
                    'generation': 0})
            else:
                owner = (None, None, None)
            # Some consumers (even recorded ones) have no allocations.
            for name in rng.sample(names, rng.randint(0, len(names))):
                used = rng.randint(1, 2048)
                allocations.append({
                    'resource_provider_id': rng.randint(1, 3),
                    'consumer_id': consumer,
                    'resource_class_id': classes[name], 'used': used})
                expected.append(owner + (consumer, name, used))
        if consumers:
            conn.execute(sa.insert(tables.consumers), consumers)
        if allocations:
            conn.execute(sa.insert(tables.allocations), allocations)
    return expected


def _reference(allocations, project, user=None, consumer_type=None):
    """by_consumer_type, computed plainly from the rows written."""
    type_names = {None: usage_obj.UNKNOWN, 1: 'INSTANCE', 2: 'MIGRATION'}
    groups = {}
    for owner_project, owner_user, kind, consumer, name, used in allocations:
        if owner_project is None or 'p%d' % owner_project != project:
            continue
        if user is not None and 'u%d' % owner_user != user:
            continue
        group = type_names[kind]
        if consumer_type == usage_obj.ALL:
            group = usage_obj.ALL
        elif consumer_type is not None and group != consumer_type:
            continue
        sums, members = groups.setdefault(group, ({}, set()))
        sums[name] = sums.get(name, 0) + used
        members.add(consumer)
    return {group: dict(sums, consumer_count=len(members))
            for group, (sums, members) in groups.items()}


@pytest.mark.parametrize('seed', range(12))
def test_usages_match_a_plain_sum_of_random_allocations(ctx, seed):
    """Totals and groups (every filter) equal sums over the allocation
    rows of the owner's consumers, whatever the mix of projects, users,
    types, consumers without allocations and allocations without a
    consumer record."""
    allocations = _random_cloud(ctx, random.Random(seed))
    for project in ('p1', 'p2', 'p3', 'nobody'):
        for user in (None, 'u1', 'u2', 'nobody'):
            expected = _reference(allocations, project, user)
            totals = {}
            for group in expected.values():
                for name, used in group.items():
                    if name != 'consumer_count':
                        totals[name] = totals.get(name, 0) + used
            assert usage_obj.totals(ctx, project, user) == totals
            for kept in (None, usage_obj.ALL, usage_obj.UNKNOWN,
                         'INSTANCE', 'MIGRATION', 'UNUSED', 'nothing'):
                assert usage_obj.by_consumer_type(
                    ctx, project, user, kept) == _reference(
                        allocations, project, user, kept), (project, user,
                                                            kept)
