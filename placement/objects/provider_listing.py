"""Provider listings: the providers matching a listing's filters,
rendered a chunk at a time (``GET /resource_providers``).

Filters the provider index answers (``resources``, ``required``,
``member_of``) are applied in memory and the rows come from
``listed_rows``; ``name``, ``uuid`` and ``in_tree`` are read from the
database as the rows are rendered.
"""

import operator

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import connections
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects.candidates import provider_index
from placement.objects import listed_rows

_RP = tables.resource_providers

#: Most fitting provider ids the ``resources`` listing sends as an IN list.
_MAX_IDS_IN_QUERY = 500
def _matching(ctx, required, member_of, resources, reads=None):
    """Ids of the providers that carry ``required``, are in ``member_of``
    and have room for ``resources`` themselves, asked of the provider
    index (the candidates engine's copy of traits, aggregates,
    inventories and usage, brought up to date in this transaction):
    no statement is built per request, and room follows the capacity
    rule the candidates follow. None when no filter is given.

    Lookups run in upstream Placement's order: TraitNotFound for the first
    unknown required name, then a ``member_of`` term of unknown
    aggregates matches nothing before classes are looked up, then
    ResourceClassNotFound. ``reads``: see ``LogFollower.refresh``."""
    if not (required or member_of or resources):
        return None
    index = provider_index.of(ctx.db)
    with index.lock:
        index.refresh(ctx.conn, reads=reads)
        among = None
        if required:
            among = _carrying(ctx, index, required)
        if member_of:
            among = _members(ctx, index, member_of, among)
            if among is None:
                return frozenset()
        if resources:
            among = _with_room_for(ctx, index, resources, among)
        return frozenset(among)


_NONE = frozenset()


def _every(index, terms, forbidden, holders, among=None):
    """Providers (of ``among``, a set, when given) holding one of each
    term's ids and none of ``forbidden``, from ``holders`` ({id:
    providers}).

    Narrowed from the smaller side: an aggregate of a large cloud holds
    thousands of hosts, and the sharing providers a compute node asks
    for (``member_of`` and a trait) are a few of them, so copying the
    aggregate's members first would cost a copy per request that grows
    with the cloud."""
    found = among
    for term in terms:
        groups = [holders.get(i, _NONE) for i in term]
        if found is None:
            found = set().union(*groups)
        elif len(groups) == 1:
            found = found & groups[0]
        else:
            found = {p for p in found if any(p in g for g in groups)}
    if found is None:
        found = set(index.uuid)
    elif found is among:
        found = set(among)  # the caller's set stays as it was
    found.difference_update(*(holders.get(i, ()) for i in forbidden))
    return found


def _carrying(ctx, index, required):
    names = list(getattr(required, 'names', ()) or sorted(
        set().union(*required.terms) | set(required.forbidden)))
    found = index.trait_ids(ctx.conn, [name for name in names
                                       if db_api.storable(name)])
    for name in names:
        if name not in found:
            raise exception.TraitNotFound(names=name)
    return _every(index, [{found[name] for name in term}
                          for term in required.terms],
                  {found[name] for name in required.forbidden},
                  index.with_trait)


def _members(ctx, index, member_of, among=None):
    """Those of ``among`` (None: every provider) in ``member_of``; None
    when some term names only unknown aggregates."""
    found = index.aggregate_ids(
        ctx.conn, sorted(set().union(*member_of.terms, member_of.forbidden)))
    terms = [{found[uuid] for uuid in term if uuid in found}
             for term in member_of.terms]
    if not all(terms):
        return None
    return _every(index, terms, {found[uuid] for uuid in member_of.forbidden
                                 if uuid in found}, index.in_aggregate,
                  among)


def _with_room_for(ctx, index, resources, among):
    ids = index.class_ids(ctx.conn, [name for name in resources
                                     if db_api.storable(name)])
    for name in resources:
        if name not in ids:
            raise exception.ResourceClassNotFound(name=name)
    amounts = [(ids[name], amount) for name, amount in resources.items()]
    if among is None:
        among = min((index.with_class.get(rc, frozenset())
                     for rc, _ in amounts), key=len)
    return index.fitting(among, amounts)


#: Rows a listing hands out per chunk: large enough that per-chunk work
#: is negligible, small enough that a chunk's objects stay few.
LISTING_CHUNK = 1000

_LISTED = listed_rows.LISTED
#: A listed row by name (the in_tree statement gives plain tuples).
ListedProvider = listed_rows.ListedProvider


#: A tree by the uuid of any of its members, in one prepared statement:
#: the listing a compute node's periodic refresh sends (``?in_tree=``
#: alone).
_MEMBER = _RP.alias('member')
_IN_TREE = prepared.Prepared(
    _LISTED.where(_RP.c.root_provider_id == sa.select(
        _MEMBER.c.root_provider_id)
        .where(_MEMBER.c.uuid == sa.bindparam('in_tree'))
        .scalar_subquery())
    .order_by(_RP.c.id))

_CHANGED_OF = operator.itemgetter(6)


def _to_datetime(conn, value):
    """A ``changed`` value as the DateTime column would have read it."""
    if not isinstance(value, str):
        return value
    dialect = conn.dialect
    key = (type(dialect), dialect.server_version_info)
    process = _DATETIME_PROCESSORS.get(key)
    if process is None:
        # Found once per dialect: finding it costs a noticeable share
        # of a whole ``?in_tree=`` listing.
        process = _DATETIME_PROCESSORS[key] = (
            sa.DateTime().dialect_impl(dialect).result_processor(
                dialect, None) or (lambda text: text))
    return process(value)


