"""The provider rows listings keep per process: they follow every write,
stay in id order and cost little memory per provider."""

import time
import tracemalloc
import uuid

import pytest
import sqlalchemy as sa

from benchmarks.toolkit import cloud_rows
from placement.db import api as db_api
from placement.db import tables
from placement.objects.candidates import provider_index
from placement.objects import inventory as inv_obj
from placement.objects import listed_rows
from placement.objects import provider_listing
from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures

_RP = tables.resource_providers


def _read(ctx):
    """The listing as the table says it now."""
    with ctx.db.transaction(write=False) as conn:
        return [tuple(row) for row in conn.execute(
            listed_rows.LISTED.order_by(_RP.c.id)).all()]


def _kept(ctx):
    """The listing from the process's kept rows."""
    return [tuple(row) for row in provider_listing.list_providers(ctx)]


def _sql(ctx, stmt):
    with ctx.db.transaction(write=True) as conn:
        conn.execute(stmt)


def test_rows_follow_every_kind_of_write(ctx):
    parent = rp_obj.create(ctx, str(uuid.uuid4()), 'parent')
    child = rp_obj.create(ctx, str(uuid.uuid4()), 'child', parent.uuid)
    other = rp_obj.create(ctx, str(uuid.uuid4()), 'other')
    assert _kept(ctx) == _read(ctx)
    steps = [
        lambda: rp_obj.update(ctx, other, 'renamed'),
        lambda: inv_obj.replace_all(
            ctx, rp_obj.get_by_uuid(ctx, parent.uuid),
            {'VCPU': {'total': 4}}),
        lambda: rp_obj.update(ctx, child, 'child', other.uuid,
                              allow_reparent=True),
        lambda: rp_obj.update(ctx, rp_obj.get_by_uuid(ctx, child.uuid),
                              'child', None, allow_reparent=True),
        # Hand SQL is logged by the triggers all the same.
        lambda: _sql(ctx, sa.update(_RP).where(_RP.c.id == parent.id)
                     .values(name='by-hand', generation=7)),
        lambda: rp_obj.destroy(ctx, child.uuid),
        lambda: rp_obj.create(ctx, str(uuid.uuid4()), 'late'),
    ]
    for step in steps:
        before = _kept(ctx)
        step()
        after = _kept(ctx)
        assert after != before
        assert after == _read(ctx)
    assert [row[2] for row in _kept(ctx)] == ['by-hand', 'renamed', 'late']


def test_a_provider_given_an_older_id_is_listed_in_id_order(ctx):
    first, second = (rp_obj.create(ctx, str(uuid.uuid4()), name)
                     for name in ('first', 'second'))
    rp_obj.destroy(ctx, first.uuid)
    assert [row.name for row in provider_listing.list_providers(ctx)] == [
        'second']
    _sql(ctx, sa.insert(_RP).values(
        id=first.id, uuid=str(uuid.uuid4()), name='again', generation=0,
        root_provider_id=first.id))
    assert [row.name for row in provider_listing.list_providers(ctx)] == [
        'again', 'second']
    assert _kept(ctx) == _read(ctx)


def test_resources_listing_takes_the_kept_rows_of_the_fitting(ctx):
    small, big = (rp_obj.create(ctx, str(uuid.uuid4()), name)
                  for name in ('small', 'big'))
    for provider, total in ((small, 2), (big, 8)):
        inv_obj.replace_all(ctx, provider, {'VCPU': {'total': total}})
    listed = provider_listing.list_providers(ctx, resources={'VCPU': 4})
    assert [tuple(row) for row in listed] == [
        row for row in _read(ctx) if row[2] == 'big']


@pytest.fixture
def asked(monkeypatch):
    """The ids each read of changed rows asked for, in order."""
    found = []
    real = listed_rows._changed_rows

    def changed_rows(conn, ids):
        found.append(list(ids))
        return real(conn, ids)
    monkeypatch.setattr(listed_rows, '_changed_rows', changed_rows)
    return found


