"""Resource providers: create, read, update (trees), delete, list.

Also home of the provider-generation compare-and-set and the row locks
every write that checks or bumps a generation takes first. Every write
here records the providers it changes in the change log
(``placement.db.changes``); a generation bump does so too.
"""

import dataclasses
import datetime
import typing

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from placement.db import api as db_api
from placement.db import failures
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import provider_generation

_RP = tables.resource_providers
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
