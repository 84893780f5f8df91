"""The provider change log (placement/db/changes.py), object layer.

Every committed write that changes what the allocation candidates engine
reads (tree, inventories, usage, traits, aggregates) is logged by the
database's triggers, whoever makes it, and only if it commits; readers
follow the log by id without missing rows committed out of id order.
"""

import contextlib
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement import context
from placement.db import api as db_api
from placement.db import changes
from placement.db import data_migrations
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import aggregate as aggregate_obj
from placement.objects import allocation as alloc_obj
from placement.objects.candidates import provider_index
from placement.objects import inventory as inv_obj
from placement.objects import provider_generation
from placement.objects import reshaper as reshaper_obj
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import trait as trait_obj
from placement.tests import fixtures


# -- helpers -----------------------------------------------------------------

def _cursor(ctx):
    """A reader's cursor at the current end of the log."""
    with ctx.db.transaction(write=False) as conn:
        return changes.read(conn, None).version


def _read(ctx, since, **kwargs):
    with ctx.db.transaction(write=False) as conn:
        return changes.read(conn, since, **kwargs)


def _log_rows(ctx, after):
    """Provider ids logged after id ``after``, in id order."""
    log = tables.provider_change_log
    with ctx.db.transaction(write=False) as conn:
        return [row.resource_provider_id for row in conn.execute(
            sa.select(log.c.resource_provider_id)
            .where(log.c.id > after).order_by(log.c.id))]


class Logged:
    """What the writes inside the ``with`` block logged."""

    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        self.before = _cursor(self.ctx)
        return self

    def __exit__(self, *exc):
        self.rows = _log_rows(self.ctx, self.before.high)
        self.ids = set(self.rows)
        read = _read(self.ctx, self.before)
        if None not in self.ids:
            assert read.provider_ids == self.ids
        return False


def _logged(ctx):
    return Logged(ctx)


def _new(ctx, name, parent=None):
    return rp_obj.create(ctx, str(uuid.uuid4()), name,
                         parent.uuid if parent else None)


def _fresh(ctx, provider):
    return rp_obj.get_by_uuid(ctx, provider.uuid)


def _request(consumer, allocations, **consumer_args):
    return alloc_obj.ConsumerRequest(
        dict(uuid=consumer, project='proj', user='user', **consumer_args),
        allocations)


@pytest.fixture
def computes(ctx):
    """Two providers with 4 VCPU each."""
    found = []
    for name in ('cn1', 'cn2'):
        rp = _new(ctx, name)
        inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 4}})
        found.append(_fresh(ctx, rp))
    return found


# -- providers ---------------------------------------------------------------

def test_create_logs_the_new_provider_only(ctx):
    root = _new(ctx, 'root')
    with _logged(ctx) as logged:
        child = _new(ctx, 'child', root)
    assert logged.ids == {child.id}
    with _logged(ctx) as logged:
        other = _new(ctx, 'other')
    assert logged.ids == {other.id}


def test_failed_create_logs_nothing(ctx):
    _new(ctx, 'taken')
    with _logged(ctx) as logged:
        with pytest.raises(exception.DuplicateResourceProvider):
            _new(ctx, 'taken')
    assert logged.rows == []


def test_rename_logs_the_provider(ctx):
    rp = _new(ctx, 'old')
    with _logged(ctx) as logged:
        rp_obj.update(ctx, rp, 'new')
    assert logged.ids == {rp.id}


@pytest.fixture
def trees(ctx):
    """a -> b -> (c, d -> e), and a second root x -> y."""
    tree = {'a': _new(ctx, 'a')}
    for name, parent in (('b', 'a'), ('c', 'b'), ('d', 'b'), ('e', 'd'),
                         ('x', None), ('y', 'x')):
        tree[name] = _new(ctx, name, tree[parent] if parent else None)
    return tree


def test_reparenting_to_another_tree_logs_the_moved_subtree(ctx, trees):
    with _logged(ctx) as logged:
        rp_obj.update(ctx, _fresh(ctx, trees['b']), 'b', trees['y'].uuid,
                      allow_reparent=True)
    assert logged.ids == {trees[n].id for n in 'bcde'}
    assert _fresh(ctx, trees['e']).root_provider_uuid == trees['x'].uuid


def test_unparenting_logs_the_moved_subtree(ctx, trees):
    with _logged(ctx) as logged:
        rp_obj.update(ctx, _fresh(ctx, trees['d']), 'd', None,
                      allow_reparent=True)
    assert logged.ids == {trees['d'].id, trees['e'].id}
    assert _fresh(ctx, trees['e']).root_provider_uuid == trees['d'].uuid


def test_giving_a_root_a_parent_logs_its_whole_tree(ctx, trees):
    with _logged(ctx) as logged:
        rp_obj.update(ctx, _fresh(ctx, trees['x']), 'x', trees['c'].uuid)
    assert logged.ids == {trees['x'].id, trees['y'].id}


def test_refused_reparenting_logs_nothing(ctx, trees):
    with _logged(ctx) as logged:
        with pytest.raises(exception.ObjectActionError):
            rp_obj.update(ctx, _fresh(ctx, trees['b']), 'b',
                          trees['e'].uuid, allow_reparent=True)  # a loop
        with pytest.raises(exception.ObjectActionError):
            rp_obj.update(ctx, _fresh(ctx, trees['b']), 'b',
                          trees['y'].uuid)  # needs 1.37
    assert logged.rows == []


def test_destroy_logs_the_deleted_provider(ctx, trees):
    gone = trees['c']
    inv_obj.replace_all(ctx, gone, {'VCPU': {'total': 1}})
    with _logged(ctx) as logged:
        rp_obj.destroy(ctx, gone.uuid)
    assert logged.ids == {gone.id}
    with _logged(ctx) as logged:
        with pytest.raises(exception.CannotDeleteParentResourceProvider):
            rp_obj.destroy(ctx, trees['d'].uuid)
    assert logged.rows == []


# -- inventories -------------------------------------------------------------

def test_every_inventory_write_logs_its_provider(ctx, computes):
    rp, other = computes
    with _logged(ctx) as logged:
        inv_obj.create(ctx, rp, 'DISK_GB', {'total': 10}, min_capacity=1)
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        inv_obj.update(ctx, rp, 'DISK_GB', {'total': 20}, 2, min_capacity=1)
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 8}}, 3)
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        inv_obj.delete(ctx, rp, 'VCPU')
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        inv_obj.delete_all(ctx, other)
    assert logged.ids == {other.id}


