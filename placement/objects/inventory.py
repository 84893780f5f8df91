"""Inventories: how much of each resource class a provider offers.

Every write locks the provider row, changes the inventory rows and bumps
the provider generation in one transaction. Writes take ``min_capacity``:
the smallest capacity a record may have (1 below microversion 1.26, 0
from it) for ``check_records``, or None when the caller has checked the
records itself (the reshaper, before any write).
"""

import dataclasses
import datetime
import functools
import typing

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import batch
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import capacity as capacity_rule
from placement.objects import generation_rows
from placement.objects import provider_generation
from placement.objects import resource_class as rc_obj

_INV = tables.inventories
_RC = tables.resource_classes
_ALLOC = tables.allocations

#: Values of omitted record fields (api-ref/inventories.rst).
DEFAULTS = {'reserved': 0, 'min_unit': 1,
            'max_unit': capacity_rule.INTEGER_MAX,
            'step_size': 1, 'allocation_ratio': 1.0}
FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
          'allocation_ratio')


@dataclasses.dataclass
class Inventory:
    resource_class: str
    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float
    created_at: typing.Optional[datetime.datetime] = None
    updated_at: typing.Optional[datetime.datetime] = None

    @property
    def capacity(self):
        return capacity_rule.capacity(self.total, self.reserved,
                                      self.allocation_ratio)

    @property
    def last_modified(self):
        return self.updated_at or self.created_at

    def record(self):
        return {name: getattr(self, name) for name in FIELDS}


def with_defaults(record):
    """A full record from a request body record (extra keys dropped)."""
    full = dict(DEFAULTS)
    full.update((k, v) for k, v in record.items() if k in FIELDS)
    return full


def check_records(provider_uuid, records, min_capacity):
    """Raise InvalidInventoryRecord for the first of the full ``records``
    ({class: record}) that could not be offered with a capacity of at
    least ``min_capacity``: the one check of every inventory write
    (``capacity.problem``)."""
    for resource_class, record in records.items():
        found = capacity_rule.problem(
            *[record[field] for field in capacity_rule.FIELDS],
            min_capacity=min_capacity)
        if found is not None:
            raise exception.InvalidInventoryRecord(
                resource_class=resource_class, provider=provider_uuid,
                problem=found.text)


#: An Inventory's fields, in order.
_COLUMNS = (_RC.c.name.label('resource_class'), _INV.c.total,
            _INV.c.reserved, _INV.c.min_unit, _INV.c.max_unit,
            _INV.c.step_size, _INV.c.allocation_ratio, _INV.c.created_at,
            _INV.c.updated_at)


def _select(provider_id):
    return (sa.select(*_COLUMNS)
            .join(_RC, _RC.c.id == _INV.c.resource_class_id)
            .where(_INV.c.resource_provider_id == provider_id)
            .order_by(_INV.c.resource_class_id))


_OF_PROVIDER = prepared.Prepared(_select(sa.bindparam('provider')))


@db_api.reader
def get_all(ctx, provider):
    """The provider's inventories, in resource class id order."""
    return [Inventory(*row)
            for row in _OF_PROVIDER.rows(ctx.conn, provider=provider.id)]


_GENERATION_AND_INVENTORIES = prepared.Prepared(
    generation_rows.statement(
        [(_INV, _INV.c.resource_provider_id
          == tables.resource_providers.c.id),
         (_RC, _RC.c.id == _INV.c.resource_class_id)],
        _INV.c.resource_class_id, *_COLUMNS[:-2],
        generation_rows.modified(_INV)))


def _listed_inventory(_class_id, *fields_and_modified):
    """An Inventory as the GET of a provider's inventories reads it:
    when it last changed stands for both times."""
    *fields, modified = fields_and_modified
    return Inventory(*fields, updated_at=modified)


@db_api.reader
def get_provider_inventories(ctx, uuid):
    """``(generation, [Inventory, ...])`` of the provider ``uuid``, in
    resource class id order, in one statement; ResourceProviderNotFound
    if there is none."""
    return generation_rows.read(ctx, _GENERATION_AND_INVENTORIES,
                                uuid, _listed_inventory)


@db_api.reader
def get_one(ctx, provider, resource_class):
    """The provider's inventory of one class, or None."""
    row = ctx.conn.execute(
        _select(provider.id).where(_RC.c.name == resource_class)).first()
    return Inventory(**row._mapping) if row else None


def _locked_generation(ctx, provider):
    generation = provider_generation.lock(ctx, [provider.id]).get(provider.id)
    if generation is None:
        raise exception.ResourceProviderNotFound(uuid=provider.uuid)
    return generation


