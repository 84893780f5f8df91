"""Resource classes: standard (fixed ids 0-20) and custom (ids >= 10000)."""

import dataclasses
import datetime
import typing

import os_resource_classes
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import failures
from placement.db import tables
from placement import exception

_RC = tables.resource_classes

#: Standard class names in id order (the position is the id).
STANDARD = tuple(os_resource_classes.STANDARDS)
_STANDARD_IDS = {name: rc_id for rc_id, name in enumerate(STANDARD)}
#: Ids from here on are custom classes.
CUSTOM_MIN_ID = 10000
#: Attempts at allocating a custom class id before giving up.
ID_RETRIES = 100


@dataclasses.dataclass
class ResourceClass:
    id: int
    name: str
    created_at: typing.Optional[datetime.datetime] = None
    updated_at: typing.Optional[datetime.datetime] = None

    @property
    def last_modified(self):
        return self.updated_at or self.created_at

    @property
    def standard(self):
        return self.id < CUSTOM_MIN_ID


def _select():
    return sa.select(_RC.c.id, _RC.c.name, _RC.c.created_at,
                     _RC.c.updated_at)


@db_api.writer
def sync_standard(ctx):
    """Insert every standard class that is missing, with its fixed id."""
    existing = set(ctx.conn.execute(sa.select(_RC.c.name)).scalars())
    now = db_api.utcnow()
    db_api.insert_missing(ctx.conn, _RC, [
        {'id': rc_id, 'name': name, 'created_at': now}
        for rc_id, name in enumerate(STANDARD) if name not in existing])


@db_api.reader
def ids_by_name(ctx, names):
    """Map each of ``names`` to its id; ResourceClassNotFound if unknown.

    The first unknown name (in the order given) is reported.
    """
    names = list(names)
    # Standard classes have fixed ids, synchronised at every start and
    # never renamed or deleted: only custom ones need the database.
    found = {name: _STANDARD_IDS[name] for name in names
             if name in _STANDARD_IDS}
    custom = {n for n in names if n not in found and db_api.storable(n)}
    if custom:
        found.update(ctx.conn.execute(
            sa.select(_RC.c.name, _RC.c.id).where(_RC.c.name.in_(custom)))
            .all())
    for name in names:
        if name not in found:
            raise exception.ResourceClassNotFound(name=name)
    return found


@db_api.reader
def list_classes(ctx):
    """Every class, standard ones first, in id order."""
    return [ResourceClass(**row._mapping)
            for row in ctx.conn.execute(_select().order_by(_RC.c.id))]


@db_api.reader
def get_by_name(ctx, name):
    """The class called ``name`` (case-sensitive), or ResourceClassNotFound.
    """
    row = None
    if db_api.storable(name):
        row = ctx.conn.execute(_select().where(_RC.c.name == name)).first()
    if row is None:
        raise exception.ResourceClassNotFound(name=name)
    return ResourceClass(**row._mapping)


def _next_custom_id(ctx):
    highest = ctx.conn.execute(sa.select(sa.func.max(_RC.c.id))).scalar()
    return max(highest or 0, CUSTOM_MIN_ID - 1) + 1


def _insert_custom(ctx, name):
    """Insert a custom class at the next free id, retrying when another
    writer takes that id first. ResourceClassExists if the name is taken.
    """
    for _attempt in range(ID_RETRIES):
        next_id = _next_custom_id(ctx)
        try:
            with ctx.conn.begin_nested():
                ctx.conn.execute(sa.insert(_RC).values(
                    id=next_id, name=name, created_at=db_api.utcnow()))
            return
        except sa_exc.IntegrityError as exc:
            if not failures.is_duplicate(exc):
                raise
            if ctx.conn.execute(sa.select(_RC.c.id).where(
                    _RC.c.name == name)).first() is not None:
                raise exception.ResourceClassExists(name=name)
    raise exception.MaxDBRetriesExceeded(name=name)


@db_api.writer
def create(ctx, name):
    """Create a custom class; ResourceClassExists if it exists already."""
    if ctx.conn.execute(sa.select(_RC.c.id).where(
            _RC.c.name == name)).first() is not None:
        raise exception.ResourceClassExists(name=name)
    _insert_custom(ctx, name)


@db_api.writer
def ensure(ctx, name):
    """Create the custom class unless it exists; True if it was created."""
    try:
        create(ctx, name)
    except exception.ResourceClassExists:
        return False
    return True


@db_api.writer
def rename(ctx, name, new_name):
    """Rename a custom class, keeping its id (and so its inventories)."""
    current = get_by_name(ctx, name)
    if current.standard:
        raise exception.ResourceClassCannotUpdateStandard(name=name)
    if new_name == name:
        return current
    taken = ctx.conn.execute(sa.select(_RC.c.id).where(
        _RC.c.name == new_name)).first()
    if taken is not None:
        raise exception.ResourceClassExists(name=new_name)
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.update(_RC).where(_RC.c.id == current.id)
                             .values(name=new_name,
                                     updated_at=db_api.utcnow()))
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        raise exception.ResourceClassExists(name=new_name)
    return get_by_name(ctx, new_name)


@db_api.writer
def destroy(ctx, name):
    """Delete a custom class no inventory uses."""
    current = get_by_name(ctx, name)
    if current.standard:
        raise exception.ResourceClassCannotDeleteStandard(name=name)
    inventories = tables.inventories
    if ctx.conn.execute(sa.select(inventories.c.id).where(
            inventories.c.resource_class_id == current.id).limit(1)
            ).first() is not None:
        raise exception.ResourceClassInUse(name=name)
    ctx.conn.execute(sa.delete(_RC).where(_RC.c.id == current.id))
