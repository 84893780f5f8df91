"""Allocations: replacing consumers' allocation sets, reading, deleting.

A write replaces the whole allocation set of every consumer it names in
one transaction that locks the providers, checks every amount against
the inventories (capacity, min/max unit, step size), inserts the rows and
bumps the provider and consumer generations by compare-and-set. A lost
provider race re-runs the transaction; anything else rolls all of it
back.
"""

import collections
import contextlib
import dataclasses
import logging
import typing

import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import batch
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import capacity as capacity_rule
from placement.objects import consumer as consumer_obj
from placement.objects import provider_generation
from placement.objects import resource_class as rc_obj
from placement.observability import metrics

LOG = logging.getLogger(__name__)

_ALLOC = tables.allocations
_INV = tables.inventories
_RP = tables.resource_providers
_RC = tables.resource_classes
_CONSUMERS = tables.consumers


@dataclasses.dataclass
class ConsumerRequest:
    """One consumer's part of a write: ``consumer`` holds the keyword
    arguments of ``consumer.prepare``; ``allocations`` its new set,
    ``{provider uuid: {resource class: amount}}`` in request order."""
    consumer: dict
    allocations: dict


@dataclasses.dataclass
class ConsumerAllocations:
    """The new allocation set of one prepared consumer."""
    consumer: consumer_obj.Consumer
    allocations: dict


# -- writing --------------------------------------------------------------

def prepare(ctx, requests, final=False):
    """ConsumerAllocations for ``requests``: each consumer found or
    created, in the caller's transaction. Raises
    ConsumerGenerationMismatch. With ``final``, consumers created with
    allocations to write are created as the write leaves them
    (``consumer.prepare_all``, ``writing``)."""
    consumers = consumer_obj.prepare_all(
        ctx, [request.consumer for request in requests],
        writing=frozenset(request.consumer['uuid'] for request in requests
                          if final and request.allocations))
    return [ConsumerAllocations(consumer, request.allocations)
            for consumer, request in zip(consumers, requests)]


def known_providers(ctx, writes):
    """(``provider_ids`` of ``writes``, None), or (None,
    ResourceProviderNotFound for the first unknown provider).

    The error is returned rather than raised: the caller's transaction
    then commits the consumers it prepared, which upstream Placement keeps
    when a request names an unknown provider (see
    api-ref/behaviour-choices.rst, 'Orphan consumers').
    """
    try:
        return provider_ids(ctx, request_uuids(writes)), None
    except exception.ResourceProviderNotFound as exc:
        return None, exc


@db_api.reader
def provider_ids(ctx, uuids):
    """{uuid: id} for ``uuids``; ResourceProviderNotFound names the first
    unknown one (in the order given)."""
    uuids = list(dict.fromkeys(uuids))
    found = dict(batch.select_in(
        ctx.conn, sa.select(_RP.c.uuid, _RP.c.id), _RP.c.uuid,
        [u for u in uuids if db_api.storable(u)]))
    for uuid in uuids:
        if uuid not in found:
            raise exception.ResourceProviderNotFound(uuid=uuid)
    return found


def request_uuids(writes):
    """Provider uuids named by ``writes``, in request order."""
    return [uuid for write in writes for uuid in write.allocations]


def _request_classes(writes):
    return list(dict.fromkeys(
        rc for write in writes for resources in write.allocations.values()
        for rc in resources))


# Statements of every write are built once, with IN lists bound at
# execution: building a statement costs more than running it.

_CONSUMER_IDS = sa.bindparam('consumers', expanding=True)
_HELD = (_ALLOC.c.consumer_id, _ALLOC.c.resource_provider_id,
         _ALLOC.c.resource_class_id, _ALLOC.c.used)
_CURRENT = sa.select(*_HELD).where(_ALLOC.c.consumer_id.in_(_CONSUMER_IDS))
_DELETE = sa.delete(_ALLOC).where(_ALLOC.c.consumer_id.in_(_CONSUMER_IDS))
_INSERT = sa.insert(_ALLOC)


def _current_rows(ctx, consumer_uuids):
    """Existing allocations of the given consumers."""
    rows = []
    for chunk in batch.chunks(consumer_uuids):
        rows.extend(ctx.conn.execute(_CURRENT, {'consumers': chunk}).all())
    return rows


