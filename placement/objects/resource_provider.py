"""Resource providers: create, read, update (trees), delete, list.

Also home of the provider-generation compare-and-set and the row locks
every write that checks or bumps a generation takes first. Every write
here records the providers it changes in the change log
(``placement.db.changes``); a generation bump does so too.
"""

import dataclasses
import datetime
import operator
import typing

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import connections
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects.candidates import provider_index
from placement.objects import listed_rows
from placement.objects import provider_generation

_RP = tables.resource_providers
#: Most fitting provider ids the ``resources`` listing sends as an IN list.
_MAX_IDS_IN_QUERY = 500
_ROOT = _RP.alias('root_rp')
_PARENT = _RP.alias('parent_rp')

#: Passed as ``parent_uuid`` to ``update`` when the body had no parent.
UNCHANGED = object()


@dataclasses.dataclass
class ResourceProvider:
    id: int
    uuid: str
    name: str
    generation: int
    root_provider_uuid: str
    parent_provider_uuid: typing.Optional[str]
    root_id: int
    parent_id: typing.Optional[int]
    created_at: typing.Optional[datetime.datetime]
    updated_at: typing.Optional[datetime.datetime]

    @property
    def last_modified(self):
        return self.updated_at or self.created_at


def _select():
    return (sa.select(_RP.c.id, _RP.c.uuid, _RP.c.name, _RP.c.generation,
                      _ROOT.c.uuid.label('root_uuid'),
                      _PARENT.c.uuid.label('parent_uuid'),
                      _RP.c.root_provider_id, _RP.c.parent_provider_id,
                      _RP.c.created_at, _RP.c.updated_at)
            .select_from(
                _RP.outerjoin(_ROOT, _RP.c.root_provider_id == _ROOT.c.id)
                .outerjoin(_PARENT,
                           _RP.c.parent_provider_id == _PARENT.c.id)))


#: Built once: constructing a statement (and its cache key) costs more
#: than running it on a warm database.
_BY_UUID = _select().where(_RP.c.uuid == sa.bindparam('uuid'))
_BY_UUID_PREPARED = prepared.Prepared(_BY_UUID)


def _from_row(row):
    # Unpacked by position: listings build thousands of these, and named
    # access to a Row costs several times more.
    (provider_id, uuid, name, generation, root_uuid, parent_uuid, root_id,
     parent_id, created_at, updated_at) = row
    return ResourceProvider(provider_id, uuid, name, generation,
                            root_uuid or uuid, parent_uuid,
                            root_id or provider_id, parent_id, created_at,
                            updated_at)


@db_api.reader
def get_by_uuid(ctx, uuid):
    """The provider with exactly this uuid string, or NotFound."""
    row = None
    if db_api.storable(uuid):
        row = _BY_UUID_PREPARED.first(ctx.conn, uuid=uuid)
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    return _from_row(row)


# -- create ---------------------------------------------------------------

def _action_error(action, reason):
    return exception.ObjectActionError(action=action, reason=reason)


def _duplicate(ctx, uuid, name):
    """Describe which of uuid/name already exists (uuid first), or None."""
    if ctx.conn.execute(sa.select(_RP.c.id).where(_RP.c.uuid == uuid)
                        ).first() is not None:
        return 'uuid: %s' % uuid
    if ctx.conn.execute(sa.select(_RP.c.id).where(_RP.c.name == name)
                        ).first() is not None:
        return 'name: %s' % name
    return None


@db_api.writer
def create(ctx, uuid, name, parent_uuid=None):
    """Create a provider (a root, or a child of ``parent_uuid``)."""
    if not name:
        raise _action_error('create', 'name is required')
    parent = None
    if parent_uuid is not None:
        if parent_uuid == uuid:
            raise _action_error(
                'create', 'parent provider UUID cannot be same as UUID. '
                'Please set parent provider UUID to None if there is no '
                'parent.')
        parent = ctx.conn.execute(
            sa.select(_RP.c.id, _RP.c.root_provider_id)
            .where(_RP.c.uuid == parent_uuid)).first()
        if parent is None:
            raise _action_error('create',
                                'parent provider UUID does not exist.')
    duplicate = _duplicate(ctx, uuid, name)
    if duplicate:
        raise exception.DuplicateResourceProvider(duplicate=duplicate)
    now = db_api.utcnow()
    try:
        with ctx.conn.begin_nested():
            new_id = ctx.conn.execute(sa.insert(_RP).values(
                uuid=uuid, name=name, generation=0, created_at=now,
                parent_provider_id=parent.id if parent else None,
                root_provider_id=parent.root_provider_id if parent else None,
            )).inserted_primary_key[0]
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        raise exception.DuplicateResourceProvider(
            duplicate=_duplicate(ctx, uuid, name) or 'uuid: %s' % uuid)
    if parent is None:
        ctx.conn.execute(sa.update(_RP).where(_RP.c.id == new_id)
                         .values(root_provider_id=new_id))
    return get_by_uuid(ctx, uuid)


