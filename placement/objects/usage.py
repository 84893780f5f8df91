"""Usages of a project (or one of its users): sums of allocations over
the consumers they own, optionally grouped by consumer type
(api-ref/usages.rst).

Allocation rows without a consumer record are not counted.
"""

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables

_ALLOC = tables.allocations
_CONSUMERS = tables.consumers
_TYPES = tables.consumer_types
_RC = tables.resource_classes

#: Group of consumers without a type, and filter value selecting them.
UNKNOWN = 'unknown'
#: Filter value putting every consumer into one group of that name.
ALL = 'all'


def _consumers(project, user):
    """FROM/WHERE over the allocations of the project's (user's)
    consumers, with their type name."""
    projects, users = tables.projects, tables.users
    source = (_ALLOC.join(_CONSUMERS,
                          _CONSUMERS.c.uuid == _ALLOC.c.consumer_id)
              .join(projects, projects.c.id == _CONSUMERS.c.project_id)
              .outerjoin(_TYPES, _TYPES.c.id == _CONSUMERS.c.consumer_type_id))
    where = [projects.c.external_id == project]
    if user is not None:
        source = source.join(users, users.c.id == _CONSUMERS.c.user_id)
        where.append(users.c.external_id == user)
    return source, where


@db_api.reader
def totals(ctx, project, user=None):
    """{resource class: amount} used by the project (and user)."""
    if not all(db_api.storable(v) for v in (project, user or '')):
        return {}
    source, where = _consumers(project, user)
    rows = ctx.conn.execute(
        sa.select(_RC.c.name, sa.func.sum(_ALLOC.c.used))
        .select_from(source.join(_RC, _RC.c.id == _ALLOC.c.resource_class_id))
        .where(*where).group_by(_RC.c.name))
    return {name: int(used) for name, used in rows}


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
    source, where = _consumers(project, user)
    group = sa.func.coalesce(_TYPES.c.name, UNKNOWN).label('grp')
    if consumer_type == UNKNOWN:
        where.append(_CONSUMERS.c.consumer_type_id.is_(None))
    elif consumer_type not in (None, ALL):
        where.append(_TYPES.c.name == consumer_type)
    # "all" is one group: no grouping column, the name added below.
    groups = [] if consumer_type == ALL else [group]
    usages = {}
    rows = ctx.conn.execute(
        sa.select(*groups, _RC.c.name, sa.func.sum(_ALLOC.c.used))
        .select_from(source.join(_RC, _RC.c.id == _ALLOC.c.resource_class_id))
        .where(*where).group_by(*groups, _RC.c.name))
    for row in rows:
        name = row[0] if groups else ALL
        usages.setdefault(name, {})[row[-2]] = int(row[-1])
    counts = ctx.conn.execute(
        sa.select(*groups, sa.func.count(sa.distinct(_ALLOC.c.consumer_id)))
        .select_from(source).where(*where).group_by(*groups))
    for row in counts:
        if row[-1]:
            usages[row[0] if groups else ALL]['consumer_count'] = row[-1]
    return usages