def _check_generation(actual, expected):
    if expected is not None and actual != expected:
        raise exception.ResourceProviderGenerationMismatch()


def _classes_in_use(ctx, provider_id, class_ids):
    """Names of those of ``class_ids`` with allocations on the provider."""
    if not class_ids:
        return []
    rows = ctx.conn.execute(
        sa.select(_RC.c.name).where(_RC.c.id.in_(
            sa.select(_ALLOC.c.resource_class_id).where(
                _ALLOC.c.resource_provider_id == provider_id,
                _ALLOC.c.resource_class_id.in_(sorted(class_ids)))))
        .order_by(_RC.c.id))
    return list(rows.scalars())


def _in_use_error(uuid, names):
    return exception.InventoryInUse(resource_classes=', '.join(names),
                                    provider=uuid)


@db_api.writer
def create(ctx, provider, resource_class, record, min_capacity):
    """Add one inventory; InventoryExists if the class already has one.

    Returns the provider's new generation.
    """
    record = with_defaults(record)
    check_records(provider.uuid, {resource_class: record}, min_capacity)
    class_id = rc_obj.ids_by_name(ctx, [resource_class])[resource_class]
    generation = _locked_generation(ctx, provider)
    values = dict(record, resource_provider_id=provider.id,
                  resource_class_id=class_id, created_at=db_api.utcnow())
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.insert(_INV).values(values))
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        raise exception.InventoryExists(resource_class=resource_class,
                                        provider=provider.uuid)
    return provider_generation.increment_generation(
        ctx, provider.id, generation)


@db_api.writer
def update(ctx, provider, resource_class, record, generation, min_capacity):
    """Replace one existing inventory record after checking the provider
    generation. Returns the new generation."""
    current = _locked_generation(ctx, provider)
    _check_generation(current, generation)
    class_id = rc_obj.ids_by_name(ctx, [resource_class])[resource_class]
    record = with_defaults(record)
    check_records(provider.uuid, {resource_class: record}, min_capacity)
    result = ctx.conn.execute(
        sa.update(_INV)
        .where(_INV.c.resource_provider_id == provider.id,
               _INV.c.resource_class_id == class_id)
        .values(dict(record, updated_at=db_api.utcnow())))
    if result.rowcount != 1:
        raise exception.InventoryNotFound(resource_class=resource_class)
    return provider_generation.increment_generation(ctx, provider.id, current)


@db_api.writer
def replace_all(ctx, provider, records, generation=None, min_capacity=None):
    """Make the provider's inventory exactly ``records`` ({class: record}).

    Checks the generation when one is given, refuses to drop a class that
    has allocations (InventoryInUse), and bumps the generation even when
    nothing changes. Returns the new generation.
    """
    return replace_all_by_uuid(ctx, provider.uuid, records, generation,
                               min_capacity)


@db_api.writer
def replace_all_by_uuid(ctx, uuid, records, generation, min_capacity):
    """``replace_all`` of the provider ``uuid``, found and locked by one
    statement in the write's own transaction (no read of the provider
    before it). ResourceProviderNotFound if there is none."""
    # The generation is bumped by the lock: a refused write rolls the
    # bump back with the rest.
    [(provider_id, (uuid, current))] = provider_generation.lock_and_bump(
        ctx, [uuid], []).items()
    _check_generation(current, generation)
    ids = rc_obj.ids_by_name(ctx, list(records))
    records = {name: with_defaults(record)
               for name, record in records.items()}
    if min_capacity is not None:
        check_records(uuid, records, min_capacity)
    existing = dict(_EXISTING.rows(ctx.conn, provider=provider_id))
    dropped = set(existing) - set(ids.values())
    in_use = _classes_in_use(ctx, provider_id, dropped)
    if in_use:
        raise _in_use_error(uuid, in_use)
    if dropped:
        ctx.conn.execute(sa.delete(_INV).where(
            _INV.c.id.in_([existing[c] for c in dropped])))
    now = db_api.utcnow()
    updated = [{'row_id': existing[ids[name]], 'now': now,
                **{'new_' + field: record[field] for field in FIELDS}}
               for name, record in records.items() if ids[name] in existing]
    if updated:
        _update_rows(ctx, updated)
    created = [dict(record, resource_provider_id=provider_id,
                    resource_class_id=ids[name], created_at=now)
               for name, record in records.items()
               if ids[name] not in existing]
    if created:
        ctx.conn.execute(sa.insert(_INV), created)
    return current + 1


