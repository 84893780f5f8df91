"""Usages of a project (or one of its users): sums of allocations over
the consumers they own, optionally grouped by consumer type
(api-ref/usages.rst).

Allocation rows without a consumer record are not counted.
"""

import functools

import sqlalchemy as sa
from sqlalchemy.ext import compiler

from placement.db import api as db_api
from placement.db import prepared
from placement.db import tables

_ALLOC = tables.allocations
_CONSUMERS = tables.consumers
_TYPES = tables.consumer_types
_RC = tables.resource_classes

#: Group of consumers without a type, and filter value selecting them.
UNKNOWN = 'unknown'
#: Filter value putting every consumer into one group of that name.
ALL = 'all'


def _consumers(with_user):
    """FROM/WHERE over the allocations of the project's (user's)
    consumers; the project and user are the bound parameters ``project``
    and ``user``. A SELECT from it is ``_in_order``."""
    projects, users = tables.projects, tables.users
    source = projects.join(_CONSUMERS,
                           _CONSUMERS.c.project_id == projects.c.id)
    where = [projects.c.external_id == sa.bindparam('project')]
    if with_user:
        source = source.join(users, users.c.id == _CONSUMERS.c.user_id)
        where.append(users.c.external_id == sa.bindparam('user'))
    source = source.join(_ALLOC, _ALLOC.c.consumer_id == _CONSUMERS.c.uuid)
    return source, where


def _in_order(select):
    """``select`` over ``_consumers`` joining its tables in their order
    on MySQL/MariaDB (``STRAIGHT_JOIN``): from the project's consumers
    to their allocations, at a cost that follows the project's own
    allocations. Right after a cloud was loaded, MariaDB's statistics
    led it to read every allocation of the cloud instead and look each
    consumer up by uuid (3,000 lookups for the project's 1,000
    allocations)."""
    return select.prefix_with('STRAIGHT_JOIN', dialect='mysql')


# Statements are built once per shape and prepared (placement.db.prepared):
# building one (and its cache key) costs more than running it, and
# SQLAlchemy's execution of a built one costs as much again.

@functools.lru_cache(maxsize=None)
def _totals(with_user):
    """Sums grouped by class id, the names joined to the few sums:
    grouping the project's rows by name (a string, sorted in a temporary
    table on MySQL) cost more than reading them. The class is grouped
    as an expression (``+ 0``): grouped by the column, SQLite walked
    the class index over every allocation, to save sorting a project's
    few sums."""
    source, where = _consumers(with_user)
    rc = _ALLOC.c.resource_class_id + sa.literal_column('0')
    sums = _in_order(sa.select(rc.label('rc'),
                               sa.func.sum(_ALLOC.c.used).label('amount'))
                     .select_from(source).where(*where)
                     .group_by(rc)).subquery()
    return prepared.Prepared(
        sa.select(_RC.c.name, sums.c.amount)
        .join_from(sums, _RC, _RC.c.id == sums.c.rc))


@db_api.reader
def totals(ctx, project, user=None):
    """{resource class: amount} used by the project (and user)."""
    if not all(db_api.storable(v) for v in (project, user or '')):
        return {}
    rows = _totals(user is not None).rows(ctx.conn, project=project,
                                          user=user)
    return {name: int(used) for name, used in rows}


class _Rollup(sa.sql.functions.FunctionElement):
    """``GROUP BY`` the columns with a subtotal row for each prefix of
    them, the grand total last: ``ROLLUP(a, b)``, spelled ``a, b WITH
    ROLLUP`` on MySQL and MariaDB. Not on SQLite."""

    name = 'rollup'
    inherit_cache = True


@compiler.compiles(_Rollup)
def _rollup(element, compiled, **kw):
    return 'ROLLUP(%s)' % compiled.process(element.clauses, **kw)


@compiler.compiles(_Rollup, 'mysql')
def _rollup_mysql(element, compiled, **kw):
    return '%s WITH ROLLUP' % compiled.process(element.clauses, **kw)


def _kept_only(kept, untyped):
    """WHERE clauses keeping one group of the aggregated rows (``kept``
    as ``_by_type`` takes it; ``untyped`` the clause that keeps the
    group of consumers without a type). One type is kept from the
    aggregated rows, not among the consumers: a filter there would let
    SQLite read every consumer of that type, of all projects, by the
    type's index."""
    if kept == UNKNOWN:
        return [untyped]
    if kept not in (None, ALL):
        return [_TYPES.c.name == sa.bindparam('consumer_type')]
    return []


@functools.lru_cache(maxsize=None)
def _by_type(with_user, kept, rollup):
    """(prepared statement, grouped): rows (group if grouped, class name or
    None, amount); a row without a class name carries the group's
    consumer count. ``kept`` is None (every group), UNKNOWN, ALL or any
    other value for one named type, bound as ``consumer_type``.

    Sums and counts come from one statement, so that they describe the
    same moment: on PostgreSQL and MySQL each statement of a reader sees
    the writes committed before it, and a count read separately could
    name a group the sums did not have. The project's allocation rows
    are read once and grouped by integer ids, names joined to the few
    aggregated rows only: grouping and counting distinct by names and
    consumer uuids (strings, compared by collation on PostgreSQL) cost
    several times the rest of the statement. With ``rollup`` (every
    database but SQLite) one grouping gives both, see ``_rolled_up``;
    otherwise ``_shared_rows``.
    """
    build = _rolled_up if rollup else _shared_rows
    return build(with_user, kept)