def test_a_refresh_reads_only_the_rows_that_changed(ctx, asked):
    providers = [rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
                 for i in range(3)]
    kept = listed_rows.ListedRows()

    def refresh():
        with ctx.db.transaction(write=False) as conn:
            kept._refresh(conn, time.monotonic)  # as tests do not check it

    def rows_read():
        full = [statement for statement in fixtures.statements_sent(
            ctx, refresh) if 'FROM resource_providers' in statement]
        found, asked[:] = list(asked), []
        return full, found

    refresh()
    assert len(kept.rows) == 3
    assert rows_read() == ([], [])
    rp_obj.update(ctx, providers[1], 'renamed')
    assert rows_read() == ([], [[providers[1].id]])
    assert [row.name for row in kept.rows.values()] == [
        'rp0', 'renamed', 'rp2']
    # More than a few: one IN list.
    for provider in providers:
        rp_obj.update(ctx, provider, provider.name + '-again')
    extra = [rp_obj.create(ctx, str(uuid.uuid4()), 'extra%d' % i)
             for i in range(2)]
    full, found = rows_read()
    assert found == [sorted(p.id for p in providers + extra)]
    assert len(full) == 1 and 'IN (' in full[0]
    assert [row.name for row in kept.rows.values()] == [
        'rp0-again', 'rp1-again', 'rp2-again', 'extra0', 'extra1']
    assert [tuple(row) for row in kept.rows.values()] == _read(ctx)


def test_one_per_process_and_database(tmp_path):
    # of() only keys by the Database object: no schema is needed.
    first, second = (db_api.Database('sqlite:///%s' % (tmp_path / name))
                     for name in ('a.sqlite', 'b.sqlite'))
    try:
        assert listed_rows.of(first) is listed_rows.of(first)
        assert listed_rows.of(first) is not listed_rows.of(second)
    finally:
        first.dispose()
        second.dispose()


def test_memory_per_provider_is_bounded(ctx):
    cloud_rows.bulk_load(str(ctx.db.engine.url),
                         cloud_rows.flat_providers(1000))
    provider_listing.list_providers(ctx)  # statements compiled, caches warm
    with ctx.db.transaction(write=False) as conn:
        # The same kind of transaction and refresh once, thrown away: what
        # it builds only once per process is not held per provider.
        listed_rows.ListedRows().refresh(conn)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rows = listed_rows.ListedRows()
        with ctx.db.transaction(write=False) as conn:
            rows.refresh(conn)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(rows.rows) == 1000
    # A row tuple, its uuid, name and change time, its dict entry.
    assert held / 1000 < 450, held / 1000


def _log_reads(monkeypatch):
    """The cursors ``changes.read`` is called with from now on (it still
    reads)."""
    from placement.db import changes
    since = []
    real = changes.read

    def counted(conn, version, *args, **kwargs):
        since.append(version)
        return real(conn, version, *args, **kwargs)
    monkeypatch.setattr(changes, 'read', counted)
    return since


def _sized(ctx):
    small, big = (rp_obj.create(ctx, str(uuid.uuid4()), name)
                  for name in ('small', 'big'))
    for provider, total in ((small, 2), (big, 8)):
        inv_obj.replace_all(ctx, provider, {'VCPU': {'total': total}})
    return small, big


class _RolledBack(Exception):
    pass


def _open_gap(ctx):
    """A change logged by a transaction that rolls back: its id stays a
    gap in the log (until readers give up on it, on PostgreSQL as soon
    as no older transaction runs)."""
    try:
        with ctx.db.transaction(write=True) as conn:
            conn.execute(sa.update(tables.resource_providers)
                         .values(generation=tables.resource_providers
                                 .c.generation + 1))
            raise _RolledBack()
    except _RolledBack:
        pass


@pytest.mark.parametrize('gap', [False, True])
def test_a_filtered_listing_reads_the_change_log_once(
        ctx, monkeypatch, unchecked_followers, gap):
    small, _big = _sized(ctx)
    if gap:
        # The index alone first (candidates): the listing's first
        # refresh then reads the log twice, and each read notices the
        # gap below the write that follows it.
        with ctx.db.transaction(write=False) as conn:
            provider_index.of(ctx.db).refresh(conn)
        _open_gap(ctx)
        inv_obj.replace_all(ctx, small, {'VCPU': {'total': 3}})
    provider_listing.list_providers(ctx, resources={'VCPU': 4})
    reads = _log_reads(monkeypatch)
    inv_obj.replace_all(ctx, small, {'VCPU': {'total': 6}})
    listed = provider_listing.list_providers(ctx, resources={'VCPU': 4})
    assert [row.name for row in listed] == ['small', 'big']
    # The index and the kept rows were at the same place in the log.
    assert len(reads) == 1


