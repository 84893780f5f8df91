"""Traits: the standard catalogue, custom ``CUSTOM_*`` names, and the
traits of each provider."""

import dataclasses
import datetime
import typing

import os_traits
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import generation_rows
from placement.objects import provider_generation

_TRAITS = tables.traits
_RP_TRAITS = tables.resource_provider_traits

#: Providers with this trait share their inventory through aggregates.
SHARES_VIA_AGGREGATE = os_traits.MISC_SHARES_VIA_AGGREGATE
#: Only traits with this prefix can be created or deleted.
CUSTOM_PREFIX = 'CUSTOM_'


@dataclasses.dataclass
class Trait:
    id: int
    name: str
    created_at: typing.Optional[datetime.datetime]
    updated_at: typing.Optional[datetime.datetime]

    @property
    def last_modified(self):
        return self.updated_at or self.created_at


def _select():
    return sa.select(_TRAITS.c.id, _TRAITS.c.name, _TRAITS.c.created_at,
                     _TRAITS.c.updated_at)


def _from_row(row):
    return Trait(id=row.id, name=row.name, created_at=row.created_at,
                 updated_at=row.updated_at)


@db_api.writer
def sync_standard(ctx):
    """Insert every standard trait that is missing; never delete any."""
    existing = set(ctx.conn.execute(sa.select(_TRAITS.c.name)).scalars())
    now = db_api.utcnow()
    db_api.insert_missing(ctx.conn, _TRAITS, [
        {'name': name, 'created_at': now}
        for name in os_traits.get_traits() if name not in existing])


def _ids(ctx, names):
    """{name: id} for those of ``names`` that exist."""
    names = {name for name in names if db_api.storable(name)}
    if not names:
        return {}
    return dict(ctx.conn.execute(
        sa.select(_TRAITS.c.name, _TRAITS.c.id)
        .where(_TRAITS.c.name.in_(names))).all())


@db_api.reader
def ids_by_name(ctx, names):
    """Map each of ``names`` to its id; TraitNotFound names the first
    unknown one (in the order given)."""
    names = list(names)
    found = _ids(ctx, names)
    for name in names:
        if name not in found:
            raise exception.TraitNotFound(names=name)
    return found


# -- the catalogue ---------------------------------------------------------

@db_api.reader
def get_by_name(ctx, name):
    """The trait called exactly ``name``, or TraitNotFound."""
    row = None
    if db_api.storable(name):
        row = ctx.conn.execute(
            _select().where(_TRAITS.c.name == name)).first()
    if row is None:
        raise exception.TraitNotFound(names=name)
    return _from_row(row)


@db_api.writer
def ensure(ctx, name):
    """Create the trait ``name`` unless it exists: (Trait, created).

    A concurrent creation of the same name counts as "already existed".
    """
    row = ctx.conn.execute(_select().where(_TRAITS.c.name == name)).first()
    if row is not None:
        return _from_row(row), False
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.insert(_TRAITS).values(
                name=name, created_at=db_api.utcnow()))
        created = True
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        created = False
    return get_by_name(ctx, name), created


@db_api.reader
def list_traits(ctx, names=None, prefix=None, associated=None):
    """Traits matching every given filter.

    ``names``: only these (unknown ones are ignored); ``prefix``: names
    starting with it, by SQL ``LIKE`` (so ``_`` and ``%`` are wildcards
    and case follows the database collation, as on upstream Placement);
    ``associated``: True/False for traits that some/no provider has.
    """
    stmt = _select().order_by(_TRAITS.c.id)
    if names is not None:
        stmt = stmt.where(_TRAITS.c.name.in_(
            {name for name in names if db_api.storable(name)}))
    if prefix is not None:
        if not db_api.storable(prefix):
            return []
        stmt = stmt.where(_TRAITS.c.name.like(prefix + '%'))
    if associated is not None:
        used = sa.select(_RP_TRAITS.c.trait_id)
        stmt = stmt.where(_TRAITS.c.id.in_(used) if associated
                          else _TRAITS.c.id.not_in(used))
    return [_from_row(row) for row in ctx.conn.execute(stmt)]