#: What the capacity check reads of an inventory, with the amount
#: already allocated from it.
_Inventory = collections.namedtuple('_Inventory', [
    'total', 'reserved', 'min_unit', 'max_unit', 'step_size',
    'allocation_ratio', 'allocated'])


def _inventories_statement(providers, classes):
    """The read of ``_inventories`` as ``prepared.run`` builds it for
    ``providers`` and ``classes`` ids: few, the statement is a prepared
    one (planning its subquery cost PostgreSQL more than running it)."""
    used = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
            .where(_ALLOC.c.resource_provider_id
                   == _INV.c.resource_provider_id,
                   _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
            .scalar_subquery())
    return (sa.select(_INV.c.resource_provider_id, _INV.c.resource_class_id,
                      *(_INV.c[field] for field in _Inventory._fields[:-1]),
                      used)
            .where(prepared.in_(_INV.c.resource_provider_id, 'providers',
                                providers),
                   prepared.in_(_INV.c.resource_class_id, 'classes',
                                classes)))


def _inventories(ctx, rp_ids, rc_ids):
    """({(provider id, class id): _Inventory}, {pair: amount allocated})
    of the given pairs that have an inventory, in one round trip: usage
    matters only where there is an inventory to check."""
    rows = prepared.run(ctx.conn, _inventories_statement,
                        {'providers': rp_ids, 'classes': rc_ids})
    inventories, used = {}, {}
    for rp, rc, *inventory in rows:
        inventory = _Inventory(*inventory)
        inventories[rp, rc] = inventory
        used[rp, rc] = int(inventory.allocated)
    return inventories, used


def _check_capacity(ctx, new_rows, rp_uuids, rc_names, replaced):
    """Raise InvalidAllocation unless every row of ``new_rows`` fits.

    ``new_rows`` are (provider id, class id, amount) in request order, not
    yet written; the old allocations of the consumers in the request are
    already deleted and were ``replaced`` ({(provider id, class id):
    amount}). Usage may stay above capacity as long as it does not grow.
    """
    rp_ids = sorted({rp for rp, _rc, _n in new_rows})
    rc_ids = sorted({rc for _rp, rc, _n in new_rows})
    inventories, others = _inventories(ctx, rp_ids, rc_ids)
    with_any = {rp for rp, _rc in inventories}
    lacking = [rp for rp in dict.fromkeys(rp for rp, _rc, _n in new_rows)
               if rp not in with_any]
    if lacking:
        raise exception.InvalidInventory(
            resource_class=', '.join(rc_names[rc] for rc in rc_ids),
            provider=', '.join(rp_uuids[rp] for rp in lacking))
    before = collections.Counter(others) + replaced
    requested = collections.Counter()
    for rp, rc, amount in new_rows:
        requested[rp, rc] += amount
    # The usage rule depends on the pair alone, the units rule on the
    # pair and the amount: each is decided once, and the rows are walked
    # again only to name the first refused one, as a per-row check would.
    missing, full = set(), set()
    for pair, amount in requested.items():
        inv = inventories.get(pair)
        if inv is None:
            missing.add(pair)
        elif not capacity_rule.usage_allowed(
                capacity_rule.capacity(inv.total, inv.reserved,
                                       inv.allocation_ratio),
                before.get(pair), others.get(pair, 0) + amount):
            full.add(pair)
    bad_units = {
        (rp, rc, amount) for rp, rc, amount in set(new_rows)
        if (rp, rc) not in missing and not capacity_rule.units_allowed(
            amount, *_units(inventories[rp, rc]))}
    if missing or full or bad_units:
        _raise_first_refusal(new_rows, rp_uuids, rc_names, missing,
                             bad_units, full)


def _units(inv):
    return inv.min_unit, inv.max_unit, inv.step_size


def _raise_first_refusal(new_rows, rp_uuids, rc_names, missing, bad_units,
                         full):
    """Raise the refusal of the first row, in request order, that has
    no inventory, breaks its units or overfills its pair."""
    for rp, rc, amount in new_rows:
        names = {'resource_class': rc_names[rc], 'provider': rp_uuids[rp]}
        if (rp, rc) in missing:
            raise exception.InvalidInventory(**names)
        if (rp, rc, amount) in bad_units:
            raise exception.InvalidAllocationConstraintsViolated(**names)
        if (rp, rc) in full:
            raise exception.InvalidAllocationCapacityExceeded(**names)


