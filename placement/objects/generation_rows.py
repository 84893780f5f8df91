"""A provider's generation with its rows of one kind, in one statement.

The GETs of a provider's inventories, traits and aggregates answer with
the provider's generation and the rows; reading both in one statement
saves a round trip on every such request, the bulk of a cloud's traffic.
"""

import operator

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement import exception

_RP = tables.resource_providers
_SORT_KEY = operator.itemgetter(1)


def statement(joins, key, *columns):
    """The SELECT of the generation of the provider of uuid ``uuid``
    with ``key`` and ``columns`` of the tables of ``joins`` ((table,
    onclause) pairs) outer-joined one after the other: a provider's
    generation and its rows in one statement (one row of NULL ``key``
    and ``columns`` if it has none), rather than two round trips.
    Prepare it and read it with ``read``.

    Only the generation of the provider: the GETs of its inventories,
    traits and aggregates show nothing else of it, and each table joined
    costs the database more than the rows it adds. Only the columns they
    show, too (``modified``): on PyMySQL each column of a result costs
    about 5 µs to describe, whatever the rows. No ORDER BY either:
    ``read`` puts the few rows in ``key`` order itself. Without the
    provider's root and parent and the sort, PostgreSQL spends less CPU
    on a GET of a provider's inventories.

    A chain of outer joins, never an outer join of an inner join: SQLite
    materialises the inner join whole, every row of the table, before
    picking the provider's (measured: 0.3 -> 2.6 ms per request at 1,000
    providers)."""
    select_from = _RP
    for table, onclause in joins:
        select_from = select_from.outerjoin(table, onclause)
    return (sa.select(_RP.c.generation, key, *columns)
            .select_from(select_from)
            .where(_RP.c.uuid == sa.bindparam('uuid')))


def modified(table):
    """The time a row of ``table`` last changed (updated_at, else
    created_at) as one column: the GETs show only the newest of them
    (Last-Modified)."""
    return sa.func.coalesce(table.c.updated_at, table.c.created_at).label(
        'modified')


def read(ctx, statement, uuid, make):
    """``(generation, [make(key, *columns) of each joined row in key
    order])`` from the prepared ``statement``; ResourceProviderNotFound
    if there is no provider ``uuid``."""
    rows = statement.rows(ctx.conn, uuid=uuid) if db_api.storable(
        uuid) else ()
    if not rows:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    if rows[0][1] is None:  # the one row of a provider without any
        return rows[0][0], []
    if len(rows) > 1:
        rows = sorted(rows, key=_SORT_KEY)  # a tuple from some drivers
    return rows[0][0], [make(*row[1:]) for row in rows]
