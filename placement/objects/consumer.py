"""Consumers and the project, user and consumer-type records they name.

Consumers are prepared before their allocations are written: their
projects, users and types are found or created, their generations are
checked against the clients', and new consumer records are created with
generation 0 — in the transaction of the write, so a failed write leaves
no record behind.

A request may name thousands of consumers, so each step is a few
set-based statements for all of them (chunked, see ``db.batch``), never
statements per consumer.
"""

import collections
import dataclasses
import functools
import typing

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import batch
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception

_CONSUMERS = tables.consumers

#: Dialects whose INSERT can skip rows that conflict on a unique key
#: and return those it inserted, with the insert construct doing so.
_SKIPPING_INSERTS = {'sqlite': sqlite.insert, 'postgresql': postgresql.insert}

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
    #: Created by this write already as the write leaves it (generation
    #: 1, its project, user and type): ``bump_all`` has nothing to do.
    final: bool = False


def _read(ctx, column, others, values, every=False):
    """{value: row of ``others``} of the rows whose ``column`` is one of
    ``values``.

    The database may match a value to a row spelled differently (MySQL's
    case- and accent-insensitive collations do). When it did, or with
    ``every`` (each value is known to exist), the values left unmatched
    are read one by one, as each would be alone.
    """
    select = _selecting(column.table.name, column.name,
                        tuple(other.name for other in others))
    found = {}
    for chunk in batch.chunks(values):
        found.update((row[0], tuple(row[1:])) for row in ctx.conn.execute(
            select, {'values': chunk}))
    if every or not found.keys() <= set(values):
        one = sa.select(column, *others)
        for value in values:
            if value not in found:
                row = ctx.conn.execute(one.where(column == value)).first()
                if row is not None:
                    found[value] = tuple(row[1:])
    return found


@functools.lru_cache(maxsize=None)
def _selecting(table, column, others):
    """SELECT column, *others FROM table WHERE column IN (the bound
    ``values``), by names, built once: building a statement costs more
    than running it."""
    table = tables.metadata.tables[table]
    return sa.select(table.c[column], *(table.c[o] for o in others)).where(
        table.c[column].in_(sa.bindparam('values', expanding=True)))


def _name_column(table):
    return table.c.name if 'name' in table.c else table.c.external_id


def _external_ids_of(ctx, wanted, consumers=()):
    """([{value: id}] for each ``(table, values)`` of ``wanted``: the rows
    of ``table`` named by ``values``, the missing ones inserted;
    ``_stored`` of the ``consumers`` uuids, or None if they were not
    read).

    The rows that exist, and the consumers, are read in one statement
    for all tables (a write names a project, a user, often a type, and
    its consumers), except on MySQL or when a table has more values than
    one statement takes. Names a concurrent writer inserts at the same
    time are skipped by the insert (``insert_missing``) and found by the
    second read.
    """
    wanted = [(table, sorted(set(values))) for table, values in wanted]
    consumers = sorted(set(consumers))
    stored = None
    if any(len(values) > batch.SIZE for _table, values in wanted):
        found = [_read_ids(ctx, table, values) for table, values in wanted]
    else:
        found = [{} for _ in wanted]
        asked = [kind for kind, (_table, values) in enumerate(wanted)
                 if values]
        with_consumers = 0 < len(consumers) <= batch.SIZE
        if asked or with_consumers:
            lists = {'values%d' % position: wanted[kind][1]
                     for position, kind in enumerate(asked)}
            if with_consumers:
                stored = {}
                lists['consumers'] = consumers
            for position, value, id_, generation in prepared.run(
                    ctx.conn, _names_union, lists, args=(tuple(
                        wanted[kind][0].name for kind in asked),
                        ctx.conn.dialect.name)):
                if isinstance(value, bytes):  # see _names_union
                    value = value.decode('utf-8', 'replace')
                if position == len(asked):
                    stored[value] = (id_, generation)
                else:
                    found[asked[position]][value] = id_
        for kind, (table, values) in enumerate(wanted):
            if not found[kind].keys() <= set(values):
                # A row spelled differently matched: see ``_read``.
                found[kind] = _read_ids(ctx, table, values)
        if stored is not None and not stored.keys() <= set(consumers):
            stored = None
    for (table, values), ids in zip(wanted, found):
        missing = [value for value in values if value not in ids]
        if missing:
            column = _name_column(table)
            now = db_api.utcnow()
            for chunk in batch.chunks(missing):
                db_api.insert_missing(ctx.conn, table, [
                    {column.name: value, 'created_at': now}
                    for value in chunk])
            ids.update(_read_ids(ctx, table, missing, every=True))
    return found, stored


