"""Rows no write of the service makes, found in the database.

Hand-written SQL, another implementation sharing the database or an old
bug can leave an inventory the capacity rule refuses (``capacity.problem``)
or allocations of a class their provider has no inventory of. Readers
leave such rows out (the provider index logs each once); ``find`` lists
them all for ``placement-status upgrade check``.
"""

import typing

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement.objects import capacity as capacity_rule

_RP = tables.resource_providers
_RC = tables.resource_classes
_INV = tables.inventories
_ALLOC = tables.allocations

#: The Problem of allocations of a class without inventory.
WITHOUT_INVENTORY = capacity_rule.Problem(
    'allocation_without_inventory', 'resource_class',
    'The provider has allocations of a class it has no inventory of.')

_INVENTORY_ROWS = (
    sa.select(_RP.c.uuid, _RC.c.name,
              *(_INV.c[field] for field in capacity_rule.FIELDS))
    .join(_RP, _RP.c.id == _INV.c.resource_provider_id)
    .join(_RC, _RC.c.id == _INV.c.resource_class_id)
    .order_by(_RP.c.uuid, _RC.c.name))

_STRAY_ALLOCATIONS = (
    sa.select(_RP.c.uuid, _RC.c.name).distinct()
    .select_from(
        _ALLOC.join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
        .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
        .outerjoin(_INV, sa.and_(
            _INV.c.resource_provider_id == _ALLOC.c.resource_provider_id,
            _INV.c.resource_class_id == _ALLOC.c.resource_class_id)))
    .where(_INV.c.id.is_(None))
    .order_by(_RP.c.uuid, _RC.c.name))


class Found(typing.NamedTuple):
    provider_uuid: str
    resource_class: str
    problem: capacity_rule.Problem

    def __str__(self):
        return 'Resource provider %s, %s: %s' % (
            self.provider_uuid, self.resource_class, self.problem.text)


@db_api.reader
def find(ctx):
    """Every invalid row, as Found, by provider uuid and class: the
    inventories in one pass over the table, the stray allocations in
    one query."""
    found = []
    for uuid, name, *record in ctx.conn.execute(_INVENTORY_ROWS):
        problem = capacity_rule.problem(*record)
        if problem is not None:
            found.append(Found(uuid, name, problem))
    found.extend(Found(uuid, name, WITHOUT_INVENTORY)
                 for uuid, name in ctx.conn.execute(_STRAY_ALLOCATIONS))
    return found
