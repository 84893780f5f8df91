"""Provider generations: the row locks writers take and the bumps they
make (see HACKING.rst, 'Writing object functions').

Every write that checks or changes a provider's generation goes through
here, whatever it writes (inventories, allocations, traits, aggregates,
trees), so this module depends on nothing but the provider table.
"""

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import prepared
from placement.db import tables
from placement import exception

_RP = tables.resource_providers

def _locking_read(dialect, uuids=False, ids=False):
    """The locking read of providers by uuid and/or id of (id, uuid,
    generation), in id order, as ``prepared.run`` builds it for the
    ``uuids`` and ``ids`` lists (False: no such term): a write runs it
    every time, and ``conn.execute`` costs more than running it. Only
    the terms in use: an empty IN in an OR can keep the database from
    using either index."""
    terms = []
    if uuids is not False:
        terms.append(prepared.in_(_RP.c.uuid, 'uuids', uuids))
    if ids is not False:
        terms.append(prepared.in_(_RP.c.id, 'ids', ids))
    stmt = (sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation)
            .where(sa.or_(*terms)).order_by(_RP.c.id))
    return stmt if dialect == 'sqlite' else stmt.with_for_update()


def lock(ctx, provider_ids):
    """Lock provider rows (id order, so writers never deadlock).

    Returns {id: generation} for the providers that still exist. On SQLite
    the writer transaction already holds the database write lock.
    """
    return {rp: generation for rp, _uuid, generation
            in lock_uuids_and_ids(ctx, (), provider_ids)}


def lock_uuids_and_ids(ctx, uuids, ids):
    """Lock the providers with these uuids or ids as ``lock`` does, in
    one statement: [(id, uuid, generation)] of those that exist."""
    lists = {name: sorted(set(values)) for name, values
             in (('uuids', uuids), ('ids', ids)) if values}
    if not lists:
        return []
    return prepared.run(ctx.conn, _locking_read, lists,
                        args=(ctx.conn.dialect.name,))


def _lock_and_bump_statement(dialect, uuids=False, ids=False):
    """``_locking_read``'s locking read as the subquery of the UPDATE
    that bumps the generations of the rows it locked, returning (id,
    uuid, new generation), as ``prepared.run`` builds it for the
    ``uuids`` and ``ids`` lists (False: no such term). With uuids it
    changes nothing unless all of them exist (``found``, the number of
    them)."""
    locked = _RP.alias('locked')
    terms = []
    if uuids is not False:
        terms.append(prepared.in_(locked.c.uuid, 'uuids', uuids))
    if ids is not False:
        terms.append(prepared.in_(locked.c.id, 'ids', ids))
    selected = (sa.select(locked.c.id).where(sa.or_(*terms))
                .order_by(locked.c.id))
    if dialect != 'sqlite':
        selected = selected.with_for_update()
    where = [_RP.c.id.in_(selected)]
    if uuids is not False:
        named = _RP.alias('named')
        where.append(
            sa.select(sa.func.count()).select_from(named)
            .where(prepared.in_(named.c.uuid, 'uuids', uuids))
            .scalar_subquery()
            == sa.bindparam('found', type_=sa.Integer))
    return (sa.update(_RP).where(*where)
            .values(generation=_RP.c.generation + 1,
                    updated_at=sa.bindparam('now'))
            .returning(_RP.c.id, _RP.c.uuid, _RP.c.generation))


