"""Aggregates: uuid labels grouping providers.

An aggregate row is created the first time a provider is associated with
it and is never deleted. Its uuid is stored verbatim, exactly as the
client spelled it: two spellings are two aggregates (see
api-ref/behaviour-choices.rst, 'Aggregate uuids kept verbatim').
"""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import generation_rows
from placement.objects import provider_generation

_AGG = tables.placement_aggregates
_RP_AGG = tables.resource_provider_aggregates
_RP = tables.resource_providers

#: Fresh transactions tried to create aggregate rows racing with others.
MAX_CREATE_ATTEMPTS = 10


_IDS = sa.select(_AGG.c.uuid, _AGG.c.id).where(
    _AGG.c.uuid.in_(sa.bindparam('uuids', expanding=True)))


def ids_by_uuid(conn, uuids):
    """{uuid: id} for those of ``uuids`` that exist, read on ``conn``."""
    if not uuids:
        return {}
    return dict(conn.execute(_IDS, {'uuids': sorted(set(uuids))}).all())


#: A provider's generation with each of its aggregates: the GET of a
#: provider's aggregates in one statement rather than two.
_GENERATION_AND_AGGREGATES = prepared.Prepared(
    generation_rows.statement(
        [(_RP_AGG, _RP_AGG.c.resource_provider_id == _RP.c.id),
         (_AGG, _AGG.c.id == _RP_AGG.c.aggregate_id)],
        _AGG.c.id, _AGG.c.uuid))


def _uuid(_id, uuid):
    return uuid


@db_api.reader
def get_provider_aggregates(ctx, uuid):
    """``(generation, [aggregate uuid, ...])`` of the provider ``uuid``,
    in aggregate id order, or ResourceProviderNotFound."""
    return generation_rows.read(ctx, _GENERATION_AND_AGGREGATES,
                                      uuid, _uuid)


@db_api.writer
def _create_missing(ctx, uuids):
    """Insert the aggregates of ``uuids`` that do not exist yet.

    Rows another transaction inserts at the same time are skipped, not
    errors; returns {uuid: id} for all of ``uuids``.
    """
    missing = set(uuids) - set(ids_by_uuid(ctx.conn, uuids))
    if missing:
        now = db_api.utcnow()
        db_api.insert_missing(ctx.conn, _AGG, [
            {'uuid': uuid, 'created_at': now} for uuid in sorted(missing)])
    return ids_by_uuid(ctx.conn, uuids)


def ensure(ctx, uuids):
    """{uuid: id} for ``uuids``, creating the missing aggregates.

    Runs in transactions of its own, committed before the caller's write
    (the aggregate rows outlive a failed write), and is retried in a
    fresh transaction while a concurrent
    creation of the same uuid keeps it from seeing every row.
    """
    uuids, found = set(uuids), {}
    for _attempt in range(MAX_CREATE_ATTEMPTS):
        try:
            found = _create_missing(ctx, uuids)
        except sa_exc.IntegrityError as exc:
            if not failures.is_duplicate(exc):
                raise
            continue
        if len(found) == len(uuids):
            return found
    raise exception.AggregateCreateConflict(
        detail='aggregates %s could not be created'
        % ', '.join(sorted(uuids - set(found))))


@db_api.writer
def _replace(ctx, provider, aggregate_ids, generation):
    locked = provider_generation.lock(ctx, [provider.id])
    if provider.id not in locked:
        raise exception.ResourceProviderNotFound(uuid=provider.uuid)
    current_generation = locked[provider.id]
    if generation is not None and generation != current_generation:
        raise exception.ResourceProviderGenerationMismatch()
    wanted = set(aggregate_ids)
    current = set(ctx.conn.execute(
        sa.select(_RP_AGG.c.aggregate_id)
        .where(_RP_AGG.c.resource_provider_id == provider.id)).scalars())
    if current - wanted:
        ctx.conn.execute(sa.delete(_RP_AGG).where(
            _RP_AGG.c.resource_provider_id == provider.id,
            _RP_AGG.c.aggregate_id.in_(current - wanted)))
    if wanted - current:
        now = db_api.utcnow()
        try:
            with ctx.conn.begin_nested():
                ctx.conn.execute(sa.insert(_RP_AGG), [
                    {'resource_provider_id': provider.id,
                     'aggregate_id': agg_id, 'created_at': now}
                    for agg_id in sorted(wanted - current)])
        except sa_exc.IntegrityError as exc:
            if not failures.is_duplicate(exc):
                raise
            raise exception.AggregateCreateConflict(detail=str(exc.orig))
    if generation is None:
        return current_generation
    return provider_generation.increment_generation(
        ctx, provider.id, current_generation)


def set_provider_aggregates(ctx, provider, uuids, generation=None):
    """Make ``uuids`` the exact aggregate set of ``provider``.

    With a ``generation`` (microversion 1.19 on) it must be the stored one
    (ResourceProviderGenerationMismatch otherwise) and the generation is
    bumped even if nothing changed; without, the generation is neither
    checked nor changed. Returns the provider's generation afterwards.
    """
    ids = ensure(ctx, uuids)
    return _replace(ctx, provider, ids.values(), generation)
