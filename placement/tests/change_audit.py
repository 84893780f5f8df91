"""Test-only check that every committed write logs what it changed.

``install(db)`` wraps the database's ``transaction``: around every writer
transaction (an attempt of an object writer, or a raw one in a fixture or
helper) it takes a snapshot of everything the allocation candidates
engine reads per provider, together with the change log's version, in
one consistent read, and again after the commit. Every provider whose
data differs must be among those ``changes.read`` reports since the
version before (or the log must ask for a full reload); otherwise the
transaction raises AssertionError after committing.

The rule holds under concurrency too: writes committed by others in
between log their own providers. Each snapshot is a handful of
statements, cheap on the small databases of tests.
"""

import collections
import contextlib

import sqlalchemy as sa

from placement.db import changes
from placement.db import tables

_RP = tables.resource_providers
_INV = tables.inventories
_ALLOC = tables.allocations
_RC = tables.resource_classes
_RP_TRAITS = tables.resource_provider_traits
_TRAITS = tables.traits
_RP_AGG = tables.resource_provider_aggregates
_AGG = tables.placement_aggregates


def _statements():
    """(name, statement) whose rows start with a provider id."""
    usage = (sa.select(_ALLOC.c.resource_provider_id, _RC.c.name,
                       sa.func.sum(_ALLOC.c.used))
             .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
             .group_by(_ALLOC.c.resource_provider_id, _RC.c.name))
    return (
        ('provider', sa.select(_RP.c.id, _RP.c.uuid, _RP.c.parent_provider_id,
                               _RP.c.root_provider_id)),
        ('inventory', sa.select(
            _INV.c.resource_provider_id, _RC.c.name, _INV.c.total,
            _INV.c.reserved, _INV.c.min_unit, _INV.c.max_unit,
            _INV.c.step_size, _INV.c.allocation_ratio)
            .join(_RC, _RC.c.id == _INV.c.resource_class_id)),
        ('usage', usage),
        ('trait', sa.select(_RP_TRAITS.c.resource_provider_id, _TRAITS.c.name)
         .join(_TRAITS, _TRAITS.c.id == _RP_TRAITS.c.trait_id)),
        ('aggregate', sa.select(_RP_AGG.c.resource_provider_id, _AGG.c.uuid)
         .join(_AGG, _AGG.c.id == _RP_AGG.c.aggregate_id)),
    )


class ChangeAudit:

    def __init__(self, db):
        self.db = db
        self._transaction = db.transaction

    def _read_connection(self):
        conn = self.db.engine.connect()
        if self.db.dialect != 'sqlite':
            # One snapshot for every statement of the read.
            conn = conn.execution_options(isolation_level='REPEATABLE READ')
        return conn

    def _state(self, conn):
        state = collections.defaultdict(set)
        for name, stmt in _statements():
            for row in conn.execute(stmt):
                state[row[0]].add((name,) + tuple(
                    int(v) if name == 'usage' and i == 1 else v
                    for i, v in enumerate(row[1:])))
        return state

    def _before(self):
        with self._read_connection() as conn, conn.begin():
            version = changes.read(conn, None).version
            return version, self._state(conn)

    def _check(self, version, before):
        with self._read_connection() as conn, conn.begin():
            logged = changes.read(conn, version)
            after = self._state(conn)
        if logged.provider_ids is None:
            return
        changed = {rp for rp in set(before) | set(after)
                   if before.get(rp) != after.get(rp)}
        missing = changed - logged.provider_ids
        if missing:
            raise AssertionError(
                'providers changed by a committed write but not logged in '
                'provider_changes since version %d: %s\n%s' % (
                    version, sorted(missing), '\n'.join(
                        '%s: before %s after %s' % (
                            rp, sorted(before.get(rp, ())),
                            sorted(after.get(rp, ())))
                        for rp in sorted(missing))))

    @contextlib.contextmanager
    def transaction(self, write):
        if not write:
            with self._transaction(write) as conn:
                yield conn
            return
        version, before = self._before()
        with self._transaction(write) as conn:
            yield conn
        self._check(version, before)


def install(db):
    """Audit every writer transaction of ``db`` from now on (once)."""
    if not isinstance(getattr(db.transaction, '__self__', None), ChangeAudit):
        db.transaction = ChangeAudit(db).transaction
    return db