#: Prepared: every PUT of inventories reads it.
_EXISTING = prepared.Prepared(
    sa.select(_INV.c.resource_class_id, _INV.c.id)
    .where(_INV.c.resource_provider_id == sa.bindparam('provider')))
#: One inventory row's record replaced by id; executed once for all the
#: rows a PUT replaces (bound parameters named apart from the columns).
_UPDATE_BY_ID = (
    sa.update(_INV).where(_INV.c.id == sa.bindparam('row_id'))
    .values(updated_at=sa.bindparam('now'),
            **{field: sa.bindparam('new_' + field) for field in FIELDS}))


#: Most rows of one ``_update_by_ids``: its text grows with the square
#: of their number.
_CASE_ROWS = 20


@functools.lru_cache(maxsize=None)
def _update_by_ids(count):
    """``_UPDATE_BY_ID`` of ``count`` rows as one statement: each field
    set by a CASE on the row's id, the parameters of row ``index``
    suffixed with it."""
    ids = [sa.bindparam('row_id%d' % index, type_=_INV.c.id.type)
           for index in range(count)]
    values = {field: sa.case(*[
        (_INV.c.id == row_id,
         sa.bindparam('new_%s%d' % (field, index), type_=_INV.c[field].type))
        for index, row_id in enumerate(ids)]) for field in FIELDS}
    return (sa.update(_INV).where(_INV.c.id.in_(ids))
            .values(updated_at=sa.bindparam('now'), **values))


def _update_rows(ctx, updated):
    """Run ``_UPDATE_BY_ID`` for each of the parameter sets ``updated``:
    one statement where the driver would send one per row (PyMySQL; a
    compute node's PUT replaces three or four rows), else executed with
    all of them (psycopg2 sends them in pages, SQLite in process)."""
    if ctx.conn.dialect.name != 'mysql' or len(updated) == 1:
        ctx.conn.execute(_UPDATE_BY_ID, updated)
        return
    for chunk in batch.chunks(updated, _CASE_ROWS):
        params = {'now': chunk[0]['now']}
        for index, row in enumerate(chunk):
            params.update(('%s%d' % (name, index), value)
                          for name, value in row.items() if name != 'now')
        ctx.conn.execute(_update_by_ids(len(chunk)), params)


@db_api.writer
def delete(ctx, provider, resource_class):
    """Remove one inventory that has no allocations. Returns the new
    generation."""
    class_id = rc_obj.ids_by_name(ctx, [resource_class])[resource_class]
    generation = _locked_generation(ctx, provider)
    if _classes_in_use(ctx, provider.id, [class_id]):
        raise _in_use_error(provider.uuid, [resource_class])
    result = ctx.conn.execute(sa.delete(_INV).where(
        _INV.c.resource_provider_id == provider.id,
        _INV.c.resource_class_id == class_id))
    if result.rowcount != 1:
        raise exception.InventoryNotFound(resource_class=resource_class)
    return provider_generation.increment_generation(
        ctx, provider.id, generation)


@db_api.writer
def delete_all(ctx, provider):
    """Remove every inventory, none of which may have allocations. The
    generation is bumped even if there was nothing to remove."""
    return replace_all(ctx, provider, {})


#: The generation of the provider of the bound ``uuid`` with the name
#: of each class of its inventories and how much of it is allocated.
_GENERATION_AND_USAGES = prepared.Prepared(
    generation_rows.statement(
        [(_INV, _INV.c.resource_provider_id
          == tables.resource_providers.c.id),
         (_RC, _RC.c.id == _INV.c.resource_class_id)],
        _INV.c.resource_class_id, _RC.c.name,
        sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
        .where(_ALLOC.c.resource_provider_id
               == _INV.c.resource_provider_id,
               _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
        .scalar_subquery()))


@db_api.reader
def usages(ctx, provider):
    """{class name: amount allocated} for every inventory of the provider,
    0 where nothing is allocated, in one query."""
    return get_provider_usages(ctx, provider.uuid)[1]


@db_api.reader
def get_provider_usages(ctx, uuid):
    """``(generation, {class name: amount allocated})`` of the provider
    ``uuid``, every class of its inventories listed (0 where nothing is
    allocated), in one statement; ResourceProviderNotFound if there is
    none."""
    generation, usages = generation_rows.read(
        ctx, _GENERATION_AND_USAGES, uuid,
        lambda _class_id, name, used: (name, int(used)))
    return generation, dict(usages)