def _rolled_up(with_user, kept):
    """Sums by (type, class) and consumers counted by type in one pass:
    ``GROUP BY ROLLUP(type, class)`` adds a row per type (class NULL),
    whose distinct count is the type's consumers, and a grand total.
    A common table expression read by two aggregates (``_shared_rows``)
    was read twice on MariaDB, which merges it into both: joining the
    project's consumers to their allocations twice cost half as much
    again of the server's CPU. Types are grouped as ``coalesce(type, 0)``
    (ids start at 1), so that a subtotal row (type NULL) never looks
    like the group of consumers without a type."""
    source, where = _consumers(with_user)
    keys = {'rc': _ALLOC.c.resource_class_id}
    if kept != ALL:
        keys = {'type_id': sa.func.coalesce(_CONSUMERS.c.consumer_type_id,
                                            sa.literal_column('0')),
                **keys}
    groups = _in_order(
        sa.select(*(key.label(name) for name, key in keys.items()),
                  sa.func.sum(_ALLOC.c.used).label('amount'),
                  sa.func.count(sa.distinct(_CONSUMERS.c.id))
                  .label('consumers'))
        .select_from(source).where(*where)
        .group_by(_Rollup(*keys.values()))).subquery()
    named = groups.outerjoin(_RC, _RC.c.id == groups.c.rc)
    columns, kept_rows = [], [groups.c.consumers > 0]
    if kept != ALL:
        named = named.outerjoin(_TYPES, _TYPES.c.id == groups.c.type_id)
        columns = [sa.func.coalesce(_TYPES.c.name, UNKNOWN)]
        # The grand total (type NULL) is no group of its own.
        kept_rows.append(groups.c.type_id.is_not(None))
        kept_rows.extend(_kept_only(kept, groups.c.type_id == 0))
    amount = sa.case((groups.c.rc.is_(None), groups.c.consumers),
                     else_=groups.c.amount)
    statement = (sa.select(*columns, _RC.c.name, amount)
                 .select_from(named).where(*kept_rows))
    return prepared.Prepared(statement), kept != ALL


def _shared_rows(with_user, kept):
    """Sums and counts as two aggregates of one common table expression
    of the project's allocation rows, their results joined by UNION
    ALL."""
    source, where = _consumers(with_user)
    rows = (sa.select(_CONSUMERS.c.consumer_type_id.label('type_id'),
                      _CONSUMERS.c.id.label('consumer'),
                      _ALLOC.c.resource_class_id.label('rc'),
                      _ALLOC.c.used)
            .select_from(source).where(*where).cte('project_rows'))
    # "all" is one group: no grouping column, the name added below.
    groups = [] if kept == ALL else [rows.c.type_id]
    group = groups[0] if groups else sa.null()
    consumers = sa.func.count(sa.distinct(rows.c.consumer))
    aggregated = sa.union_all(
        sa.select(group.label('type_id'), rows.c.rc.label('rc'),
                  sa.func.sum(rows.c.used).label('amount'))
        .group_by(*groups, rows.c.rc),
        # Without a grouping column the count has a row even for no
        # consumers at all.
        sa.select(group, sa.null(), consumers)
        .select_from(rows).group_by(*groups).having(consumers > 0)
    ).subquery()
    named = aggregated.outerjoin(_RC, _RC.c.id == aggregated.c.rc)
    columns = []
    if groups:
        named = named.outerjoin(_TYPES, _TYPES.c.id == aggregated.c.type_id)
        columns = [sa.func.coalesce(_TYPES.c.name, UNKNOWN)]
    statement = (sa.select(*columns, _RC.c.name, aggregated.c.amount)
                 .select_from(named)
                 .where(*_kept_only(kept,
                                    aggregated.c.type_id.is_(None))))
    return prepared.Prepared(statement), bool(groups)


@db_api.reader
def by_consumer_type(ctx, project, user=None, consumer_type=None):
    """{group: {resource class: amount, ..., "consumer_count": n}}.

    Groups are consumer type names (``unknown`` for consumers without a
    type). ``consumer_type`` keeps one group: a type name, ``unknown``,
    or ``all``, which puts every consumer into a group of that name.
    """
    if not all(db_api.storable(v)
               for v in (project, user or '', consumer_type or '')):
        return {}
    kept = consumer_type if consumer_type in (None, UNKNOWN, ALL) \
        else 'named'
    statement, grouped = _by_type(user is not None, kept,
                                  ctx.conn.dialect.name != 'sqlite')
    usages = {}
    for row in statement.rows(ctx.conn, project=project, user=user,
                              consumer_type=consumer_type):
        group = usages.setdefault(row[0] if grouped else ALL, {})
        group[row[-2] or 'consumer_count'] = int(row[-1])
    return usages