def test_refused_inventory_writes_log_nothing(ctx, computes):
    rp, _other = computes
    alloc_obj.write(ctx, [_request(str(uuid.uuid4()),
                                   {rp.uuid: {'VCPU': 1}})], 0)
    with _logged(ctx) as logged:
        with pytest.raises(exception.ResourceProviderGenerationMismatch):
            inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 8}}, 0)
        with pytest.raises(exception.ResourceProviderGenerationMismatch):
            inv_obj.update(ctx, rp, 'VCPU', {'total': 8}, 0, min_capacity=1)
        with pytest.raises(exception.InventoryInUse):
            inv_obj.delete(ctx, rp, 'VCPU')
        with pytest.raises(exception.InventoryExists):
            inv_obj.create(ctx, rp, 'VCPU', {'total': 1}, min_capacity=1)
    assert logged.rows == []


# -- traits ------------------------------------------------------------------

def test_trait_writes_log_their_provider_when_they_change_it(ctx, computes):
    rp, _other = computes
    generation = rp.generation
    with _logged(ctx) as logged:
        _traits, generation = trait_obj.set_provider_traits(
            ctx, rp, ['HW_CPU_X86_AVX'], generation)
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        # The same set again: nothing changes, no generation bump.
        trait_obj.set_provider_traits(ctx, rp, ['HW_CPU_X86_AVX'],
                                      generation)
        with pytest.raises(exception.ResourceProviderGenerationMismatch):
            trait_obj.set_provider_traits(ctx, rp, [], generation - 1)
        with pytest.raises(exception.TraitNotFound):
            trait_obj.set_provider_traits(ctx, rp, ['CUSTOM_NOPE'],
                                          generation)
    assert logged.rows == []
    with _logged(ctx) as logged:
        trait_obj.delete_provider_traits(ctx, rp)
    assert logged.ids == {rp.id}


# -- aggregates --------------------------------------------------------------

def test_aggregates_below_1_19_are_logged_without_a_generation_bump(
        ctx, computes):
    rp, _other = computes
    agg = str(uuid.uuid4())
    with _logged(ctx) as logged:
        aggregate_obj.set_provider_aggregates(ctx, rp, [agg])
    assert logged.ids == {rp.id}
    assert _fresh(ctx, rp).generation == rp.generation
    with _logged(ctx) as logged:
        aggregate_obj.set_provider_aggregates(ctx, rp, [agg])  # unchanged
    assert logged.rows == []
    with _logged(ctx) as logged:
        aggregate_obj.set_provider_aggregates(ctx, rp, [])
    assert logged.ids == {rp.id}


def test_aggregates_from_1_19_are_logged(ctx, computes):
    rp, _other = computes
    with _logged(ctx) as logged:
        generation = aggregate_obj.set_provider_aggregates(
            ctx, rp, [str(uuid.uuid4())], rp.generation)
    assert logged.ids == {rp.id}
    with _logged(ctx) as logged:
        with pytest.raises(exception.ResourceProviderGenerationMismatch):
            aggregate_obj.set_provider_aggregates(
                ctx, rp, [str(uuid.uuid4())], generation - 1)
    # The new aggregate row may stay (created in its own transaction),
    # but no provider changed.
    assert logged.rows == []


# -- allocations -------------------------------------------------------------

def test_allocation_writes_log_every_provider_that_gains_or_loses(
        ctx, computes):
    cn1, cn2 = computes
    consumer = str(uuid.uuid4())
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [_request(consumer, {cn1.uuid: {'VCPU': 2}})],
                        0)
    assert logged.ids == {cn1.id}
    # Moving the consumer: cn1 loses it without a generation bump.
    generation = _fresh(ctx, cn1).generation
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [_request(consumer, {cn2.uuid: {'VCPU': 2}})],
                        0)
    assert logged.ids == {cn1.id, cn2.id}
    assert _fresh(ctx, cn1).generation == generation
    # An empty set deletes the allocations (and bumps the holder).
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [_request(consumer, {})], 0)
    assert logged.ids == {cn2.id}


def test_several_consumers_in_one_request_log_once(ctx, computes):
    cn1, cn2 = computes
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    alloc_obj.write(ctx, [_request(first, {cn1.uuid: {'VCPU': 1}})], 0)
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [
            _request(first, {cn2.uuid: {'VCPU': 1}}),
            _request(second, {cn2.uuid: {'VCPU': 1}})], 0)
    assert logged.ids == {cn1.id, cn2.id}


#: PostgreSQL's statement triggers log each provider once per
#: statement; the row triggers of SQLite and MySQL/MariaDB once per row
#: changed.
PER_ROW = fixtures.backend_name() != 'postgresql'


