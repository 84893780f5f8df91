"""Fleet capacity: every inventory with its usage, and what it adds up to.

Read for the capacity gauges of ``GET /metrics`` and for ``GET
/capacity``. Two set-based queries read the whole fleet (inventories
with their summed allocations, and aggregate memberships), whatever its
size; ``snapshot`` shares the result between the worker processes of a
server for ``[metrics] capacity_refresh_interval`` seconds, so scrapes
and page views cost at most one such read per interval.
"""

import collections
import dataclasses
import json
import typing

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import tables
from placement.objects import capacity as capacity_rule
from placement.observability import metrics

_RP = tables.resource_providers
_ROOT = tables.resource_providers.alias('root')
_INV = tables.inventories
_RC = tables.resource_classes
_ALLOC = tables.allocations
_RP_AGGS = tables.resource_provider_aggregates
_AGGS = tables.placement_aggregates

_USED = sa.select(
    _ALLOC.c.resource_provider_id.label('rp'),
    _ALLOC.c.resource_class_id.label('rc'),
    sa.func.sum(_ALLOC.c.used).label('used'),
).group_by(_ALLOC.c.resource_provider_id,
           _ALLOC.c.resource_class_id).subquery('used')

_INVENTORY_ROWS = sa.select(
    _RP.c.uuid, _RP.c.name, _ROOT.c.uuid, _ROOT.c.name, _RC.c.name,
    _INV.c.total, _INV.c.reserved, _INV.c.allocation_ratio,
    sa.func.coalesce(_USED.c.used, 0),
).select_from(
    _INV.join(_RP, _RP.c.id == _INV.c.resource_provider_id)
    .join(_ROOT, _ROOT.c.id == _RP.c.root_provider_id)
    .join(_RC, _RC.c.id == _INV.c.resource_class_id)
    .outerjoin(_USED, sa.and_(
        _USED.c.rp == _INV.c.resource_provider_id,
        _USED.c.rc == _INV.c.resource_class_id))
).order_by(_RP.c.uuid, _RC.c.name)

_MEMBERSHIPS = sa.select(_RP.c.uuid, _AGGS.c.uuid).select_from(
    _RP_AGGS.join(_RP, _RP.c.id == _RP_AGGS.c.resource_provider_id)
    .join(_AGGS, _AGGS.c.id == _RP_AGGS.c.aggregate_id))


class Row(typing.NamedTuple):
    """One inventory of one provider, with what is allocated of it."""

    provider_uuid: str
    provider_name: str
    root_uuid: str
    root_name: str
    resource_class: str
    total: int
    reserved: int
    allocation_ratio: float
    used: int

    @property
    def capacity(self):
        # Below zero only for a row no write makes (reserved above
        # total, a negative ratio), which has none (see
        # api-ref/behaviour-choices.rst, 'Rows the service did not
        # write').
        return max(0, capacity_rule.capacity(self.total, self.reserved,
                                             self.allocation_ratio))


@dataclasses.dataclass
class Snapshot:
    """The fleet at one moment: inventory ``rows`` (ordered by provider
    uuid and class) and ``aggregates`` ({aggregate uuid: [provider
    uuid, ...]})."""

    rows: typing.List[Row]
    aggregates: typing.Dict[str, typing.List[str]]

    def over_capacity(self):
        """The rows whose usage exceeds their capacity (a ratio,
        reserved or total lowered below what is allocated)."""
        return [row for row in self.rows if row.used > row.capacity]

    def by_class(self):
        """{class: (capacity, used)} over the fleet."""
        return _sum(self.rows, lambda row: row.resource_class)

    def by_aggregate(self):
        """{(aggregate uuid, class): (capacity, used)} over the members."""
        members = collections.defaultdict(list)
        for aggregate, providers in self.aggregates.items():
            for provider in providers:
                members[provider].append(aggregate)
        totals = collections.defaultdict(lambda: [0, 0])
        for row in self.rows:
            for aggregate in members.get(row.provider_uuid, ()):
                entry = totals[aggregate, row.resource_class]
                entry[0] += row.capacity
                entry[1] += row.used
        return {key: tuple(value) for key, value in sorted(totals.items())}

    def by_root(self):
        """{(root uuid, root name): {class: (capacity, used)}} of every
        tree, its providers added up."""
        trees = collections.defaultdict(list)
        for row in self.rows:
            trees[row.root_uuid, row.root_name].append(row)
        return {root: _sum(rows, lambda row: row.resource_class)
                for root, rows in trees.items()}


def _sum(rows, key):
    totals = collections.defaultdict(lambda: [0, 0])
    for row in rows:
        entry = totals[key(row)]
        entry[0] += row.capacity
        entry[1] += row.used
    return {k: tuple(v) for k, v in sorted(totals.items())}


@db_api.reader
def read(ctx):
    """The fleet as stored now, in two queries."""
    rows = [Row(*row[:5], int(row[5]), int(row[6]),
                None if row[7] is None else float(row[7]), int(row[8]))
            for row in ctx.conn.execute(_INVENTORY_ROWS)]
    aggregates = collections.defaultdict(list)
    for provider, aggregate in ctx.conn.execute(_MEMBERSHIPS):
        aggregates[aggregate].append(provider)
    return Snapshot(rows, {k: sorted(v)
                           for k, v in sorted(aggregates.items())})


_decoded = {}


def snapshot(ctx, max_age):
    """A Snapshot at most ``max_age`` seconds old, read at most once per
    ``max_age`` by all the processes that share metrics files."""
    key = (ctx.db.url, metrics.shared_directory())
    cache = metrics.shared_cache('capacity-snapshot', ctx.db.url)

    def compute():
        fresh = read(ctx)
        return json.dumps({'rows': [list(row) for row in fresh.rows],
                           'aggregates': fresh.aggregates}).encode()

    data = cache.get(compute, max_age)
    last = _decoded.get(key)
    if last is not None and last[0] == data:
        return last[1]
    decoded = json.loads(data)
    result = Snapshot([Row(*row) for row in decoded['rows']],
                      decoded['aggregates'])
    _decoded[key] = (data, result)
    return result
