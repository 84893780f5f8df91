"""Consumers and the project, user and consumer-type records they name.

A consumer is prepared before its allocations are written:
its project, user and type are found or created, its generation is
checked against the client's, and a new consumer record is created with
generation 0 — in the transaction of the write, so a failed write leaves
no record behind.
"""

import dataclasses
import typing

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import tables
from placement import exception

_CONSUMERS = tables.consumers

#: ``generation`` value meaning "do not check" (writes below 1.28).
UNCHECKED = object()
#: ``consumer_type`` value meaning "leave the type alone" (below 1.38).
UNCHANGED = object()


@dataclasses.dataclass
class Consumer:
    """A consumer record as prepared for a write.

    ``project_id``/``user_id``/``type_id`` are the values the write should
    leave on the record (internal ids; ``type_id`` UNCHANGED to keep the
    stored one); ``generation`` is the one read while preparing.
    """
    id: int
    uuid: str
    project_id: int
    user_id: int
    type_id: typing.Any
    generation: int
    created: bool


def _external_id(ctx, table, value):
    """Id of the row of ``table`` named ``value``, inserted if missing.

    A concurrent insert of the same name is tolerated by re-reading.
    """
    column = table.c.name if 'name' in table.c else table.c.external_id
    select = sa.select(table.c.id).where(column == value)
    found = ctx.conn.execute(select).scalar()
    if found is not None:
        return found
    db_api.insert_missing(ctx.conn, table, [
        {column.name: value, 'created_at': db_api.utcnow()}])
    return ctx.conn.execute(select).scalar_one()


def _insert(ctx, uuid, project_id, user_id, type_id):
    """Create the consumer record; None if another request just did."""
    try:
        with ctx.conn.begin_nested():
            return ctx.conn.execute(sa.insert(_CONSUMERS).values(
                uuid=uuid, project_id=project_id, user_id=user_id,
                consumer_type_id=type_id, generation=0,
                created_at=db_api.utcnow())).inserted_primary_key[0]
    except sa_exc.IntegrityError as exc:
        if not db_api.is_duplicate(exc):
            raise
        return None


def _check_generation(stored, given):
    """ConsumerGenerationMismatch unless the client's belief holds;
    ``stored`` None means the consumer does not exist."""
    if given is UNCHECKED or given == stored:
        return
    raise exception.ConsumerGenerationMismatch(
        expected='null' if stored is None else stored, given=given)


@db_api.writer
def prepare(ctx, uuid, project, user, generation=UNCHECKED,
            consumer_type=UNCHANGED):
    """The Consumer for a write by external ``project``/``user`` (and
    type name unless UNCHANGED), creating what is missing.

    ``generation`` is what the client believes (None: no such consumer),
    or UNCHECKED. Raises ConsumerGenerationMismatch.
    """
    project_id = _external_id(ctx, tables.projects, project)
    user_id = _external_id(ctx, tables.users, user)
    type_id = UNCHANGED
    if consumer_type is not UNCHANGED:
        type_id = _external_id(ctx, tables.consumer_types, consumer_type)
    select = sa.select(_CONSUMERS.c.id, _CONSUMERS.c.generation).where(
        _CONSUMERS.c.uuid == uuid)
    row = ctx.conn.execute(select).first()
    created = False
    if row is None:
        _check_generation(None, generation)
        new_id = _insert(ctx, uuid, project_id, user_id,
                         None if type_id is UNCHANGED else type_id)
        created = new_id is not None
        row = ctx.conn.execute(select).first()
    if not created:
        _check_generation(row.generation, generation)
    return Consumer(id=row.id, uuid=uuid, project_id=project_id,
                    user_id=user_id, type_id=type_id,
                    generation=row.generation, created=created)


@db_api.writer
def prepare_all(ctx, requests):
    """``prepare`` every dict of keyword arguments in ``requests`` in one
    transaction (the caller's, when there is one)."""
    return [prepare(ctx, **request) for request in requests]