def test_an_allocation_write_logs_its_provider_once_per_statement(ctx):
    """A boot's claim of three classes on one compute inserts three
    allocation rows and bumps one generation: on PostgreSQL two log rows
    (the bump and the insert), elsewhere four; its delete one, or
    three."""
    compute = _new(ctx, 'cn')
    inv_obj.replace_all(ctx, compute, {
        rc: {'total': 64} for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB')})
    consumer = str(uuid.uuid4())
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [_request(consumer, {compute.uuid: {
            'VCPU': 1, 'MEMORY_MB': 8, 'DISK_GB': 1}})], 0)
    assert logged.rows == [compute.id] * (4 if PER_ROW else 2)
    with _logged(ctx) as logged:
        alloc_obj.delete_by_consumer(ctx, consumer)
    assert logged.rows == [compute.id] * (3 if PER_ROW else 1)


def test_a_statement_moving_rows_logs_both_providers_once(ctx, computes):
    """An update moving two rows of one provider to another logs each
    provider once on PostgreSQL, each row's two elsewhere."""
    cn1, cn2 = computes
    alloc_obj.write(ctx, [
        _request(str(uuid.uuid4()), {cn1.uuid: {'VCPU': 1}}),
        _request(str(uuid.uuid4()), {cn1.uuid: {'VCPU': 1}})], 0)
    allocations = tables.allocations
    with _logged(ctx) as logged:
        with ctx.db.transaction(write=True) as conn:
            conn.execute(sa.update(allocations).where(
                allocations.c.resource_provider_id == cn1.id).values(
                    resource_provider_id=cn2.id))
    assert sorted(logged.rows) == (
        [cn1.id, cn1.id, cn2.id, cn2.id] if PER_ROW else [cn1.id, cn2.id])


def test_refused_allocation_writes_log_nothing(ctx, computes):
    cn1, cn2 = computes
    consumer = str(uuid.uuid4())
    alloc_obj.write(ctx, [_request(consumer, {cn1.uuid: {'VCPU': 1}})], 0)
    with _logged(ctx) as logged:
        with pytest.raises(exception.InvalidAllocationCapacityExceeded):
            alloc_obj.write(ctx, [_request(consumer,
                                           {cn2.uuid: {'VCPU': 5}})], 0)
        with pytest.raises(exception.ConsumerGenerationMismatch):
            alloc_obj.write(ctx, [_request(
                consumer, {cn2.uuid: {'VCPU': 1}}, generation=7)], 0)
        with pytest.raises(exception.ResourceClassNotFound):
            alloc_obj.write(ctx, [_request(
                consumer, {cn2.uuid: {'CUSTOM_NOPE': 1}})], 0)
        with pytest.raises(exception.ResourceProviderNotFound):
            # Commits the prepared (new) consumer, but no allocation.
            alloc_obj.write(ctx, [_request(
                str(uuid.uuid4()), {str(uuid.uuid4()): {'VCPU': 1}})], 0)
    assert logged.rows == []


def test_provider_generation_race_retries_and_logs_once(
        ctx, computes, monkeypatch):
    cn1, _cn2 = computes
    real_lock_and_bump = provider_generation.lock_and_bump
    calls = []

    def bumped_then_lost(ctx, uuids, ids):
        # The race is lost after the bump, which the retry's rollback
        # must leave unlogged.
        found = real_lock_and_bump(ctx, uuids, ids)
        calls.append(sorted(found))
        if len(calls) == 1:
            raise exception.ResourceProviderConcurrentUpdateDetected()
        return found
    monkeypatch.setattr(provider_generation, 'lock_and_bump', bumped_then_lost)
    with _logged(ctx) as logged:
        alloc_obj.write(ctx, [_request(str(uuid.uuid4()),
                                       {cn1.uuid: {'VCPU': 1}})], 1)
    assert len(calls) == 2
    assert logged.ids == {cn1.id}


def test_delete_by_consumer_logs_the_providers_it_held(ctx, computes):
    cn1, cn2 = computes
    consumer = str(uuid.uuid4())
    alloc_obj.write(ctx, [_request(consumer, {cn1.uuid: {'VCPU': 1},
                                              cn2.uuid: {'VCPU': 1}})], 0)
    generations = [_fresh(ctx, rp).generation for rp in computes]
    with _logged(ctx) as logged:
        alloc_obj.delete_by_consumer(ctx, consumer)
    assert logged.ids == {cn1.id, cn2.id}
    assert [_fresh(ctx, rp).generation for rp in computes] == generations
    with _logged(ctx) as logged:
        with pytest.raises(exception.ConsumerAllocationsNotFound):
            alloc_obj.delete_by_consumer(ctx, consumer)
    assert logged.rows == []


def test_reshape_logs_every_provider_it_changes(ctx):
    root = _new(ctx, 'root')
    inv_obj.replace_all(ctx, root, {'VCPU': {'total': 4}})
    root = _fresh(ctx, root)
    child = _new(ctx, 'child', root)
    untouched = _new(ctx, 'untouched')
    consumer = str(uuid.uuid4())
    alloc_obj.write(ctx, [_request(consumer, {root.uuid: {'VCPU': 2}})], 0)
    root = _fresh(ctx, root)
    with _logged(ctx) as logged:
        reshaper_obj.reshape(
            ctx, [(root, {}, root.generation),
                  (child, {'VCPU': {'total': 4}}, child.generation)],
            [_request(consumer, {child.uuid: {'VCPU': 2}},
                      generation=1)], 0)
    assert logged.ids == {root.id, child.id}
    assert untouched.id not in logged.ids
    with _logged(ctx) as logged:
        with pytest.raises(exception.ConcurrentUpdateDetected):
            reshaper_obj.reshape(ctx, [(root, {}, root.generation)], [], 0)
    assert logged.rows == []


# -- resource classes and traits by name -------------------------------------

def test_renamed_and_deleted_names_make_every_reader_reload(ctx, computes):
    """Readers keep class and trait names by id, and a deleted name's id
    may come back under another name: renaming or deleting a name makes
    them reload everything. Creating one logs nothing."""
    cn1, _ = computes
    rc_obj.create(ctx, 'CUSTOM_GOLD')
    inv_obj.create(ctx, cn1, 'CUSTOM_GOLD', {'total': 1}, min_capacity=1)
    with _logged(ctx) as logged:
        rc_obj.create(ctx, 'CUSTOM_BRONZE')
        trait_obj.ensure(ctx, 'CUSTOM_FAST')
    assert logged.rows == []
    for change in (
            lambda: rc_obj.rename(ctx, 'CUSTOM_GOLD', 'CUSTOM_SILVER'),
            lambda: rc_obj.destroy(ctx, 'CUSTOM_BRONZE'),
            lambda: trait_obj.destroy(ctx, 'CUSTOM_FAST')):
        before = _cursor(ctx)
        change()
        assert _read(ctx, before).provider_ids is None


# -- the writer decorator ----------------------------------------------------

def test_writer_rerun_after_a_deadlock_logs_only_the_last_attempt(
        ctx, computes):
    cn1, cn2 = computes
    attempts = []

    @db_api.writer
    def flaky(ctx):
        attempts.append(1)
        if len(attempts) == 1:
            inv_obj.replace_all(ctx, cn1, {'VCPU': {'total': 5}})
            raise sa_exc.OperationalError(
                'UPDATE ...', {}, Exception('deadlock detected'))
        inv_obj.replace_all(ctx, cn2, {'VCPU': {'total': 5}})

    with _logged(ctx) as logged:
        flaky(ctx)
    assert len(attempts) == 2
    assert logged.ids == {cn2.id}
    assert inv_obj.get_all(ctx, cn1)[0].total == 4


def test_failed_writer_logs_nothing(ctx, computes):
    cn1, _cn2 = computes

    @db_api.writer
    def failing(ctx):
        inv_obj.replace_all(ctx, cn1, {'VCPU': {'total': 9}})
        raise exception.NotFound('no')

    with _logged(ctx) as logged:
        with pytest.raises(exception.NotFound):
            failing(ctx)
    assert logged.rows == []


# -- reading, pruning, invalidation -----------------------------------------

def _log_by_hand(conn, *provider_ids):
    """Log rows as a trigger would, returning their ids."""
    log = tables.provider_change_log
    return [conn.execute(sa.insert(log).values(resource_provider_id=rp))
            .inserted_primary_key[0] for rp in provider_ids]


def test_read_answers(ctx):
    start = _read(ctx, None)
    assert start.provider_ids is None
    cursor = start.version
    assert _read(ctx, cursor).provider_ids == set()
    with ctx.db.transaction(write=True) as conn:
        first = _log_by_hand(conn, 7, 3, 7)
    with ctx.db.transaction(write=True) as conn:
        _log_by_hand(conn, 3, 5)
    found = _read(ctx, cursor)
    assert found.provider_ids == {3, 5, 7}
    # (MySQL may have left unused ids below the start: gaps, not ours.)
    assert all(gap.id <= cursor.high for gap in found.version.gaps)
    assert _read(ctx, found.version).provider_ids == set()
    assert _read(ctx, changes.Cursor(first[-1], ())).provider_ids == {3, 5}
    # A cursor beyond this log (another database): reload everything.
    beyond = changes.Cursor(found.version.high + 5, ())
    assert _read(ctx, beyond).provider_ids is None


def test_a_read_in_an_older_snapshot_leaves_later_changes_to_the_next(ctx):
    """A cursor moved by a read in a newer snapshot (another thread),
    then read from in an older one (SQLite readers keep the snapshot of
    their first statement): that read sees the log end below the
    cursor, and reloads everything from what it sees; its cursor must
    then be that snapshot's, or the next read would not name what was
    committed in between (the caller's reload could not see it)."""
    cursor = _cursor(ctx)
    log = tables.provider_change_log
    with ctx.db.transaction(write=False) as old:
        old.execute(sa.select(log.c.id)).all()  # its snapshot, on SQLite
        with ctx.db.transaction(write=True) as conn:
            _log_by_hand(conn, 4)
        newer = _read(ctx, cursor).version
        older = changes.read(old, newer)
    if older.provider_ids is None:  # SQLite: the old snapshot
        found = _read(ctx, older.version).provider_ids
        assert found is None or 4 in found
    else:  # statements take their own snapshot: it saw the row
        assert older.version == newer


def test_a_null_provider_makes_every_reader_reload(ctx):
    cursor = _cursor(ctx)
    with ctx.db.transaction(write=True) as conn:
        _log_by_hand(conn, 4, None)
    found = _read(ctx, cursor)
    assert found.provider_ids is None
    assert _read(ctx, found.version).provider_ids == set()


def test_pruning_makes_readers_left_behind_reload(ctx, monkeypatch):
    monkeypatch.setattr(changes, 'KEEP_ROWS', 3)
    behind = _cursor(ctx)
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(1, 9))
    found = _read(ctx, behind)
    assert found.provider_ids == set(range(1, 9))
    assert found.prune_to == ids[-1] - 3
    recent = changes.Cursor(ids[-2], ())
    with ctx.db.transaction(write=True) as conn:
        changes.prune(conn, found.prune_to)
    assert _log_rows(ctx, 0) == [6, 7, 8]
    assert _read(ctx, behind).provider_ids is None
    assert _read(ctx, recent).provider_ids == {8}
    assert _read(ctx, recent).prune_to is None