def test_kept_rows_behind_the_index_still_follow_every_write(
        ctx, monkeypatch, unchecked_followers):
    _small, big = _sized(ctx)
    provider_listing.list_providers(ctx, resources={'VCPU': 4})
    rp_obj.update(ctx, big, 'renamed')
    # Candidates refresh the index alone: it is ahead of the kept rows.
    with ctx.db.transaction(write=False) as conn:
        provider_index.of(ctx.db).refresh(conn)
    reads = _log_reads(monkeypatch)
    listed = provider_listing.list_providers(ctx, resources={'VCPU': 4})
    assert [tuple(row) for row in listed] == [
        row for row in _read(ctx) if row[2] == 'renamed']
    assert len(reads) == 2 and reads[0] != reads[1]


def test_changed_rows_are_read_when_a_listing_wants_them(ctx, asked):
    """A refresh notes the providers the log names as stale and reads
    again only those the listing shows (``wanted``; None: all): a
    listing of the sharing providers of an aggregate reads no row while
    writes change only compute nodes."""
    providers = [rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
                 for i in range(3)]
    kept = listed_rows.ListedRows()

    def refresh(wanted):
        with ctx.db.transaction(write=False) as conn:
            kept.refresh(conn, wanted=wanted)
        found, asked[:] = list(asked), []
        return found

    refresh(None)
    rp_obj.update(ctx, providers[1], 'renamed')
    assert refresh({providers[0].id}) == []
    assert kept.stale == {providers[1].id}
    assert refresh({providers[0].id, providers[1].id}) == [
        [providers[1].id]]
    assert kept.rows[providers[1].id].name == 'renamed'
    assert not kept.stale
    late = rp_obj.create(ctx, str(uuid.uuid4()), 'late')
    rp_obj.destroy(ctx, providers[2].uuid)
    assert refresh({providers[0].id}) == []
    assert refresh(None) == [[providers[2].id, late.id]]
    assert [tuple(row) for row in kept.rows.values()] == _read(ctx)


def test_a_filtered_listing_shows_a_provider_made_since(ctx):
    """A provider created after the rows were loaded is stale (not kept
    yet) until a listing finds it: then it is read and listed."""
    small = rp_obj.create(ctx, str(uuid.uuid4()), 'small')
    inv_obj.replace_all(ctx, small, {'VCPU': {'total': 2}})
    assert provider_listing.list_providers(ctx, resources={'VCPU': 4}) == []
    big = rp_obj.create(ctx, str(uuid.uuid4()), 'big')
    inv_obj.replace_all(ctx, big, {'VCPU': {'total': 8}})
    assert [row.name for row in provider_listing.list_providers(
        ctx, resources={'VCPU': 4})] == ['big']
    assert _kept(ctx) == _read(ctx)


def test_rows_read_in_an_older_snapshot_are_read_again(ctx):
    """A listing whose transaction began before a write that a newer
    listing's read of the log has marked stale (SQLite readers keep the
    snapshot of their first statement) reads the old row: right for
    that listing, which began first, but the next listing must read it
    again."""
    first, second = (rp_obj.create(ctx, str(uuid.uuid4()), 'rp%d' % i)
                     for i in range(2))
    kept = listed_rows.ListedRows()
    with ctx.db.transaction(write=False) as conn:
        kept.refresh(conn)
    with ctx.db.transaction(write=False) as old:
        old.execute(sa.select(_RP.c.id)).all()  # its snapshot, on SQLite
        rp_obj.update(ctx, second, 'renamed')
        with ctx.db.transaction(write=False) as new:
            kept.refresh(new, wanted={first.id})
        assert kept.stale == {second.id}
        kept.refresh(old, wanted={first.id, second.id})
    with ctx.db.transaction(write=False) as conn:
        kept.refresh(conn, wanted={second.id})
    assert kept.rows[second.id].name == 'renamed'
    assert [tuple(row) for row in kept.rows.values()] == _read(ctx)