# -- update ---------------------------------------------------------------

def _subtree_ids(ctx, provider):
    """Ids of ``provider`` and all its descendants."""
    rows = ctx.conn.execute(
        sa.select(_RP.c.id, _RP.c.parent_provider_id)
        .where(_RP.c.root_provider_id == provider.root_id)).all()
    children = {}
    for rp_id, parent_id in rows:
        children.setdefault(parent_id, []).append(rp_id)
    found, todo = set(), [provider.id]
    while todo:
        rp_id = todo.pop()
        found.add(rp_id)
        todo.extend(children.get(rp_id, ()))
    return found


@db_api.writer
def update(ctx, provider, name, parent_uuid=UNCHANGED,
           allow_reparent=False):
    """Rename ``provider`` and optionally move it in the tree.

    ``parent_uuid`` None makes it a root; a uuid makes it that provider's
    child. Changing an existing parent, or removing it, needs
    ``allow_reparent`` (microversion 1.37). The provider's and its
    descendants' root follow the move. Generations are not changed.
    """
    values = {'name': name, 'updated_at': db_api.utcnow()}
    subtree_root = None
    if parent_uuid is not UNCHANGED:
        current = provider.parent_provider_uuid
        if parent_uuid is None:
            if current is not None:
                if not allow_reparent:
                    raise _action_error(
                        'update', 'un-parenting a provider is not currently '
                                  'allowed.')
                values['parent_provider_id'] = None
                subtree_root = provider.id
        elif parent_uuid != current:
            parent = ctx.conn.execute(
                sa.select(_RP.c.id, _RP.c.root_provider_id)
                .where(_RP.c.uuid == parent_uuid)).first()
            if parent is None:
                raise _action_error('create',
                                    'parent provider UUID does not exist.')
            if current is not None and not allow_reparent:
                raise _action_error(
                    'update', 're-parenting a provider is not currently '
                              'allowed.')
            if parent.id in _subtree_ids(ctx, provider):
                raise _action_error(
                    'update', 'creating loop in the provider tree is not '
                              'allowed.')
            values['parent_provider_id'] = parent.id
            subtree_root = parent.root_provider_id
    if name != provider.name and ctx.conn.execute(
            sa.select(_RP.c.id).where(_RP.c.name == name,
                                      _RP.c.id != provider.id)).first():
        raise exception.DuplicateResourceProvider(duplicate=name)
    if subtree_root is not None:
        # The whole subtree follows the move (root_provider_id).
        moved = _subtree_ids(ctx, provider)
        ctx.conn.execute(
            sa.update(_RP)
            .where(_RP.c.id.in_(moved))
            .values(root_provider_id=subtree_root))
    try:
        with ctx.conn.begin_nested():
            result = ctx.conn.execute(
                sa.update(_RP).where(_RP.c.id == provider.id).values(values))
    except sa_exc.IntegrityError as exc:
        if not failures.is_duplicate(exc):
            raise
        raise exception.DuplicateResourceProvider(duplicate=name)
    if result.rowcount != 1:
        raise exception.ResourceProviderNotFound(uuid=provider.uuid)
    return get_by_uuid(ctx, provider.uuid)


# -- delete ---------------------------------------------------------------

@db_api.writer
def destroy(ctx, uuid):
    """Delete a leaf provider without allocations, with its inventories,
    trait and aggregate associations, in one transaction."""
    provider = get_by_uuid(ctx, uuid)
    if not provider_generation.lock(ctx, [provider.id]):
        raise exception.ResourceProviderNotFound(uuid=uuid)
    if ctx.conn.execute(sa.select(_RP.c.id).where(
            _RP.c.parent_provider_id == provider.id).limit(1)).first():
        raise exception.CannotDeleteParentResourceProvider(uuid=uuid)
    allocations = tables.allocations
    if ctx.conn.execute(sa.select(allocations.c.id).where(
            allocations.c.resource_provider_id == provider.id).limit(1)
            ).first():
        raise exception.ResourceProviderInUse()
    for table in (tables.inventories, tables.resource_provider_traits,
                  tables.resource_provider_aggregates):
        ctx.conn.execute(sa.delete(table).where(
            table.c.resource_provider_id == provider.id))
    # A root references itself; clear that before deleting the row.
    ctx.conn.execute(sa.update(_RP).where(_RP.c.id == provider.id)
                     .values(root_provider_id=None))
    try:
        with ctx.conn.begin_nested():
            ctx.conn.execute(sa.delete(_RP).where(_RP.c.id == provider.id))
    except sa_exc.IntegrityError:
        # A child was added concurrently (its foreign key refers to us).
        raise exception.CannotDeleteParentResourceProvider(uuid=uuid)


# -- list -----------------------------------------------------------------

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