@db_api.writer
def replace(ctx, writes, rp_ids=None):
    """Replace the allocation sets of ``writes`` (ConsumerAllocations) in
    one transaction, as one request: capacity is checked for all of
    them together, and each provider's generation is bumped once.

    Consumers whose set is empty lose all their allocations and are then
    deleted; one that had none is left untouched. Raises
    ResourceClassNotFound, ResourceProviderNotFound, InvalidAllocation,
    ConsumerGenerationConflict or, when a provider generation moved,
    ResourceProviderConcurrentUpdateDetected. ``rp_ids`` are the
    ``provider_ids`` of the writes when the caller already has them;
    without them the providers are found and locked in one statement,
    and nothing is written before an unknown one is reported.
    """
    # The providers a consumer leaves matter only when its set is
    # emptied (they are locked and bumped then); otherwise the old rows
    # are read by the statement that deletes them, where the database
    # can return what it deleted.
    read_first = (any(not w.allocations for w in writes)
                  or not ctx.conn.dialect.delete_returning)
    held = collections.defaultdict(set)
    replaced = collections.Counter()
    if read_first:
        _count_held(_current_rows(ctx, [w.consumer.uuid for w in writes]),
                    held, replaced)
    touched = [w for w in writes if w.allocations or held[w.consumer.uuid]]
    if not touched:
        return
    emptied_held = set()
    for write in touched:
        if not write.allocations:
            emptied_held |= held[write.consumer.uuid]
    # Every provider locked is bumped: the locking statement bumps them,
    # and no compare-and-set is needed at the end.
    if rp_ids is None:
        locked = provider_generation.lock_and_bump(ctx, request_uuids(writes),
                                      emptied_held)
        rp_ids = {uuid: rp for rp, (uuid, _generation) in locked.items()}
    else:
        provider_generation.lock_and_bump(
            ctx, (), set(rp_ids.values()) | emptied_held)
    rc_ids = rc_obj.ids_by_name(ctx, _request_classes(writes))
    consumer_obj.bump_all(ctx, [write.consumer for write in touched])
    deleted = _delete_rows(ctx, [w.consumer.uuid for w in touched],
                           returning=not read_first)
    if not read_first:
        _count_held(deleted, held, replaced)
    new_rows = [(rp_ids[uuid], rc_ids[rc], amount, write.consumer.uuid)
                for write in touched
                for uuid, resources in write.allocations.items()
                for rc, amount in resources.items()]
    if new_rows:
        _check_capacity(
            ctx, [row[:3] for row in new_rows],
            {rp: uuid for uuid, rp in rp_ids.items()},
            {rc: name for name, rc in rc_ids.items()}, replaced)
        now = db_api.utcnow()
        _insert_rows(ctx, [
            {'resource_provider_id': rp, 'resource_class_id': rc,
             'used': amount, 'consumer_id': consumer_uuid,
             'created_at': now}
            for rp, rc, amount, consumer_uuid in new_rows])
    emptied = [w.consumer.id for w in touched if not w.allocations]
    for chunk in batch.chunks(emptied):
        ctx.conn.execute(sa.delete(_CONSUMERS).where(
            _CONSUMERS.c.id.in_(chunk)))


#: The columns of a new allocation row.
_NEW_COLUMNS = ('resource_provider_id', 'resource_class_id', 'used',
                'consumer_id', 'created_at')
#: Most allocation rows inserted by a prepared statement: three
#: providers with three classes each (a cloud's daily writes).
_PREPARED_ROWS = prepared.UP_TO * prepared.UP_TO


def _insert_rows(ctx, rows):
    """Insert the allocation ``rows`` (dicts of ``_NEW_COLUMNS``): up to
    ``_PREPARED_ROWS`` where INSERT returns rows, by a prepared statement
    per number of rows (SQLAlchemy's executemany cost more than the
    driver's execute, and PostgreSQL planned it at every write)."""
    if ctx.conn.dialect.insert_returning:
        prepared.run(ctx.conn, _inserting, rows=rows, up_to=_PREPARED_ROWS)
    else:
        ctx.conn.execute(_INSERT, rows)


