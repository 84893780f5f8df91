"""The provider change log: which providers changed since version N.

Processes that keep provider data in memory (inventories, usage, traits,
aggregates, tree structure) learn from here, in one cheap query, which
providers to reload. Provider generations cannot tell them: several
writes change what those caches hold without bumping any generation
(a provider a moved consumer leaves, ``DELETE /allocations``, aggregates
below 1.19, re-parenting; see api-ref/design.rst).

Two tables hold the log. ``provider_change_counter`` has exactly one row
(id 1) with the current ``version`` and ``pruned_to``, the version up to
which the log has been thrown away. ``provider_changes`` has a
``(version, resource_provider_id)`` row for every provider a committed
write changed.

Writers record changed providers with ``touch(ctx, ids)``; the writer
decorator (``placement.db.api.writer``) calls ``flush`` just before the
outermost transaction commits, which takes the next version by updating
the counter row and logs the providers under it. As every such writer
updates the one counter row as its last statements and holds that row's
lock until it commits, versions are committed in increasing order: a
reader that sees version N also sees every version below N, so
``read(conn, since)`` never misses a change.

Writes made with raw SQL outside the object layer (test fixtures, data
migrations) record their changes with ``flush(conn, ids)`` themselves,
or call ``invalidate_all(conn)`` when they cannot tell which providers
they changed.
"""

import collections

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from placement.db import tables

_COUNTER = tables.provider_change_counter
_CHANGES = tables.provider_changes
_ROW = _COUNTER.c.id == 1

#: A flush that takes a version divisible by this prunes the log.
PRUNE_EVERY = 1000
#: Versions kept when pruning; readers further behind reload everything.
KEEP_VERSIONS = 10000

Changes = collections.namedtuple('Changes', ['version', 'provider_ids'])
Changes.__doc__ = """What ``read`` found.

``version`` is the counter's current version: pass it as ``since`` next
time. ``provider_ids`` is the set of ids of the providers changed after
``since`` up to ``version`` (empty if none; ids of deleted providers
included), or None when the caller must reload everything: ``since`` was
None, or older than what the log still holds, or newer than the counter
(the database is not the one ``since`` came from).
"""


def touch(ctx, provider_ids):
    """Record that the running writer transaction changed these providers
    (an iterable of ids). They are logged if and when it commits."""
    changed = getattr(ctx, 'changed_providers', None)
    if ctx.conn is None or not ctx.conn_writes or changed is None:
        raise RuntimeError('provider changes can only be recorded inside '
                           'a writer transaction')
    changed.update(provider_ids)


_BUMP = sa.update(_COUNTER).where(_ROW).values(
    version=_COUNTER.c.version + 1)
_BUMPED = _BUMP.returning(_COUNTER.c.version).cte('bumped')
_IDS = sa.func.unnest(
    sa.bindparam('ids', type_=postgresql.ARRAY(sa.Integer))
).table_valued('rp_id').render_derived(name='ids')
#: PostgreSQL: bump and log in one statement (one round trip).
_PG_FLUSH = (
    sa.insert(_CHANGES)
    .from_select(['version', 'resource_provider_id'],
                 sa.select(_BUMPED.c.version, _IDS.c.rp_id)
                 .select_from(_BUMPED.join(_IDS, sa.true())))
    .add_cte(_BUMPED)
    .returning(_CHANGES.c.version))


def _no_counter():
    return RuntimeError('provider_change_counter has no row 1; the schema '
                        'was not created by placement')


def _bump(conn):
    """Increment the counter (locking its row) and return the new version."""
    if conn.dialect.update_returning:
        version = conn.execute(_BUMP.returning(_COUNTER.c.version)).scalar()
    else:
        # MySQL/MariaDB have no UPDATE ... RETURNING, but the value given
        # to LAST_INSERT_ID(expr) comes back with the UPDATE's reply.
        result = conn.execute(sa.update(_COUNTER).where(_ROW).values(
            version=sa.func.last_insert_id(_COUNTER.c.version + 1)))
        version = result.lastrowid if result.rowcount else None
        if result.rowcount and not version:
            # We hold the row lock, so this sees our increment only.
            version = conn.execute(
                sa.select(_COUNTER.c.version).where(_ROW)).scalar()
    if version is None:
        raise _no_counter()
    return version


def flush(conn, provider_ids):
    """Log ``provider_ids`` as changed by the transaction of ``conn`` under
    a new version; return it (None if there are no ids).

    Must be the last statements of the transaction: the counter row stays
    locked until it commits. The writer decorator calls it; raw SQL
    writers outside the object layer call it themselves.
    """
    ids = sorted(set(provider_ids))
    if not ids:
        return None
    if conn.dialect.name == 'postgresql':
        version = conn.execute(_PG_FLUSH, {'ids': ids}).scalar()
        if version is None:
            raise _no_counter()
    else:
        version = _bump(conn)
        conn.execute(sa.insert(_CHANGES), [
            {'version': version, 'resource_provider_id': rp_id}
            for rp_id in ids])
    if version % PRUNE_EVERY == 0 and version > KEEP_VERSIONS:
        prune(conn, version - KEEP_VERSIONS)
    return version


def prune(conn, bound):
    """Forget the log up to version ``bound``; readers older than that
    reload everything. Call with the counter row locked (from ``flush``)
    or where no writer runs."""
    conn.execute(sa.delete(_CHANGES).where(_CHANGES.c.version <= bound))
    conn.execute(sa.update(_COUNTER)
                 .where(_ROW, _COUNTER.c.pruned_to < bound)
                 .values(pruned_to=bound))


def invalidate_all(conn):
    """Make every reader, in every process, reload everything: take a
    new version and prune the whole log up to it. For writes that do not
    know which providers they changed. Call last in the transaction.
    Returns the new version."""
    version = _bump(conn)
    prune(conn, version)
    return version


_SINCE = sa.bindparam('since', type_=sa.BigInteger)
#: The counter's version and pruned_to, with the providers logged after
#: ``since`` (one row with a NULL id if none), in one snapshot.
_READ = (
    sa.select(_COUNTER.c.version, _COUNTER.c.pruned_to,
              _CHANGES.c.resource_provider_id)
    .distinct()
    .select_from(_COUNTER.outerjoin(_CHANGES, sa.and_(
        _CHANGES.c.version > _SINCE,
        _CHANGES.c.version <= _COUNTER.c.version,
        _COUNTER.c.pruned_to <= _SINCE)))
    .where(_ROW))
_CURRENT = sa.select(_COUNTER.c.version).where(_ROW)


def read(conn, since):
    """``Changes(version, provider_ids)`` since version ``since`` (None:
    the caller has nothing yet), in one statement, so that the version
    and the ids come from one snapshot also under READ COMMITTED."""
    if since is None:
        row = conn.execute(_CURRENT).first()
        if row is None:
            raise _no_counter()
        return Changes(row.version, None)
    since = int(since)
    rows = conn.execute(_READ, {'since': since}).all()
    if not rows:
        raise _no_counter()
    version, pruned_to = rows[0].version, rows[0].pruned_to
    if since < pruned_to or since > version:
        return Changes(version, None)
    return Changes(version, {row.resource_provider_id for row in rows
                             if row.resource_provider_id is not None})
