"""The provider index against the database it follows."""

import uuid

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement.objects.candidates import provider_index
from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures
from placement.tests.functional.objects.candidates import test_engine


def test_a_summary_lists_classes_in_one_order_however_loaded(ctx):
    """Classes in the order their rows were made (not class ids), after
    a whole load and after the provider alone was loaded again."""
    topo = test_engine.Topology(ctx)
    provider = topo.add('cn', inventory={'DISK_GB': 9, 'VCPU': 9,
                                         'MEMORY_MB': 9})
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    whole = index.summary(provider.id).resources
    assert [name for name, _, _ in whole] == ['DISK_GB', 'VCPU', 'MEMORY_MB']
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id == provider.id
        ).values(total=8))
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert [name for name, _, _ in index.summary(provider.id).resources] == [
        'DISK_GB', 'VCPU', 'MEMORY_MB']


def _state(index):
    """What the index knows, in comparable form."""
    providers = sorted(index.uuid)
    return {
        'uuid': dict(index.uuid),
        'parent': dict(index.parent),
        'root': dict(index.root),
        'inventories': {p: dict(index.inventories[p]) for p in providers},
        'usage': {p: dict(u) for p, u in index.usage.items()},
        'traits': {p: set(index.traits[p]) for p in providers},
        'aggregates': {p: set(index.aggregates[p]) for p in providers},
        'with_class': {k: set(v) for k, v in index.with_class.items()},
        'with_trait': {k: set(v) for k, v in index.with_trait.items()},
        'in_aggregate': {k: set(v) for k, v in index.in_aggregate.items()},
        'trees': {r: set(t) for r, t in index.members.items()},
        'nested': index.nested,
        'summaries': {p: index.summary(p) for p in providers},
    }


@pytest.mark.parametrize('changed', [1, 3, provider_index.FEW + 1])
def test_providers_reloaded_alone_are_as_a_whole_load_sees_them(ctx,
                                                                changed):
    """Hand-SQL changes to ``changed`` providers (reloaded through the
    prepared statements, padded or not, or by IN lists) leave the index
    as a fresh whole load builds it."""
    topo = test_engine.Topology(ctx)
    names = []
    for host in range(provider_index.FEW + 2):
        name = 'cn%d' % host
        topo.add(name, inventory={'VCPU': 8, 'DISK_GB': 100},
                 traits=['HW_CPU_X86_AVX2'], aggs=['agg%d' % (host % 2)])
        topo.add(name + '-numa', parent=name, inventory={'MEMORY_MB': 64})
        names += [name, name + '-numa']
        topo.allocate(name, 'VCPU', 1)
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    touched = [topo.by_name[n].id for n in names[:changed]]
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id.in_(touched)
        ).values(total=tables.inventories.c.total + 1))
        conn.execute(sa.delete(tables.resource_provider_traits).where(
            tables.resource_provider_traits.c.resource_provider_id.in_(
                touched)))
        conn.execute(sa.delete(tables.resource_provider_aggregates).where(
            tables.resource_provider_aggregates.c.resource_provider_id.in_(
                touched)))
    for name in names[:changed:2]:
        topo.allocate(name, 'DISK_GB', 7)
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert index.epoch == 1
    fresh = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        fresh.refresh(conn)
    assert _state(index) == _state(fresh)
    assert not index.traits[touched[0]]
    assert index.inventories[touched[0]] != fresh.inventories[
        topo.by_name[names[-2]].id]


@pytest.mark.parametrize('changed', [1, provider_index.FEW,
                                     provider_index.FEW + 1])
@pytest.mark.usefixtures('unchecked_followers')
def test_a_few_providers_are_reloaded_in_one_statement(ctx, changed):
    """Up to ``FEW`` changed providers cost the refresh the log read and
    one statement for all they hold (a write changes one or two); more
    take a statement per source (and per chunk of ids)."""
    topo = test_engine.Topology(ctx)
    hosts = [topo.add('cn%d' % host, inventory={'VCPU': 8},
                      traits=['HW_CPU_X86_AVX2'], aggs=['agg'])
             for host in range(provider_index.FEW + 1)]
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    for host in hosts[:changed]:
        topo.allocate(host.name, 'VCPU', 1)

    def refresh():
        with ctx.db.transaction(write=False) as conn:
            index.refresh(conn)
    sent = fixtures.statements_sent(ctx, refresh, prepared_too=True)
    reads = [s for s in sent if 'provider_change_log' in s]
    assert len(reads) == 1
    assert len(sent) - len(reads) == (1 if changed <= provider_index.FEW
                                      else len(provider_index._SOURCES))
    assert index.usage[hosts[0].id] == {
        index.class_ids(None, ['VCPU'])['VCPU']: 1}


def test_a_refresh_in_an_older_snapshot_leaves_no_change_behind(ctx):
    """A refresh in a transaction older than the one of the refresh
    before it (SQLite readers keep the snapshot of their first
    statement; a worker's threads share the index) must not leave the
    index behind a change it could not see: the next refresh sees it."""
    first, second = (rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
                     for i in range(2))
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    with ctx.db.transaction(write=False) as old:
        old.execute(sa.select(tables.resource_providers.c.id)).all()
        rp_obj.destroy(ctx, second.uuid)
        with ctx.db.transaction(write=False) as new:
            index.refresh(new)
        index.refresh(old)
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert second.id not in index.uuid
    assert first.id in index.uuid