def test_the_index_prunes_the_log_when_due(ctx, monkeypatch):
    if ctx.db.in_memory:
        pytest.skip('one shared connection: nothing to prune with')
    monkeypatch.setattr(changes, 'KEEP_ROWS', 2)
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(1, 7))
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert _log_rows(ctx, 0) == [5, 6]
    assert index.version.high == ids[-1]


def test_logged_ids_outlive_what_every_reader_keeps():
    """The age rule never prunes what a reader with live data needs: every
    follower of the log reloads whole before KEEP_SECONDS have passed."""
    from placement.objects import listed_rows
    for follower in (provider_index.ProviderIndex, listed_rows.ListedRows):
        assert follower.max_age < changes.KEEP_SECONDS
    assert changes.GAP_SECONDS < changes.KEEP_SECONDS


def test_the_log_is_pruned_once_its_ids_are_old_enough(ctx, monkeypatch):
    """The age rule: ids more than 2 * START_WINDOW below the newest id
    a read saw KEEP_SECONDS ago are pruned, whatever the log's length,
    and only once PRUNE_STEP more are due."""
    monkeypatch.setattr(changes, 'START_WINDOW', 2)
    monkeypatch.setattr(changes, 'PRUNE_STEP', 3)
    start = changes.KEEP_SECONDS * 10.0
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(1, 11))
    cursor = _read(ctx, None, clock=lambda: start).version
    assert [mark.high for mark in cursor.marks] == [ids[-1]]
    with ctx.db.transaction(write=True) as conn:
        later = _log_by_hand(conn, *range(11, 15))
    # Not yet old: a reader whose data is still in use may need them.
    young = start + changes.KEEP_SECONDS - 1
    found = _read(ctx, cursor, clock=lambda: young)
    assert found.prune_to is None
    assert [mark.high for mark in found.version.marks] == [
        ids[-1], later[-1]]
    old = start + changes.KEEP_SECONDS + 1
    found = _read(ctx, found.version, clock=lambda: old)
    assert found.prune_to == ids[-1] - 4
    with ctx.db.transaction(write=True) as conn:
        changes.prune(conn, found.prune_to)
    assert _log_rows(ctx, 0) == list(range(7, 15))
    # Pruned already, and not PRUNE_STEP further: nothing to do.
    assert _read(ctx, found.version,
                 clock=lambda: old + 1).prune_to is None
    # The second mark's turn: the first is forgotten.
    older = start + 2 * changes.KEEP_SECONDS
    found = _read(ctx, found.version, clock=lambda: older)
    assert found.prune_to == later[-1] - 4
    assert found.version.marks[0].high == later[-1]