@db_api.writer
def destroy(ctx, name):
    """Delete a custom trait no provider has.

    TraitNotFound, then TraitCannotDeleteStandard, then TraitInUse, in
    that order of checking.
    """
    trait = get_by_name(ctx, name)
    if not name.startswith(CUSTOM_PREFIX):
        raise exception.TraitCannotDeleteStandard(name=name)
    in_use = ctx.conn.execute(
        sa.select(_RP_TRAITS.c.trait_id)
        .where(_RP_TRAITS.c.trait_id == trait.id).limit(1)).first()
    if in_use is not None:
        raise exception.TraitInUse(name=name)
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.delete(_TRAITS)
                             .where(_TRAITS.c.id == trait.id))
    except sa_exc.IntegrityError:
        # A provider got the trait concurrently (foreign key).
        raise exception.TraitInUse(name=name)


# -- traits of a provider -------------------------------------------------

_PROVIDER_TRAITS = prepared.Prepared(
    _select()
    .select_from(_TRAITS.join(_RP_TRAITS,
                              _RP_TRAITS.c.trait_id == _TRAITS.c.id))
    .where(_RP_TRAITS.c.resource_provider_id == sa.bindparam('provider'))
    .order_by(_TRAITS.c.id))


def _provider_traits(ctx, provider_id):
    return [Trait(*row)
            for row in _PROVIDER_TRAITS.rows(ctx.conn, provider=provider_id)]


_GENERATION_AND_TRAITS = prepared.Prepared(
    generation_rows.statement(
        [(_RP_TRAITS, _RP_TRAITS.c.resource_provider_id
          == tables.resource_providers.c.id),
         (_TRAITS, _TRAITS.c.id == _RP_TRAITS.c.trait_id)],
        _TRAITS.c.id, _TRAITS.c.name, generation_rows.modified(_TRAITS)))


def _listed_trait(id_, name, modified):
    """A provider's trait as its GET reads it: when it last changed
    stands for both times."""
    return Trait(id_, name, None, modified)


@db_api.reader
def get_provider_traits(ctx, uuid):
    """``(generation, [Trait, ...])`` of the provider ``uuid``, in trait
    id order, in one statement; ResourceProviderNotFound if there is
    none."""
    return generation_rows.read(ctx, _GENERATION_AND_TRAITS, uuid,
                                _listed_trait)


@db_api.writer
def set_provider_traits(ctx, provider, names, generation):
    """Make ``names`` the exact trait set of ``provider``.

    ``generation`` is the client's idea of the provider generation
    (ResourceProviderGenerationMismatch when stale). Every name must exist
    (TraitNotFound naming all the unknown ones, nothing changed). The
    generation is bumped only if the set changed. Returns
    ``(traits, generation)``.
    """
    locked = provider_generation.lock(ctx, [provider.id])
    if provider.id not in locked:
        raise exception.ResourceProviderNotFound(uuid=provider.uuid)
    current_generation = locked[provider.id]
    if generation != current_generation:
        raise exception.ResourceProviderGenerationMismatch()
    wanted = list(dict.fromkeys(names))
    found = _ids(ctx, wanted)
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise exception.TraitNotFound(names=', '.join(unknown),
                                      unknown=unknown)
    wanted_ids = set(found.values())
    current_ids = set(ctx.conn.execute(
        sa.select(_RP_TRAITS.c.trait_id)
        .where(_RP_TRAITS.c.resource_provider_id == provider.id)).scalars())
    if wanted_ids != current_ids:
        removed = current_ids - wanted_ids
        if removed:
            ctx.conn.execute(sa.delete(_RP_TRAITS).where(
                _RP_TRAITS.c.resource_provider_id == provider.id,
                _RP_TRAITS.c.trait_id.in_(removed)))
        added = wanted_ids - current_ids
        if added:
            now = db_api.utcnow()
            ctx.conn.execute(sa.insert(_RP_TRAITS), [
                {'resource_provider_id': provider.id, 'trait_id': trait_id,
                 'created_at': now} for trait_id in sorted(added)])
        current_generation = provider_generation.increment_generation(
            ctx, provider.id, current_generation)
    return _provider_traits(ctx, provider.id), current_generation


@db_api.writer
def delete_provider_traits(ctx, provider):
    """Remove every trait of ``provider``; bump its generation if it had
    any. Returns the generation."""
    locked = provider_generation.lock(ctx, [provider.id])
    if provider.id not in locked:
        raise exception.ResourceProviderNotFound(uuid=provider.uuid)
    generation = locked[provider.id]
    result = ctx.conn.execute(sa.delete(_RP_TRAITS).where(
        _RP_TRAITS.c.resource_provider_id == provider.id))
    if result.rowcount:
        generation = provider_generation.increment_generation(ctx, provider.id,
                                                 generation)
    return generation