def _inserting(rows):
    """The INSERT of allocation rows as ``prepared.run`` builds it for
    ``rows`` rows, returning their ids (a prepared statement's rows are
    what it returns)."""
    if rows is None:
        return _INSERT
    return (sa.insert(_ALLOC)
            .values(prepared.rows_of(_ALLOC, _NEW_COLUMNS, rows))
            .returning(_ALLOC.c.id))


def _count_held(rows, held, replaced):
    """Note (consumer, provider, class, used) ``rows`` in ``held``
    ({consumer: providers}) and ``replaced`` ({(provider, class): used})."""
    for consumer_uuid, rp, rc, used in rows:
        held[consumer_uuid].add(rp)
        replaced[rp, rc] += used


def _delete_rows(ctx, consumer_uuids, returning):
    """Delete the allocations of ``consumer_uuids``; with ``returning``,
    return them as ``_current_rows`` does."""
    if not returning:
        for chunk in batch.chunks(consumer_uuids):
            ctx.conn.execute(_DELETE, {'consumers': chunk})
        return []
    rows = []
    for chunk in batch.chunks(consumer_uuids):
        rows.extend(prepared.run(ctx.conn, _deleting, {'consumers': chunk}))
    return rows


def _deleting(consumers):
    """The DELETE of ``_delete_rows`` returning what it deleted, as
    ``prepared.run`` builds it for ``consumers`` uuids."""
    return sa.delete(_ALLOC).where(prepared.in_(
        _ALLOC.c.consumer_id, 'consumers', consumers)).returning(*_HELD)


@db_api.writer
def _write_once(ctx, requests):
    # A new consumer is created at the generation the write leaves it
    # at, which saves its compare-and-set.
    writes = prepare(ctx, requests, final=True)
    try:
        replace(ctx, writes)
    except exception.ResourceProviderNotFound as missing:
        # Raised before anything was written: the prepared consumers are
        # committed (see known_providers), as they were before the write.
        consumer_obj.unfinal(ctx, [write.consumer for write in writes])
        return missing
    return None


def write(ctx, requests, retries):
    """Prepare the consumers of ``requests`` (ConsumerRequest) and replace
    their allocation sets, all in one transaction, so a failure or a
    crash leaves no consumer record behind; re-run up to ``retries``
    times when a provider generation race is lost.

    Raises what ``prepare`` and ``replace`` raise, and
    ResourceProviderNotFound after committing the prepared consumers.
    """
    with counted_write():
        _write_retrying(ctx, requests, retries)


@contextlib.contextmanager
def counted_write(refused=(exception.InvalidAllocation,)):
    """Count the allocation write done in the block by its outcome
    (``metrics.OUTCOMES``); ``refused``: the errors that count as
    ``capacity_refused``."""
    try:
        yield
    except refused:
        metrics.allocation_write('capacity_refused')
        raise
    except (exception.ConcurrentUpdateDetected,
            exception.ResourceProviderGenerationMismatch):
        metrics.allocation_write('provider_generation_conflict')
        raise
    except (exception.ConsumerGenerationConflict,
            exception.ConsumerGenerationMismatch):
        metrics.allocation_write('consumer_generation_conflict')
        raise
    metrics.allocation_write('ok')


def _write_retrying(ctx, requests, retries):
    for attempt in range(retries + 1):
        try:
            missing = _write_once(ctx, requests)
        except exception.ResourceProviderConcurrentUpdateDetected:
            if attempt == retries:
                raise
            metrics.retry('generation_race')
            LOG.debug('Provider generation race, retry %d of %d',
                      attempt + 1, retries)
            continue
        if missing is not None:
            raise missing
        return


# -- reading and deleting -------------------------------------------------

@dataclasses.dataclass
class ConsumerView:
    """A consumer's allocations with what GET /allocations/{c} shows:
    ``allocations`` is {provider uuid: {"generation", "resources"}}."""
    allocations: dict
    project_id: typing.Optional[str] = None
    user_id: typing.Optional[str] = None
    generation: typing.Optional[int] = None
    consumer_type: typing.Optional[str] = None
    last_modified: typing.Any = None


