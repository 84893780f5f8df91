"""Set-based queries feeding the allocation-candidates search.

Each function is one statement (or one per chunk of a long id list) and
returns plain maps of ids; ``allocation_candidate`` decides what to ask.
"""

import collections

import sqlalchemy as sa

from placement.db import tables
from placement.objects import inventory as inventory_obj
from placement.objects import trait as trait_obj

_RP = tables.resource_providers
_INV = tables.inventories
_ALLOC = tables.allocations
_RP_TRAITS = tables.resource_provider_traits
_RP_AGGS = tables.resource_provider_aggregates

#: Largest id list sent in one IN clause.
CHUNK = 500


def _chunks(ids):
    ids = sorted(ids)
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


def _used():
    """Amount allocated of the inventory row's class on its provider: a
    correlated subquery, so only the inventories examined are summed
    (the covering index on allocations makes each a range scan)."""
    return sa.func.coalesce(
        sa.select(sa.func.sum(_ALLOC.c.used))
        .where(_ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
               _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
        .scalar_subquery(), 0)


def _with(table, column, ids):
    """Providers having a row in ``table`` whose ``column`` is in ``ids``."""
    return (sa.select(table.c.resource_provider_id)
            .where(table.c[column].in_(sorted(ids))))


# -- WHERE clauses on resource_providers --------------------------------------

def has_traits(terms, forbidden):
    """Providers that have a trait of every term and none of forbidden
    (trait ids)."""
    clauses = [_RP.c.id.in_(_with(_RP_TRAITS, 'trait_id', term))
               for term in terms]
    if forbidden:
        clauses.append(_RP.c.id.not_in(
            _with(_RP_TRAITS, 'trait_id', forbidden)))
    return clauses


def in_aggregates(terms, forbidden, or_root=False):
    """Providers in an aggregate of every term and in none of forbidden
    (aggregate ids). With ``or_root`` a term is also met when the
    provider's root is in it (a superset prefilter for the unsuffixed
    group; the exact rule is checked afterwards)."""
    clauses = []
    for term in terms:
        members = _with(_RP_AGGS, 'aggregate_id', term)
        if or_root:
            # A UNION rather than an OR, so the database can drive the
            # query from the (few) members instead of every inventory.
            tree = _RP.alias('member_tree')
            members = sa.union(
                members,
                sa.select(tree.c.id).where(tree.c.root_provider_id.in_(
                    _with(_RP_AGGS, 'aggregate_id', term))))
        clauses.append(_RP.c.id.in_(members))
    if forbidden:
        clauses.append(_RP.c.id.not_in(
            _with(_RP_AGGS, 'aggregate_id', forbidden)))
    return clauses


def tree_has_traits(terms, always=()):
    """Providers whose tree has, for every term (trait ids), some
    provider with one of its traits; the providers ``always`` pass too.

    A prefilter for the unsuffixed group, whose required traits may come
    from any contributing provider of the anchor's tree: necessary, not
    sufficient (the exact rule is checked afterwards), and only valid
    for terms no sharing provider carries, so sharing providers are
    passed as ``always``.
    """
    holder = _RP.alias('trait_holder')
    clauses = []
    for term in terms:
        roots = (sa.select(holder.c.root_provider_id)
                 .join(_RP_TRAITS,
                       _RP_TRAITS.c.resource_provider_id == holder.c.id)
                 .where(_RP_TRAITS.c.trait_id.in_(sorted(term))))
        clause = _RP.c.root_provider_id.in_(roots)
        if always:
            clause = sa.or_(clause, _RP.c.id.in_(sorted(always)))
        clauses.append(clause)
    return clauses


def in_tree(root_id):
    return [_RP.c.root_provider_id == root_id]


# -- queries ------------------------------------------------------------------

def capacity(ctx, amounts, where=()):
    """Providers (matching ``where``) able to take one of ``amounts``
    ({class id: amount}) on their own: the capacity test of spec 10 §1.

    Returns ``(provider, root, class, room)`` tuples where ``room`` is
    the most one candidate may place there: ``min(capacity - used,
    max_unit)``. The database selects the inventories and their usage;
    the test itself runs here, so each row's usage is summed only once.
    """
    stmt = (sa.select(_INV.c.resource_provider_id, _RP.c.root_provider_id,
                      _INV.c.resource_class_id, _INV.c.total,
                      _INV.c.reserved, _INV.c.allocation_ratio,
                      _INV.c.min_unit, _INV.c.max_unit, _INV.c.step_size,
                      _used())
            .select_from(
                _INV.join(_RP, _RP.c.id == _INV.c.resource_provider_id))
            .where(_INV.c.resource_class_id.in_(sorted(amounts)), *where))
    found = []
    for (provider, root, rc, total, reserved, ratio, min_unit, max_unit,
         step_size, used) in ctx.conn.execute(stmt).all():
        amount = amounts[rc]
        room = inventory_obj.capacity(total, reserved, ratio) - used
        if (min_unit <= amount <= max_unit and amount % step_size == 0
                and amount <= room):
            found.append((provider, root, rc, min(room, max_unit)))
    return found


def providers(ctx, where):
    """``(provider, root)`` of the providers matching ``where``."""
    return [tuple(row) for row in ctx.conn.execute(
        sa.select(_RP.c.id, _RP.c.root_provider_id).where(*where))]


def root_of_uuid(ctx, uuid):
    """Root id of the provider ``uuid``, or None if there is none."""
    return ctx.conn.execute(sa.select(_RP.c.root_provider_id)
                            .where(_RP.c.uuid == uuid)).scalar()


def sharing_providers(ctx):
    """Ids of the providers with trait MISC_SHARES_VIA_AGGREGATE."""
    traits = tables.traits
    return set(ctx.conn.execute(
        sa.select(_RP_TRAITS.c.resource_provider_id)
        .join(traits, traits.c.id == _RP_TRAITS.c.trait_id)
        .where(traits.c.name == trait_obj.SHARES_VIA_AGGREGATE)).scalars())


def associated_roots(ctx, sharing_ids):
    """{sharing provider: roots of the trees sharing an aggregate with
    it} (its own root included when it is in any aggregate)."""
    mine, theirs = _RP_AGGS.alias('mine'), _RP_AGGS.alias('theirs')
    result = collections.defaultdict(set)
    for chunk in _chunks(sharing_ids):
        rows = ctx.conn.execute(
            sa.select(mine.c.resource_provider_id, _RP.c.root_provider_id)
            .distinct()
            .select_from(
                mine.join(theirs,
                          theirs.c.aggregate_id == mine.c.aggregate_id)
                .join(_RP, _RP.c.id == theirs.c.resource_provider_id))
            .where(mine.c.resource_provider_id.in_(chunk)))
        for sharing, root in rows:
            result[sharing].add(root)
    return result


def _memberships(ctx, table, column, provider_ids, wanted_ids):
    result = collections.defaultdict(set)
    if not wanted_ids:
        return result
    for chunk in _chunks(provider_ids):
        rows = ctx.conn.execute(
            sa.select(table.c.resource_provider_id, table.c[column])
            .where(table.c.resource_provider_id.in_(chunk),
                   table.c[column].in_(sorted(wanted_ids))))
        for provider, value in rows:
            result[provider].add(value)
    return result


def traits_of(ctx, provider_ids, trait_ids):
    """{provider: the ones of ``trait_ids`` it has}."""
    return _memberships(ctx, _RP_TRAITS, 'trait_id', provider_ids, trait_ids)


def aggregates_of(ctx, provider_ids, aggregate_ids):
    """{provider: the ones of ``aggregate_ids`` it is in}."""
    return _memberships(ctx, _RP_AGGS, 'aggregate_id', provider_ids,
                        aggregate_ids)


def tree_members(ctx, root_ids):
    """{provider: parent} for every provider of the trees ``root_ids``."""
    result = {}
    for chunk in _chunks(root_ids):
        result.update(ctx.conn.execute(
            sa.select(_RP.c.id, _RP.c.parent_provider_id)
            .where(_RP.c.root_provider_id.in_(chunk))).all())
    return result


def any_nested(ctx):
    """True if some provider has a parent."""
    return ctx.conn.execute(
        sa.select(_RP.c.id).where(_RP.c.parent_provider_id.is_not(None))
        .limit(1)).first() is not None


# -- provider summaries -------------------------------------------------------

def _chosen(ids, by_root):
    """WHERE clauses picking providers by id, or by tree (root ids)."""
    column = _RP.c.root_provider_id if by_root else _RP.c.id
    for chunk in _chunks(ids):
        yield column.in_(chunk)


def identities(ctx, ids, by_root=False):
    """{provider: (uuid, parent uuid or None, root uuid)} of the providers
    ``ids``, or of every provider of the trees ``ids`` with ``by_root``."""
    root, parent = _RP.alias('root_rp'), _RP.alias('parent_rp')
    result = {}
    for where in _chosen(ids, by_root):
        rows = ctx.conn.execute(
            sa.select(_RP.c.id, _RP.c.uuid, parent.c.uuid, root.c.uuid)
            .select_from(
                _RP.join(root, root.c.id == _RP.c.root_provider_id)
                .outerjoin(parent, parent.c.id == _RP.c.parent_provider_id))
            .where(where)).all()
        for provider, uuid, parent_uuid, root_uuid in rows:
            result[provider] = (uuid, parent_uuid, root_uuid)
    return result


def inventories_of(ctx, ids, by_root=False):
    """{provider: {class name: (capacity, used)}} over all inventories,
    for providers or trees chosen as in ``identities``."""
    classes = tables.resource_classes
    result = collections.defaultdict(dict)
    for where in _chosen(ids, by_root):
        rows = ctx.conn.execute(
            sa.select(_INV.c.resource_provider_id, classes.c.name,
                      _INV.c.total, _INV.c.reserved,
                      _INV.c.allocation_ratio, _used())
            .select_from(
                _INV.join(classes, classes.c.id == _INV.c.resource_class_id)
                .join(_RP, _RP.c.id == _INV.c.resource_provider_id))
            .where(where)).all()
        for provider, name, total, reserved, ratio, used in rows:
            result[provider][name] = (
                inventory_obj.capacity(total, reserved, ratio), int(used))
    return result


def trait_names_of(ctx, ids, by_root=False):
    """{provider: [trait names]}, chosen as in ``identities``."""
    traits = tables.traits
    result = collections.defaultdict(list)
    for where in _chosen(ids, by_root):
        rows = ctx.conn.execute(
            sa.select(_RP_TRAITS.c.resource_provider_id, traits.c.name)
            .select_from(
                _RP_TRAITS.join(traits, traits.c.id == _RP_TRAITS.c.trait_id)
                .join(_RP, _RP.c.id == _RP_TRAITS.c.resource_provider_id))
            .where(where)
            .order_by(traits.c.name)).all()
        for provider, name in rows:
            result[provider].append(name)
    return result