def _names_union(table_names, dialect, **counts):
    """(position, value, id, generation) of the rows of each table named
    (position in ``table_names``) whose name is in the bound
    ``values<position>`` (generation NULL) and, if the ``consumers``
    list is bound, of the consumers whose uuid is in it (position
    ``len(table_names)``), in one UNION ALL statement: ``counts``
    gives each list's number of values, or None, as ``prepared.run``
    asks. A write names a project, a user, often a type and a consumer
    or two: with that few values the statement is a prepared one (on
    PostgreSQL its planning cost more than running it).

    On MySQL the values come back as bytes: it refuses a UNION of
    columns whose collations it cannot reconcile, which tables created
    by other schema versions may have, and binary strings have none. A
    value that does not decode to one asked for is read again as the
    database spells it (``_read``)."""

    def in_(column, name):
        return prepared.in_(column, name, counts[name])

    def value(column):
        if dialect == 'mysql':
            column = sa.cast(column, sa.LargeBinary)
        return column.label('value')
    selects = []
    for position, name in enumerate(table_names):
        table = tables.metadata.tables[name]
        column = _name_column(table)
        selects.append(
            sa.select(sa.literal(position).label('kind'),
                      value(column), table.c.id,
                      sa.cast(sa.null(), sa.Integer).label('generation'))
            .where(in_(column, 'values%d' % position)))
    if 'consumers' in counts:
        selects.append(
            sa.select(sa.literal(len(table_names)).label('kind'),
                      value(_CONSUMERS.c.uuid), _CONSUMERS.c.id,
                      _CONSUMERS.c.generation)
            .where(in_(_CONSUMERS.c.uuid, 'consumers')))
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


def _read_ids(ctx, table, values, every=False):
    """{value: id} of ``table`` as ``_read`` finds them."""
    return {value: row[0] for value, row in _read(
        ctx, _name_column(table), [table.c.id], values, every).items()}


def _stored(ctx, uuids, every=False):
    """{uuid: (id, generation)} of the existing consumers among ``uuids``
    (``every``: see ``_read``)."""
    return _read(ctx, _CONSUMERS.c.uuid,
                 [_CONSUMERS.c.id, _CONSUMERS.c.generation], uuids, every)


def _insert_one(ctx, row):
    """Create one consumer record; False if another request just did."""
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.insert(_CONSUMERS).values(row))
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        return False
    return True


#: The columns ``prepare_all`` gives a new consumer record.
_NEW_COLUMNS = ('uuid', 'project_id', 'user_id', 'consumer_type_id',
                'generation', 'created_at')


def _skipping_insert(dialect, rows):
    """The insert of ``_insert`` where the database can skip conflicting
    rows, returning (uuid, id, generation) of those it inserted, as
    ``prepared.run`` builds it for ``rows`` rows (a write creates one
    consumer or two, and SQLAlchemy's execute cost more than the
    driver's)."""
    insert = _SKIPPING_INSERTS[dialect](_CONSUMERS)
    if rows is not None:
        insert = insert.values(prepared.rows_of(_CONSUMERS, _NEW_COLUMNS,
                                                rows))
    return insert.on_conflict_do_nothing().returning(
        _CONSUMERS.c.uuid, _CONSUMERS.c.id, _CONSUMERS.c.generation)