def test_a_reader_still_in_use_is_never_pruned_past(ctx, monkeypatch):
    """A reader that read after a mark (as every reader whose data is
    younger than KEEP_SECONDS has) still reads incrementally after the
    age rule pruned up to that mark, also one that started afresh."""
    monkeypatch.setattr(changes, 'START_WINDOW', 3)
    monkeypatch.setattr(changes, 'PRUNE_STEP', 1)
    with ctx.db.transaction(write=True) as conn:
        _log_by_hand(conn, *range(1, 21))
    pruner = _read(ctx, None, clock=lambda: 0.0).version
    fresh = _read(ctx, None, clock=lambda: 1.0).version
    with ctx.db.transaction(write=True) as conn:
        _log_by_hand(conn, 21, 22)
    steady = _read(ctx, fresh, clock=lambda: 2.0).version
    found = _read(ctx, pruner, clock=lambda: changes.KEEP_SECONDS + 1.0)
    with ctx.db.transaction(write=True) as conn:
        changes.prune(conn, found.prune_to)
    with ctx.db.transaction(write=True) as conn:
        _log_by_hand(conn, 23)
    assert _read(ctx, fresh).provider_ids == {21, 22, 23}
    assert _read(ctx, steady).provider_ids == {23}


def test_a_reader_looks_at_the_log_length_once_per_keep_rows(
        ctx, monkeypatch):
    """The frequent read does not ask for the oldest id (see the module
    docstring): a long log is noticed when its newest id passes a
    multiple of KEEP_ROWS."""
    monkeypatch.setattr(changes, 'KEEP_ROWS', 10)
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(1, 40))
    below = ids[-1] // 10 * 10
    # ``ids`` were taken in order, most likely consecutively; a reader
    # past the last multiple of 10 does not look, one before it does.
    assert _read(ctx, changes.Cursor(below, ())).prune_to is None
    assert (_read(ctx, changes.Cursor(below - 1, ())).prune_to
            == ids[-1] - 10)


def test_a_long_read_comes_in_batches_that_add_up(ctx):
    cursor = _cursor(ctx)
    count = changes.BATCH * 2 + 50
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(1, count + 1))
    found = _read(ctx, cursor)
    assert found.provider_ids == set(range(1, count + 1))
    assert found.version.high == ids[-1]
    assert _read(ctx, found.version).provider_ids == set()
    # A batch that holds a NULL provider (reload everything) still
    # leaves the reader at the end of the log.
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, None, *range(1, count + 1))
    found = _read(ctx, found.version)
    assert found.provider_ids is None
    assert found.version.high == ids[-1]


def _pg_explained(conn, stmt, values):
    """(plan, buffers) of prepared ``stmt`` run with ``values``, after
    the executions that make PostgreSQL choose its plan."""
    compiled = stmt._for(conn.dialect)
    for _ in range(8):
        stmt.rows(conn, **values)
    plan = conn.exec_driver_sql(
        'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' + compiled.execute,
        compiled.parameters(values)).scalar()[0]
    generic = conn.exec_driver_sql(
        'SELECT generic_plans FROM pg_prepared_statements WHERE name = %s',
        (compiled.name,)).scalar()
    top = plan['Plan']
    return generic, top['Shared Hit Blocks'] + top['Shared Read Blocks']


def test_the_frequent_read_is_cheap_on_a_long_just_pruned_log(ctx):
    """On PostgreSQL, with a large cloud's log (50,000 rows) just pruned
    and not yet vacuumed: the reads that send no gaps are planned once
    (not at every execution) and read a few index pages (``min(id)``
    would walk the entries of every deleted row)."""
    if ctx.db.dialect != 'postgresql':
        pytest.skip('PostgreSQL plans and buffers')
    log = tables.provider_change_log
    with ctx.db.transaction(write=True) as conn:
        first = conn.exec_driver_sql(
            'INSERT INTO provider_change_log (resource_provider_id) '
            'SELECT 1 FROM generate_series(1, 50000) RETURNING id'
        ).scalars().all()
    with ctx.db.engine.connect() as conn:
        # As autovacuum would have: statistics of a long log.
        conn.execution_options(isolation_level='AUTOCOMMIT').exec_driver_sql(
            'ANALYZE provider_change_log')
    with ctx.db.transaction(write=True) as conn:
        changes.prune(conn, first[-100])
    try:
        with ctx.db.transaction(write=False) as conn:
            if conn.connection.info.get(prepared._READY) is None:
                pytest.skip('prepared statements are off')
            high = first[-1]
            generic, buffers = _pg_explained(
                conn, changes._prepared(conn, 'after'),
                {'high': high, 'floor': high + 1})
            assert changes.read(conn, changes.Cursor(high, ())
                                ).provider_ids == set()
            # A reader counting its gaps (on Galera, but the same
            # statement here): 60 ids counted.
            counted, counted_buffers = _pg_explained(
                conn, changes._prepared(conn, 'counted'),
                {'high': high, 'floor': high - 60, 'base': high - 60,
                 'split': high - 50})
        assert generic > 0 and counted > 0
        assert buffers < 30 and counted_buffers < 40
    finally:
        with ctx.db.transaction(write=True) as conn:
            conn.execute(sa.delete(log).where(log.c.id >= first[0]))


def test_emptying_the_test_database_is_logged(ctx, computes):
    before = _cursor(ctx)
    fixtures._empty(ctx.db)
    assert _read(ctx, before).provider_ids == {p.id for p in computes}


# -- every writer is seen -----------------------------------------------------

def _other_engine(ctx):
    """A connection pool of its own, standing for another program."""
    return sa.create_engine(ctx.db.url)


def test_hand_sql_on_another_connection_is_seen_by_the_index(ctx, computes):
    cn1, cn2 = computes
    index = provider_index.ProviderIndex()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    engine = _other_engine(ctx)
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(tables.inventories)
                         .where(tables.inventories.c.resource_provider_id
                                == cn1.id).values(total=40))
            conn.execute(sa.insert(tables.allocations).values(
                resource_provider_id=cn2.id, consumer_id=str(uuid.uuid4()),
                resource_class_id=0, used=3))
    finally:
        engine.dispose()
    with ctx.db.transaction(write=False) as conn:
        index.refresh(conn)
    assert index.inventories[cn1.id][0].capacity == 40
    assert index.usage[cn2.id] == {0: 3}


def _needs_concurrent_writers(ctx):
    if ctx.db.dialect == 'sqlite':
        pytest.skip('SQLite has one writer at a time: ids commit in order')


def _insert_allocation(conn, provider):
    conn.execute(sa.insert(tables.allocations).values(
        resource_provider_id=provider.id, consumer_id=str(uuid.uuid4()),
        resource_class_id=0, used=1))