_DATETIME_PROCESSORS = {}


@db_api.reader
def render_providers(ctx, render, name=None, uuid=None, in_tree=None,
                     member_of=None, required=None, resources=None,
                     changed=False):
    """``render`` applied to the providers matching every filter, in
    creation order, a chunk of at most ``LISTING_CHUNK`` rows at a time:
    ``(results, newest)``.

    Rows are ``(id, uuid, name, generation, parent_uuid, root_uuid,
    changed)`` (also by those names). Without ``name``, ``uuid`` and
    ``in_tree``, they come from the rows this process keeps
    (``listed_rows``) for the providers the index finds
    (``_matching``); otherwise they are read from the database as they
    are rendered. ``newest`` is the latest updated_at (else
    created_at) of the listed providers when ``changed`` is asked for,
    else None (also when nothing is listed).

    ``member_of`` and ``required`` have ``terms`` (a list of sets, ANDed,
    each matched by having any one member) and ``forbidden`` (a set the
    provider must have none of): aggregate uuids and trait names
    respectively (see ``placement.handlers.params``). ``resources`` maps
    class names to amounts the provider must have room for itself. All of
    it is about the provider itself, never its tree.

    Raises TraitNotFound or ResourceClassNotFound for unknown names. The
    order of the lookups follows upstream Placement: an unknown ``in_tree``
    provider yields nothing before traits are looked up, a ``member_of``
    term of unknown aggregates yields nothing before classes are.
    """
    if name is None and uuid is None and in_tree is None:
        # The index and the kept rows follow the change log: one read of
        # it serves both when they are at the same place in it.
        reads = {}
        return _rendered(ctx, render, changed, None, _kept_rows(
            ctx, _matching(ctx, required, member_of, resources, reads),
            reads))
    if in_tree is not None and not (name is not None or uuid is not None
                                    or required or member_of or resources):
        # A tree is small: read whole, handed out in chunks all the same.
        return _rendered(ctx, render, changed, None, _chunked(
            _IN_TREE.rows(ctx.conn, in_tree=in_tree)))
    stmt = _LISTED.order_by(_RP.c.id)
    if name is not None:
        stmt = stmt.where(_RP.c.name == name if db_api.storable(name)
                          else sa.false())
    if uuid is not None:
        stmt = stmt.where(_RP.c.uuid == uuid)
    if in_tree is not None:
        tree_root = ctx.conn.execute(
            sa.select(_RP.c.root_provider_id)
            .where(_RP.c.uuid == in_tree)).scalar()
        if tree_root is None:
            return [], None
        stmt = stmt.where(_RP.c.root_provider_id == tree_root)
    fitting = _matching(ctx, required, member_of, resources)
    if fitting is not None and len(fitting) <= _MAX_IDS_IN_QUERY:
        stmt = stmt.where(_RP.c.id.in_(sorted(fitting)))
        fitting = None
    # Else filtered here: a longer IN list is slower than reading the
    # rows, and beyond the bound parameters some databases accept.
    # Streamed (a server-side cursor where the driver has one and the
    # reader runs in a transaction): rows are fetched a chunk at a time.
    rows = ctx.conn.execute(
        stmt, execution_options=connections.streamed(ctx.conn, LISTING_CHUNK))
    return _rendered(ctx, render, changed, fitting,
                     rows.partitions(LISTING_CHUNK))


def _kept_rows(ctx, fitting, reads=None):
    """Chunks of the listed rows of every provider, or of those whose ids
    are in ``fitting``, from the rows this process keeps
    (``listed_rows``), brought up to date in this transaction."""
    cache = listed_rows.of(ctx.db)
    with cache.lock:
        cache.refresh(ctx.conn, reads=reads, wanted=fitting)
        rows = cache.rows
        if fitting is None:
            rows = list(rows.values())
        else:
            rows = [rows[provider] for provider in sorted(fitting)
                    if provider in rows]
    return _chunked(rows)


def _chunked(rows):
    """``rows`` (a list) in chunks of ``LISTING_CHUNK``, as a streamed
    listing hands them out."""
    return [rows[start:start + LISTING_CHUNK]
            for start in range(0, len(rows), LISTING_CHUNK)]


def _rendered(ctx, render, changed, fitting, chunks):
    """``render_providers``' answer from its ``chunks`` of rows, keeping
    only providers in ``fitting`` unless it is None."""
    results, newest = [], None
    for chunk in chunks:
        if fitting is not None:
            chunk = [row for row in chunk if row[0] in fitting]
            if not chunk:
                continue
        if changed:
            latest = max(filter(None, map(_CHANGED_OF, chunk)),
                         default=None)
            if latest is not None and (newest is None or latest > newest):
                newest = latest
        results.append(render(chunk))
    return results, _to_datetime(ctx.conn, newest)


def list_providers(ctx, **filters):
    """The rows ``render_providers`` reads, as one list (for tools and
    tests: the API renders them chunk by chunk)."""
    chunks, _newest = render_providers(ctx, list, **filters)
    return [ListedProvider(*row) for chunk in chunks for row in chunk]