def _insert(ctx, rows):
    """Create the consumer records ``rows`` (in uuid order, so concurrent
    writers creating the same ones wait for each other instead of
    deadlocking); return (the uuids this transaction created, {uuid:
    (id, generation)} of those of them the database returned).

    Where the database can skip conflicting rows and return the others
    (SQLite, PostgreSQL), each chunk is one such insert. Elsewhere each
    chunk is one multi-row insert, redone row by row if another request
    created one of its consumers meanwhile, so that the records it
    created are told apart from the others. On MariaDB (10.5 and later)
    the insert returns the rows it made, and needs no savepoint around
    it: a duplicate key there undoes the failed statement only, not the
    transaction.
    """
    rows = sorted(rows, key=lambda row: row['uuid'])
    dialect = ctx.conn.dialect.name
    if dialect in _SKIPPING_INSERTS:
        returned = {}
        for chunk in batch.chunks(rows):
            returned.update(
                (uuid, (id_, generation)) for uuid, id_, generation
                in prepared.run(ctx.conn, _skipping_insert, rows=chunk,
                                args=(dialect,)))
        return set(returned), returned
    created, returned = set(), {}
    returning = dialect == 'mysql' and ctx.conn.dialect.insert_returning
    for chunk in batch.chunks(rows):
        try:
            if returning:
                returned.update(
                    (uuid, (id_, generation)) for uuid, id_, generation
                    in prepared.run(ctx.conn, _returning_insert,
                                    rows=chunk))
            else:
                with ctx.conn.begin_nested():
                    ctx.conn.execute(sa.insert(_CONSUMERS), chunk)
        except sa_exc.IntegrityError as exc:
            if not failures.is_duplicate(exc):
                raise
            created.update(row['uuid'] for row in chunk
                           if _insert_one(ctx, row))
        else:
            created.update(row['uuid'] for row in chunk)
    return created, returned


def _returning_insert(rows):
    """The multi-row insert of new consumers returning (uuid, id,
    generation) of each, as ``prepared.run`` builds it for ``rows``
    rows."""
    insert = sa.insert(_CONSUMERS)
    if rows is not None:
        insert = insert.values(prepared.rows_of(_CONSUMERS, _NEW_COLUMNS,
                                                rows))
    return insert.returning(_CONSUMERS.c.uuid, _CONSUMERS.c.id,
                            _CONSUMERS.c.generation)


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
    return prepare_all(ctx, [dict(
        uuid=uuid, project=project, user=user, generation=generation,
        consumer_type=consumer_type)])[0]


@db_api.writer
def prepare_all(ctx, requests, writing=frozenset()):
    """``prepare`` every dict of keyword arguments in ``requests`` in one
    transaction (the caller's, when there is one), with a few statements
    for all of them.

    Generations are checked in request order: the first consumer whose
    generation is not the client's raises ConsumerGenerationMismatch.
    The consumers of ``writing`` (uuids) are about to be written and
    bumped: those created are created at generation 1 instead, ``final``
    (see ``unfinal`` when the write stops short).
    """
    requests = [dict({'generation': UNCHECKED, 'consumer_type': UNCHANGED},
                     **request) for request in requests]
    uuids = list(dict.fromkeys(r['uuid'] for r in requests))
    (projects, users, types), stored = _external_ids_of(ctx, [
        (tables.projects, [r['project'] for r in requests]),
        (tables.users, [r['user'] for r in requests]),
        (tables.consumer_types, [r['consumer_type'] for r in requests
                                 if r['consumer_type'] is not UNCHANGED])],
        [u for u in uuids if db_api.storable(u)])
    if stored is None:
        stored = _stored(ctx, uuids)
    for request in requests:
        existing = stored.get(request['uuid'])
        _check_generation(None if existing is None else existing[1],
                          request['generation'])
    new = {}
    for request in requests:
        uuid = request['uuid']
        if uuid in stored or uuid in new:
            continue
        type_id = request['consumer_type']
        new[uuid] = {
            'uuid': uuid, 'project_id': projects[request['project']],
            'user_id': users[request['user']],
            'consumer_type_id': (None if type_id is UNCHANGED
                                 else types[type_id]),
            'generation': 1 if uuid in writing else 0,
            'created_at': db_api.utcnow()}
    created, returned = _insert(ctx, new.values()) if new else (set(), {})
    stored.update(returned)
    unread = [uuid for uuid in new if uuid not in returned]
    if unread:
        stored.update(_stored(ctx, unread, every=True))
    consumers = []
    for request in requests:
        uuid = request['uuid']
        if uuid not in stored:
            # Created and deleted again by others since read above.
            raise exception.ConsumerGenerationConflict()
        id_, generation = stored[uuid]
        if uuid in new and uuid not in created:
            # Created by a concurrent request since read above.
            _check_generation(generation, request['generation'])
        type_name = request['consumer_type']
        consumers.append(Consumer(
            id=id_, uuid=uuid, project_id=projects[request['project']],
            user_id=users[request['user']],
            type_id=UNCHANGED if type_name is UNCHANGED else types[type_name],
            generation=generation, created=uuid in created,
            final=uuid in created and uuid in writing))
    return consumers