@contextlib.contextmanager
def _out_of_order(ctx, computes):
    """A transaction logging the first compute (the lower log id) left
    open while another logging the second commits; yields the open
    transaction."""
    _needs_concurrent_writers(ctx)
    cn1, cn2 = computes
    engine = _other_engine(ctx)
    try:
        with engine.connect() as slow, engine.connect() as fast:
            slow_txn = slow.begin()
            _insert_allocation(slow, cn1)
            with fast.begin():
                _insert_allocation(fast, cn2)
            yield slow_txn
    finally:
        engine.dispose()


def _burn_a_log_id(ctx, computes):
    """Roll back a logged write, as earlier tests on the same database
    may have: MySQL/MariaDB and PostgreSQL do not hand its id out again."""
    engine = _other_engine(ctx)
    try:
        with engine.connect() as conn:
            txn = conn.begin()
            _insert_allocation(conn, computes[0])
            txn.rollback()
    finally:
        engine.dispose()


def _settled_cursor(ctx, computes, clock=time.monotonic):
    """A cursor right after a committed log row, so that ids burnt before
    (``_burn_a_log_id``) lie below it rather than among the next ids.
    Reads from it must take the same ``clock``: gaps are forgotten
    oldest first."""
    engine = _other_engine(ctx)
    try:
        with engine.begin() as conn:
            _insert_allocation(conn, computes[0])
    finally:
        engine.dispose()
    return _read(ctx, None, clock=clock).version


def _gaps_above(version, cursor):
    """Gaps found after ``cursor`` (a fresh cursor keeps the missing ids
    below it as gaps too: it cannot tell which are still running)."""
    return [gap.id for gap in version.gaps if gap.id > cursor.high]


@pytest.fixture(params=['sent', 'counted'])
def gaps_read(request, monkeypatch):
    """Readers send their gaps (a few), or count them (many: Galera)."""
    if request.param == 'counted':
        monkeypatch.setattr(changes, 'SEND_GAPS', 0)
    return request.param


def test_a_row_committed_after_a_higher_one_is_not_missed(
        ctx, computes, gaps_read):
    """Transaction A takes a lower log id than B, B commits first: the
    reader sees B, keeps A's id as a gap, and sees A once it commits."""
    cn1, cn2 = computes
    _burn_a_log_id(ctx, computes)
    cursor = _settled_cursor(ctx, computes)
    with _out_of_order(ctx, computes) as slow_txn:
        found = _read(ctx, cursor)
        assert found.provider_ids == {cn2.id}
        assert len(_gaps_above(found.version, cursor)) == 1
        slow_txn.commit()
    again = _read(ctx, found.version)
    assert again.provider_ids == {cn1.id}
    assert _gaps_above(again.version, cursor) == []


def test_a_reader_starting_afresh_sees_rows_committed_after_it(
        ctx, computes):
    cn1, _cn2 = computes
    with _out_of_order(ctx, computes) as slow_txn:
        start = _read(ctx, None)
        assert start.provider_ids is None  # the full load
        slow_txn.commit()
    assert _read(ctx, start.version).provider_ids == {cn1.id}


def test_gaps_that_will_never_fill_are_forgotten(ctx, computes):
    """A rolled-back transaction's id never appears: the gap is forgotten
    after GAP_SECONDS (on PostgreSQL also not before no transaction older
    than the gap runs)."""
    _burn_a_log_id(ctx, computes)
    cursor = _settled_cursor(ctx, computes, clock=lambda: 1000.0)
    with _out_of_order(ctx, computes) as slow_txn:
        found = _read(ctx, cursor, clock=lambda: 1000.0)
        assert len(_gaps_above(found.version, cursor)) == 1
        slow_txn.rollback()
    soon = _read(ctx, found.version, clock=lambda: 1001.0)
    assert soon.provider_ids == set()
    assert len(_gaps_above(soon.version, cursor)) == 1
    late = _read(ctx, soon.version,
                 clock=lambda: 1001.0 + changes.GAP_SECONDS)
    if ctx.db.dialect == 'postgresql':
        # The suite's other workers share the server, so their short
        # transactions may hold the horizon back for a moment.
        deadline = time.monotonic() + 10
        while (_gaps_above(late.version, cursor)
               and time.monotonic() < deadline):
            time.sleep(0.05)
            late = _read(ctx, late.version,
                         clock=lambda: 1001.0 + changes.GAP_SECONDS)
    assert _gaps_above(late.version, cursor) == []


def test_a_gap_of_a_transaction_that_took_its_id_late_stays_open(ctx):
    """Transaction C takes its id first and its log id second; T the
    other way round, so T's log row is below C's and T's xid above C's.
    Once C commits, a reader notices T's row as a gap; the snapshot's
    xmax is C's xid plus one (the newest finished), not above T's, and
    a later xmin (which leaves out running ids at or above xmax) reaches
    it while T still runs. Were the gap dropped then, T's row, committed
    afterwards, would be seen only at the periodic whole reload."""
    if ctx.db.dialect != 'postgresql':
        pytest.skip('PostgreSQL snapshots')
    cursor = _cursor(ctx)
    engine = sa.create_engine(ctx.db.url)
    try:
        with engine.connect() as first, engine.connect() as late:
            first.begin()
            late.begin()
            first.exec_driver_sql('SELECT pg_current_xact_id()')
            late.exec_driver_sql('SELECT pg_current_xact_id()')
            _log_by_hand(late, 50)
            _log_by_hand(first, 51)
            first.commit()
            found = _read(ctx, cursor)
            assert found.provider_ids == {51}
            found = _read(ctx, found.version)
            late.commit()
        assert _read(ctx, found.version).provider_ids == {50}
    finally:
        engine.dispose()


# -- readers with many gaps count them ---------------------------------------

def _sparse(ctx, providers, holes):
    """Log ``providers`` with ``holes`` ids left unused before each, as a
    Galera node writing alone does; return (the rows' ids, the unused
    ids from the log's highest to the last row). Holes are ids a
    rolled-back insert took (never handed out again), or on SQLite,
    which hands them out again, ids skipped by logging the row at an
    explicit id above the highest. (A server handing out every n-th id,
    as a Galera node, leaves more.)"""
    log = tables.provider_change_log
    engine = _other_engine(ctx)
    ids = []
    try:
        with engine.begin() as conn:
            first = (conn.execute(sa.select(sa.func.max(log.c.id))).scalar()
                     or 0) + 1
        for provider in providers:
            if ctx.db.dialect == 'sqlite':
                with engine.begin() as conn:
                    ids.append((ids[-1] if ids else first - 1) + holes + 1)
                    conn.execute(sa.insert(log).values(
                        id=ids[-1], resource_provider_id=provider))
                continue
            with engine.connect() as conn:
                txn = conn.begin()
                _log_by_hand(conn, *[provider] * holes)
                txn.rollback()
            with engine.begin() as conn:
                ids += _log_by_hand(conn, provider)
    finally:
        engine.dispose()
    return ids, [id_ for id_ in range(first, ids[-1]) if id_ not in ids]