def _of_consumer():
    projects, users = tables.projects, tables.users
    types = tables.consumer_types
    return (
        sa.select(_RP.c.uuid, _RP.c.generation, _RC.c.name, _ALLOC.c.used,
                  _ALLOC.c.created_at, projects.c.external_id,
                  users.c.external_id, _CONSUMERS.c.generation, types.c.name)
        .select_from(
            _ALLOC.join(_CONSUMERS, _CONSUMERS.c.uuid == _ALLOC.c.consumer_id)
            .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
            .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
            .join(projects, projects.c.id == _CONSUMERS.c.project_id)
            .join(users, users.c.id == _CONSUMERS.c.user_id)
            .outerjoin(types, types.c.id == _CONSUMERS.c.consumer_type_id))
        .where(_ALLOC.c.consumer_id == sa.bindparam('consumer'))
        .order_by(_ALLOC.c.id))


#: Prepared: on PostgreSQL, planning this six-table join costs the server
#: far more than running it does.
_OF_CONSUMER = prepared.Prepared(_of_consumer())


@db_api.reader
def get_by_consumer(ctx, consumer_uuid):
    """The consumer's allocations (matched verbatim), in one query.

    Allocation rows without a consumer record are ignored.
    """
    view = ConsumerView(allocations={})
    if not db_api.storable(consumer_uuid):
        return view
    # Every row carries the same consumer columns.
    for (rp_uuid, rp_generation, rc, used, created, view.project_id,
         view.user_id, view.generation, view.consumer_type) in (
            _OF_CONSUMER.rows(ctx.conn, consumer=consumer_uuid)):
        entry = view.allocations.setdefault(
            rp_uuid, {'generation': rp_generation, 'resources': {}})
        entry['resources'][rc] = used
        # A row written by hand may lack its creation time.
        if created is not None and (view.last_modified is None
                                    or created > view.last_modified):
            view.last_modified = created
    return view


@db_api.reader
def get_by_provider(ctx, provider):
    """({consumer uuid: {"resources", "consumer_generation"}}, newest
    creation time or None) for the allocations on ``provider``."""
    rows = ctx.conn.execute(
        sa.select(_ALLOC.c.consumer_id, _RC.c.name, _ALLOC.c.used,
                  _ALLOC.c.created_at, _CONSUMERS.c.generation)
        .select_from(
            _ALLOC.join(_CONSUMERS, _CONSUMERS.c.uuid == _ALLOC.c.consumer_id)
            .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id))
        .where(_ALLOC.c.resource_provider_id == provider.id)
        .order_by(_ALLOC.c.id)).all()
    consumers = {}
    for consumer_uuid, rc, used, _created, generation in rows:
        entry = consumers.setdefault(consumer_uuid, {
            'resources': {}, 'consumer_generation': generation})
        entry['resources'][rc] = used
    return consumers, max((row.created_at for row in rows), default=None)


@db_api.writer
def delete_by_consumer(ctx, consumer_uuid):
    """Delete all of a consumer's allocations and its record, without
    touching any generation. ConsumerAllocationsNotFound if it has none.
    """
    # One statement, no read before it: the triggers log the providers
    # of the rows it deletes, and of two concurrent deletes the second
    # waits for the first's row locks and then deletes nothing.
    if not (db_api.storable(consumer_uuid)
            and _delete(ctx, _OF_CONSUMER_DELETED, consumer=consumer_uuid)):
        raise exception.ConsumerAllocationsNotFound(consumer=consumer_uuid)
    _delete(ctx, _CONSUMER_DELETED, consumer=consumer_uuid)


class _Deleting:
    """A DELETE, and where the database returns deleted rows the same
    DELETE returning their ids as a ``prepared.Prepared``: run on the
    driver's cursor and, on PostgreSQL, planned once per connection."""

    def __init__(self, stmt, key):
        self.stmt = stmt
        self.returning = prepared.Prepared(stmt.returning(key))


def _delete(ctx, deleting, **values):
    """Run ``deleting`` (a ``_Deleting``); the number of rows deleted."""
    if ctx.conn.dialect.delete_returning:
        return len(deleting.returning.rows(ctx.conn, **values))
    return ctx.conn.execute(deleting.stmt, values).rowcount


_OF_CONSUMER_DELETED = _Deleting(
    sa.delete(_ALLOC).where(_ALLOC.c.consumer_id == sa.bindparam('consumer')),
    _ALLOC.c.id)
_CONSUMER_DELETED = _Deleting(
    sa.delete(_CONSUMERS).where(
        _CONSUMERS.c.uuid == sa.bindparam('consumer')),
    _CONSUMERS.c.id)
