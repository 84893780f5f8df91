"""Usages of a project (or one of its users): sums of allocations over
the consumers they own, optionally grouped by consumer type
(api-ref/usages.rst).

Allocation rows without a consumer record are not counted.
"""

import functools

import sqlalchemy as sa

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
    and ``user``."""
    projects, users = tables.projects, tables.users
    source = (_ALLOC.join(_CONSUMERS,
                          _CONSUMERS.c.uuid == _ALLOC.c.consumer_id)
              .join(projects, projects.c.id == _CONSUMERS.c.project_id))
    where = [projects.c.external_id == sa.bindparam('project')]
    if with_user:
        source = source.join(users, users.c.id == _CONSUMERS.c.user_id)
        where.append(users.c.external_id == sa.bindparam('user'))
    return source, where


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
    sums = (sa.select(rc.label('rc'),
                      sa.func.sum(_ALLOC.c.used).label('amount'))
            .select_from(source).where(*where)
            .group_by(rc).subquery())
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


@functools.lru_cache(maxsize=None)
def _by_type(with_user, kept):
    """(prepared statement, grouped): rows (group if grouped, class name or
    None, amount); a row without a class name carries the group's
    consumer count. ``kept`` is None (every group), UNKNOWN, ALL or any
    other value for one named type, bound as ``consumer_type``.

    Sums and counts come from one statement, so that they describe the
    same moment: on PostgreSQL and MySQL each statement of a reader sees
    the writes committed before it, and a count read separately could
    name a group the sums did not have. The project's allocation rows
    are read once (a common table expression both aggregates read) and
    grouped by integer ids, names joined to the few aggregated rows
    only: grouping and counting distinct by names and consumer uuids
    (strings, compared by collation on PostgreSQL) cost several times
    the rest of the statement.
    """
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
    columns, kept_only = [], []
    if groups:
        named = named.outerjoin(_TYPES, _TYPES.c.id == aggregated.c.type_id)
        columns = [sa.func.coalesce(_TYPES.c.name, UNKNOWN)]
    # One type is kept from the aggregated rows, not among the consumers:
    # a filter there would let SQLite read every consumer of that type,
    # of all projects, by the type's index.
    if kept == UNKNOWN:
        kept_only = [aggregated.c.type_id.is_(None)]
    elif kept not in (None, ALL):
        kept_only = [_TYPES.c.name == sa.bindparam('consumer_type')]
    statement = (sa.select(*columns, _RC.c.name, aggregated.c.amount)
                 .select_from(named).where(*kept_only))
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
    statement, grouped = _by_type(user is not None, kept)
    usages = {}
    for row in statement.rows(ctx.conn, project=project, user=user,
                              consumer_type=consumer_type):
        group = usages.setdefault(row[0] if grouped else ALL, {})
        group[row[-2] or 'consumer_count'] = int(row[-1])
    return usages