def _aged(sent, ctx, since, at, kept):
    """A read at ``at`` after which the reader's gaps are ``kept`` only
    (on PostgreSQL, once no transaction as old as the older gaps runs:
    the suite's other workers share the server)."""
    deadline = time.monotonic() + 10
    while True:
        found = (sent.read(ctx, since, at=at) if sent
                 else _read(ctx, since, clock=lambda: at))
        if ([gap.id for gap in found.version.gaps] == kept
                or time.monotonic() > deadline):
            break
        time.sleep(0.05)
    assert [gap.id for gap in found.version.gaps] == kept
    return found


def _fill(ctx, hole, provider):
    """Log ``provider`` at the unused id ``hole``: a gap's transaction
    committing late, as the reader sees it."""
    with ctx.db.transaction(write=True) as conn:
        conn.execute(sa.insert(tables.provider_change_log).values(
            id=hole, resource_provider_id=provider))


#: When the ``counting`` reader noticed its gaps (monotonic seconds).
NOTICED = 2.0 * changes.GAP_SECONDS


class Sent:
    """The statements on the log that ``read`` sent (their SQL and
    parameters), run by ``conn.execute`` or as ``Prepared``."""

    def __init__(self, monkeypatch):
        self.statements = []
        self.monkeypatch = monkeypatch

    def start(self, sql, parameters):
        if 'provider_change_log' in sql:
            self.statements.append((sql, parameters))

    def stop(self):
        pass

    def read(self, ctx, since, at=NOTICED + 1):
        """``read`` at monotonic time ``at``."""
        def executed(conn, cursor, sql, parameters, context, many):
            self.start(sql, parameters)
        engine = ctx.db.engine
        self.monkeypatch.setattr(prepared, 'TRACER', self)
        sa.event.listen(engine, 'before_cursor_execute', executed)
        try:
            return _read(ctx, since, clock=lambda: at)
        finally:
            sa.event.remove(engine, 'before_cursor_execute', executed)
            self.monkeypatch.setattr(prepared, 'TRACER', None)

    def values(self):
        """Every parameter value sent."""
        found = []
        for _sql, parameters in self.statements:
            found += list(parameters.values() if isinstance(parameters, dict)
                          else parameters)
        return found

    def sent_gaps(self):
        """Whether any statement sent gap ids (an ``IN`` list)."""
        return any(' IN (' in sql for sql, _ in self.statements)


@pytest.fixture
def counting(ctx, monkeypatch):
    """A reader past many gaps: ``(cursor, holes, sent)``; it counts
    them (more than ``SEND_GAPS``) and its next read sends none. Its
    gaps are the ``holes`` only, noticed at ``NOTICED``."""
    monkeypatch.setattr(changes, 'SEND_GAPS', 4)
    _settled_cursor(ctx, [_new(ctx, 'settle')])
    start = _read(ctx, None, clock=lambda: 0.0).version
    # Earlier tests' unused ids in the start window: forgotten.
    start = _aged(None, ctx, start, NOTICED, []).version
    _ids, holes = _sparse(ctx, range(1, 7), 2)
    found = _read(ctx, start, clock=lambda: NOTICED)
    assert found.provider_ids == set(range(1, 7))
    assert [gap.id for gap in found.version.gaps if gap.id > start.high
            ] == holes
    assert found.version.counted is not None
    return found.version, holes, Sent(monkeypatch)


def test_a_reader_with_many_gaps_sends_none_while_none_fills(ctx, counting):
    """Galera's nodes hand out every third id: a reader keeps thousands
    of gaps that never fill. It asks how many rows lie between its
    lowest gap and its highest id, in the statement that reads the new
    rows; it sends no gap ids while the answer is what it knows of."""
    cursor, holes, sent = counting
    found = sent.read(ctx, cursor)
    assert found.provider_ids == set()
    assert len(sent.statements) == 1
    assert not sent.sent_gaps()
    # Of the gaps, the lowest only (where the count splits).
    assert set(holes) & set(sent.values()) == {holes[0]}
    # The new rows come in the same statement.
    _ids, more = _sparse(ctx, [7], 1)
    again = sent.read(ctx, found.version)
    assert again.provider_ids == {7}
    assert len(sent.statements) == 2
    assert again.version.gaps[-1].id == more[-1]
    assert not sent.sent_gaps()


def test_a_gap_filled_later_is_seen_by_a_reader_that_counts(ctx, counting):
    cursor, holes, sent = counting
    _fill(ctx, holes[3], 40)
    found = sent.read(ctx, cursor)
    assert found.provider_ids == {40}
    # The count differed: the gaps were sent, once.
    assert len(sent.statements) == 2
    assert holes[3] in sent.values()
    assert holes[3] not in [gap.id for gap in found.version.gaps]
    after = sent.read(ctx, found.version)
    assert after.provider_ids == set()
    assert len(sent.statements) == 3
    # The lowest gap too.
    _fill(ctx, holes[0], 41)
    found = sent.read(ctx, after.version)
    assert found.provider_ids == {41}
    _fill(ctx, holes[-1], 42)
    assert sent.read(ctx, found.version).provider_ids == {42}


def test_a_reader_counts_on_from_its_new_lowest_gap(ctx, counting):
    """Gaps are forgotten oldest (lowest) first: the counted range then
    starts below the new lowest gap, without sending the gaps."""
    cursor, holes, sent = counting
    later = _sparse(ctx, [8, 8, 8], 2)[1]
    young = sent.read(ctx, cursor, at=NOTICED + 30).version
    assert young.gaps[-1] == (later[-1], NOTICED + 30,
                              young.gaps[-1].horizon)
    # The fixture's gaps are forgotten, the later kept.
    late = NOTICED + 1 + changes.GAP_SECONDS
    found = _aged(sent, ctx, young, late, later)
    assert found.version.counted[0] < later[0]
    found = sent.read(ctx, found.version, at=late)
    assert found.provider_ids == set()
    assert not sent.sent_gaps()
    _fill(ctx, later[1], 43)
    assert sent.read(ctx, found.version, at=late).provider_ids == {43}