_UNFINAL = (sa.update(_CONSUMERS)
            .where(_CONSUMERS.c.id.in_(sa.bindparam('ids', expanding=True)))
            .values(generation=0))


def unfinal(ctx, consumers):
    """Give the ``final`` consumers of ``consumers`` the generation a
    created consumer has before any write (0): for a write that commits
    them without writing their allocations (see
    api-ref/behaviour-choices.rst, 'Orphan consumers')."""
    ids = sorted(consumer.id for consumer in consumers if consumer.final)
    for chunk in batch.chunks(ids):
        ctx.conn.execute(_UNFINAL, {'ids': chunk})


def _bump_statement(with_type, ids=None):
    """The compare-and-set of ``bump_all`` of the consumers in the bound
    ``ids`` (their number, or None: see ``prepared.in_``), leaving the
    type alone or setting it (``with_type``)."""
    values = {'project_id': sa.bindparam('new_project'),
              'user_id': sa.bindparam('new_user'),
              'generation': sa.bindparam('new_generation'),
              'updated_at': sa.bindparam('now')}
    if with_type:
        values['consumer_type_id'] = sa.bindparam('new_type')
    return (sa.update(_CONSUMERS)
            .where(prepared.in_(_CONSUMERS.c.id, 'ids', ids),
                   _CONSUMERS.c.generation == sa.bindparam('expected'))
            .values(values))


def _bump_returning(with_type, ids):
    """``_bump_statement`` returning the ids it changed, for
    ``prepared.run`` where UPDATE returns rows: how many it changed
    (a prepared statement gives no row count) tells whether another
    write won."""
    return _bump_statement(with_type, ids).returning(_CONSUMERS.c.id)


#: The compare-and-set of ``bump_all`` where UPDATE returns no rows,
#: leaving the type alone (False) or setting it (True).
_BUMP = {False: _bump_statement(False), True: _bump_statement(True)}


def bump_all(ctx, consumers):
    """Store each consumer's project/user/type and compare-and-set its
    generation, one statement per chunk of consumers sharing those values;
    ConsumerGenerationConflict if another write won any of them. The
    ``final`` ones are left alone: no other write can have seen them."""
    groups = collections.defaultdict(list)
    for consumer in consumers:
        if consumer.final:
            continue
        groups[consumer.project_id, consumer.user_id, consumer.type_id,
               consumer.generation].append(consumer.id)
    now = db_api.utcnow()
    # Sorted so that writers updating the same consumers take their row
    # locks in the same order.
    for (project_id, user_id, type_id, generation), ids in sorted(
            groups.items(), key=lambda item: min(item[1])):
        params = {'new_project': project_id, 'new_user': user_id,
                  'expected': generation, 'new_generation': generation + 1,
                  'now': now}
        if type_id is not UNCHANGED:
            params['new_type'] = type_id
        with_type = type_id is not UNCHANGED
        for chunk in batch.chunks(sorted(set(ids))):
            if ctx.conn.dialect.update_returning:
                changed = len(prepared.run(
                    ctx.conn, _bump_returning, {'ids': chunk}, params,
                    args=(with_type,)))
            else:
                changed = ctx.conn.execute(
                    _BUMP[with_type], dict(params, ids=chunk)).rowcount
            if changed != len(chunk):
                raise exception.ConsumerGenerationConflict()