def lock_and_bump(ctx, uuids, ids):
    """Lock the providers with these uuids or ids as
    ``lock_uuids_and_ids`` does and increment their generations:
    {id: (uuid, generation before)} of every one of them. A write that
    bumps every provider it locks saves the compare-and-set at its end,
    which the lock makes certain to succeed.

    Raises ResourceProviderNotFound, with nothing changed, naming the
    first of ``uuids`` (in the order given) that does not exist; and
    ResourceProviderConcurrentUpdateDetected when one of them, or of
    ``ids``, was deleted while this write waited for its lock: nothing
    may be kept of the attempt, the next one reports it unknown.
    """
    uuids = list(dict.fromkeys(uuids))
    ids = sorted(set(ids))
    if not uuids and not ids:
        return {}
    rows = []
    if all(db_api.storable(uuid) for uuid in uuids):
        rows = _bump_locked(ctx, sorted(uuids), ids)
    if uuids and not rows:
        _raise_unknown(ctx, uuids, ids)
    locked = {rp: (uuid, generation) for rp, uuid, generation in rows}
    named = {uuid for uuid, _generation in locked.values()}
    if (any(uuid not in named for uuid in uuids)
            or not set(ids) <= locked.keys()):
        raise exception.ResourceProviderConcurrentUpdateDetected()
    return locked


def _raise_unknown(ctx, uuids, ids):
    """Why the bumping lock of ``uuids`` and ``ids`` changed nothing:
    ResourceProviderNotFound for the first unknown uuid, else (all of
    them exist now) a race."""
    found = {uuid for _rp, uuid, _generation in lock_uuids_and_ids(
        ctx, [uuid for uuid in uuids if db_api.storable(uuid)], ids)}
    for uuid in uuids:
        if uuid not in found:
            raise exception.ResourceProviderNotFound(uuid=uuid)
    raise exception.ResourceProviderConcurrentUpdateDetected()


def _bump_locked(ctx, uuids, ids):
    """[(id, uuid, generation before)] of the providers locked and
    bumped, or [] with nothing changed when one of ``uuids`` does not
    exist. One statement where UPDATE returns rows (PostgreSQL, SQLite;
    up to ``prepared.UP_TO`` of each, prepared: planning its subqueries
    cost PostgreSQL more than running them); elsewhere (MySQL, MariaDB)
    the locking read, then the UPDATE of the rows it locked."""
    now = db_api.utcnow()
    if not ctx.conn.dialect.update_returning:
        # Both prepared (up to ``prepared.UP_TO`` of each): through
        # ``conn.execute`` they cost a PyMySQL write more CPU than its
        # BEGIN and COMMIT together.
        rows = lock_uuids_and_ids(ctx, uuids, ids)
        if not set(uuids) <= {uuid for _rp, uuid, _generation in rows}:
            return []
        prepared.run(ctx.conn, _bump, {'ids': [rp for rp, _u, _g in rows]},
                     {'now': now})
        return rows
    rows = prepared.run(
        ctx.conn, _lock_and_bump_statement,
        {name: values for name, values in (('uuids', uuids), ('ids', ids))
         if values},
        {'now': now, 'found': len(uuids)}, args=(ctx.conn.dialect.name,))
    return [(rp, uuid, generation - 1) for rp, uuid, generation in rows]


def _bump(ids):
    """The bump of rows ``_bump_locked`` locked where UPDATE cannot
    return them (under the lock, no compare-and-set is needed), as
    ``prepared.run`` builds it for the ``ids`` list."""
    return (sa.update(_RP).where(prepared.in_(_RP.c.id, 'ids', ids))
            .values(generation=_RP.c.generation + 1,
                    updated_at=sa.bindparam('now',
                                            type_=_RP.c.updated_at.type)))


_INCREMENT = (
    sa.update(_RP)
    .where(_RP.c.id == sa.bindparam('provider'),
           _RP.c.generation == sa.bindparam('expected'))
    .values(generation=sa.bindparam('new_generation'),
            updated_at=sa.bindparam('now')))


def increment_generation(ctx, provider_id, expected):
    """Compare-and-set the generation from ``expected`` to ``expected+1``.

    Raises ResourceProviderConcurrentUpdateDetected if another writer
    changed it since it was read. Returns the new generation.
    """
    result = ctx.conn.execute(_INCREMENT, {
        'provider': provider_id, 'expected': expected,
        'new_generation': expected + 1, 'now': db_api.utcnow()})
    if result.rowcount != 1:
        raise exception.ResourceProviderConcurrentUpdateDetected()
    return expected + 1