def test_a_reader_that_counts_reads_a_long_log_in_batches(ctx, counting):
    """What it counts follows the batches: the read after them takes one
    statement again."""
    cursor, _holes, sent = counting
    count = changes.BATCH * 2 + 10
    _sparse(ctx, [50], 1)
    with ctx.db.transaction(write=True) as conn:
        ids = _log_by_hand(conn, *range(100, 100 + count))
    found = sent.read(ctx, cursor)
    assert found.provider_ids == {50} | set(range(100, 100 + count))
    assert found.version.high == ids[-1]
    assert len(sent.statements) == 3
    assert not sent.sent_gaps()
    assert sent.read(ctx, found.version).provider_ids == set()
    assert len(sent.statements) == 4


def test_a_prune_into_the_counted_rows_does_not_hide_a_fill(ctx, counting):
    """Deleting counted rows while as many gaps fill leaves the count as
    it was: the reader also checks that the id it counts from is still
    logged, and sends its gaps when it is not."""
    cursor, holes, sent = counting
    base, _expected = cursor.counted
    log = tables.provider_change_log
    with ctx.db.transaction(write=True) as conn:
        # The row counted from, and the next.
        pruned = conn.execute(sa.select(log.c.id).where(log.c.id >= base)
                              .order_by(log.c.id).limit(2)).scalars().all()
        changes.prune(conn, pruned[-1])
    above = [hole for hole in holes if hole > pruned[-1]]
    _fill(ctx, above[0], 44)
    _fill(ctx, above[-1], 45)
    found = sent.read(ctx, cursor)
    # The count alone, then the gaps.
    assert [' IN (' in sql for sql, _ in sent.statements[:2]] == [
        False, True]
    # Nothing is left below its gaps: the reader reloads everything.
    assert found.provider_ids is None


def test_a_forgotten_gap_that_fills_costs_one_recount(ctx, counting):
    """An id forgotten as a gap (GAP_SECONDS after it was noticed) that
    is logged later changes the count: the reader sends its gaps once,
    finds none of them filled, and counts afresh. It does not reload
    (see the module docstring): the row is seen at the next whole
    reload, as before."""
    cursor, holes, sent = counting
    later = _sparse(ctx, [9, 9, 9], 2)[1]
    young = _read(ctx, cursor, clock=lambda: NOTICED + 30).version
    late = NOTICED + 1 + changes.GAP_SECONDS
    aged = _aged(None, ctx, young, late, later).version
    _fill(ctx, holes[-1], 46)
    found = sent.read(ctx, aged, at=late)
    assert found.provider_ids == set()
    assert len(sent.statements) == 2
    sent.read(ctx, found.version, at=late)
    assert len(sent.statements) == 3


def test_a_reader_with_few_gaps_sends_them(ctx, counting, monkeypatch):
    """Up to SEND_GAPS gaps (a few transactions committing out of order
    on PostgreSQL) are sent: when one fills, as it usually soon does,
    the read takes one statement, not two."""
    cursor, holes, sent = counting
    monkeypatch.setattr(changes, 'SEND_GAPS', 100)
    _fill(ctx, holes[2], 47)
    found = sent.read(ctx, cursor)
    assert found.provider_ids == {47}
    assert len(sent.statements) == 1
    assert holes[0] in sent.values()


def test_gaps_are_bounded(ctx, monkeypatch):
    monkeypatch.setattr(changes, 'MAX_GAPS', 2)
    high, gaps = changes._advance(0, (), {6: 1}, 5.0, None, None)
    assert high == 6
    assert [gap.id for gap in gaps] == [4, 5]


# -- raw writers outside the object layer -----------------------------------

def test_root_provider_data_migration_is_logged(ctx):
    rps = tables.resource_providers
    with ctx.db.transaction(write=True) as conn:
        rp_id = conn.execute(sa.insert(rps).values(
            uuid=str(uuid.uuid4()), name='rootless',
            generation=0)).inserted_primary_key[0]
    with _logged(ctx) as logged:
        assert data_migrations.set_root_provider_ids(ctx.db, None, 10) == (
            1, 1)
    assert logged.ids == {rp_id}


def test_root_provider_data_migration_runs_before_the_log_exists(tmp_path):
    """The migration runs on schemas older than head too (that is what it
    is for), where there is no log to write."""
    from placement.db import migration
    url = fixtures.server_url()
    if url is None:
        db = db_api.Database('sqlite:///%s' % (tmp_path / 'old.sqlite'))
    else:
        db = db_api.Database(
            fixtures.create_server_database(url, purpose='oldschema'))
    try:
        migration.upgrade(db, 'b4ed3a175331')
        with db.transaction(write=True) as conn:
            conn.execute(sa.insert(tables.resource_providers).values(
                uuid=str(uuid.uuid4()), name='rootless', generation=0))
        assert data_migrations.set_root_provider_ids(db, None, 10) == (1, 1)
        assert data_migrations.missing_root_provider_count(db) == 0
    finally:
        db.dispose()


# -- concurrency -------------------------------------------------------------

WRITERS = 4
WRITES = 15


def test_a_follower_sees_every_concurrent_write(ctx, gaps_read):
    """Writers on different providers commit concurrently while a reader
    follows the log; every provider the writers made is reported, and
    only those."""
    start = _cursor(ctx)
    created = [[] for _ in range(WRITERS)]
    errors = []
    done = threading.Event()

    def write(index):
        wctx = context.AdminContext(ctx.db)
        try:
            for n in range(WRITES):
                rp = _new(wctx, 'w%d-%d' % (index, n))
                created[index].append(rp.id)
                inv_obj.replace_all(wctx, rp, {'VCPU': {'total': 1}})
        except Exception as exc:  # reported below
            errors.append(exc)

    reads = []

    def follow():
        rctx = context.AdminContext(ctx.db)
        since = start
        while True:
            finished = done.is_set()
            found = _read(rctx, since)
            reads.append(found.provider_ids)
            since = found.version
            if finished:
                return

    writers = [threading.Thread(target=write, args=(i,))
               for i in range(WRITERS)]
    reader = threading.Thread(target=follow)
    reader.start()
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    done.set()
    reader.join()
    assert not errors, errors
    everything = {rp for ids in created for rp in ids}
    assert set().union(*reads) == everything
