"""Object-layer tests for consumers and allocation writes: atomicity,
the provider-race retry and consumer generation races."""

import uuid

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import prepared
from placement.db import tables
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.objects import inventory as inv_obj
from placement.objects import provider_generation
from placement.objects import reshaper as reshaper_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import usage as usage_obj
from placement.tests import fixtures


@pytest.fixture
def provider(ctx):
    rp = rp_obj.create(ctx, str(uuid.uuid4()), 'compute')
    inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 2}})
    return rp_obj.get_by_uuid(ctx, rp.uuid)


def _request(consumer, allocations, **consumer_args):
    return alloc_obj.ConsumerRequest(
        dict(uuid=consumer, project='proj', user='user', **consumer_args),
        allocations)


def _write(ctx, provider, amounts, retries=0):
    """Write {consumer uuid: VCPU amount} (0: empty set) as one request."""
    alloc_obj.write(ctx, [
        _request(consumer, {provider.uuid: {'VCPU': amount}} if amount else {})
        for consumer, amount in amounts.items()], retries)


def _exists(ctx, consumer):
    """Whether a consumer record exists."""
    with ctx.db.transaction(write=False) as conn:
        return conn.execute(sa.select(tables.consumers.c.id).where(
            tables.consumers.c.uuid == consumer)).first() is not None


def test_failure_in_last_consumer_writes_nothing(ctx, provider):
    first, second, last = (str(uuid.uuid4()) for _ in range(3))
    with pytest.raises(exception.InvalidAllocationCapacityExceeded):
        _write(ctx, provider, {first: 1, second: 1, last: 1})
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 1
    assert not any(_exists(ctx, c) for c in (first, second, last))


def test_unknown_class_in_last_consumer_writes_nothing(ctx, provider):
    first, last = str(uuid.uuid4()), str(uuid.uuid4())
    with pytest.raises(exception.ResourceClassNotFound):
        alloc_obj.write(ctx, [
            _request(first, {provider.uuid: {'VCPU': 1}}),
            _request(last, {provider.uuid: {'CUSTOM_NOPE': 1}})], 0)
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    assert not any(_exists(ctx, c) for c in (first, last))


def _generation(ctx, consumer):
    with ctx.db.transaction(write=False) as conn:
        return conn.execute(sa.select(tables.consumers.c.generation).where(
            tables.consumers.c.uuid == consumer)).scalar_one()


def test_unknown_provider_keeps_prepared_consumers(ctx, provider):
    """See api-ref/behaviour-choices.rst, 'Orphan consumers': kept at
    generation 0, though a new consumer with allocations to write is
    created at generation 1."""
    consumer = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderNotFound):
        alloc_obj.write(ctx, [_request(consumer, {
            str(uuid.uuid4()): {'VCPU': 1}})], 0)
    assert _exists(ctx, consumer)
    assert _generation(ctx, consumer) == 0


def test_a_new_consumer_is_created_as_written(ctx, provider):
    """No compare-and-set of a consumer this write created: it is
    created at generation 1."""
    consumer = str(uuid.uuid4())
    sent = fixtures.statements_sent(
        ctx, _write, ctx, provider, {consumer: 1}, prepared_too=True)
    assert not [s for s in sent if s.startswith('UPDATE consumers')], sent
    assert _generation(ctx, consumer) == 1
    view = alloc_obj.get_by_consumer(ctx, consumer)
    assert (view.generation, view.project_id, view.user_id) == (
        1, 'proj', 'user')
    # An existing consumer is still compared and set.
    sent = fixtures.statements_sent(ctx, alloc_obj.write, ctx, [_request(
        consumer, {provider.uuid: {'VCPU': 2}}, generation=1)], 0,
        prepared_too=True)
    assert len([s for s in sent if s.startswith('UPDATE consumers')]) == 1
    assert _generation(ctx, consumer) == 2


def test_generation_mismatch_prepares_nothing(ctx, provider):
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    with pytest.raises(exception.ConsumerGenerationMismatch):
        alloc_obj.write(ctx, [
            _request(first, {provider.uuid: {'VCPU': 1}}, generation=None),
            _request(second, {provider.uuid: {'VCPU': 1}}, generation=3)],
            0)
    assert not _exists(ctx, first)


def _losing_races(monkeypatch, losses):
    """Make the first ``losses`` writes find a provider changed under
    them (deleted while the write waited for its lock)."""
    calls = []
    lock_and_bump = provider_generation.lock_and_bump

    def losing(*args, **kwargs):
        calls.append(args)
        if len(calls) <= losses:
            raise exception.ResourceProviderConcurrentUpdateDetected()
        return lock_and_bump(*args, **kwargs)
    monkeypatch.setattr(provider_generation, 'lock_and_bump', losing)
    return calls


def test_provider_race_is_retried(ctx, provider, monkeypatch):
    calls = _losing_races(monkeypatch, 2)
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2}, retries=2)
    assert len(calls) == 3
    assert inv_obj.usages(ctx, provider) == {'VCPU': 2}
    view = alloc_obj.get_by_consumer(ctx, consumer)
    assert view.generation == 1
    assert view.allocations[provider.uuid]['generation'] == 2


def test_provider_race_gives_up_after_the_retries(ctx, provider,
                                                  monkeypatch):
    calls = _losing_races(monkeypatch, 3)
    consumer = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderConcurrentUpdateDetected):
        _write(ctx, provider, {consumer: 1}, retries=2)
    assert len(calls) == 3
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}
    monkeypatch.undo()
    assert not _exists(ctx, consumer)


@pytest.mark.parametrize('count', [1, prepared.UP_TO + 1])
def test_consumer_changed_since_prepared_is_refused(ctx, provider, count):
    """The consumer generation is compared-and-set: a write prepared
    before another one landed loses (on PostgreSQL the two run side by
    side between the prepare and the update), whether the consumers are
    few (a prepared statement) or more."""
    inv_obj.replace_all(ctx, provider, {'VCPU': {'total': count}})
    consumers = [str(uuid.uuid4()) for _ in range(count)]
    _write(ctx, provider, dict.fromkeys(consumers, 1))
    stale = [consumer_obj.prepare(ctx, consumer, 'proj', 'user')
             for consumer in consumers]
    _write(ctx, provider, {consumers[-1]: 1})
    with pytest.raises(exception.ConsumerGenerationConflict):
        alloc_obj.replace(ctx, [alloc_obj.ConsumerAllocations(
            consumer, {provider.uuid: {'VCPU': 1}}) for consumer in stale])
    assert inv_obj.usages(ctx, provider) == {'VCPU': count}


def test_emptied_consumer_is_deleted_and_providers_bumped(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2})
    _write(ctx, provider, {consumer: 0})
    assert not _exists(ctx, consumer)
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == 3


def test_over_capacity_may_stay_but_not_grow(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 2})
    inv_obj.update(ctx, provider, 'VCPU', {'total': 1}, 2, min_capacity=1)
    _write(ctx, provider, {consumer: 2})
    with pytest.raises(exception.InvalidAllocationCapacityExceeded):
        _write(ctx, provider, {str(uuid.uuid4()): 1})


@pytest.mark.parametrize('reverse', [False, True])
def test_first_refused_row_in_request_order_is_reported(ctx, provider,
                                                        reverse):
    """Refusals are decided per pair but reported for the first row, in
    request order, that is refused, with that row's reason."""
    stepped = rp_obj.create(ctx, str(uuid.uuid4()), 'stepped')
    inv_obj.replace_all(ctx, stepped, {'VCPU': {'total': 4,
                                                'step_size': 2}})
    rows = [
        # One VCPU over the default provider's two, split over rows.
        (exception.InvalidAllocationCapacityExceeded, provider.uuid,
         [_request(str(uuid.uuid4()), {provider.uuid: {'VCPU': 2}}),
          _request(str(uuid.uuid4()), {provider.uuid: {'VCPU': 1}})]),
        # Not a multiple of the step, though within capacity.
        (exception.InvalidAllocationConstraintsViolated, stepped.uuid,
         [_request(str(uuid.uuid4()), {stepped.uuid: {'VCPU': 1}})]),
        # No MEMORY_MB inventory there.
        (exception.InvalidInventory, stepped.uuid,
         [_request(str(uuid.uuid4()), {stepped.uuid: {'MEMORY_MB': 1}})]),
    ]
    if reverse:
        rows.reverse()
    requests = [request for _exc, _rp, group in rows for request in group]
    with pytest.raises(rows[0][0]) as caught:
        alloc_obj.write(ctx, requests, 0)
    assert type(caught.value) is rows[0][0]
    assert rows[0][1] in str(caught.value)


def test_usages_by_type(ctx, provider):
    alloc_obj.write(ctx, [
        _request(str(uuid.uuid4()), {provider.uuid: {'VCPU': 1}},
                 consumer_type='INSTANCE'),
        alloc_obj.ConsumerRequest(
            dict(uuid=str(uuid.uuid4()), project='proj', user='other'),
            {provider.uuid: {'VCPU': 1}}),
    ], 0)
    assert usage_obj.totals(ctx, 'proj') == {'VCPU': 2}
    assert usage_obj.totals(ctx, 'proj', 'other') == {'VCPU': 1}
    assert usage_obj.by_consumer_type(ctx, 'proj') == {
        'INSTANCE': {'VCPU': 1, 'consumer_count': 1},
        'unknown': {'VCPU': 1, 'consumer_count': 1}}
    assert usage_obj.by_consumer_type(ctx, 'proj', consumer_type='all') == {
        'all': {'VCPU': 2, 'consumer_count': 2}}
    assert usage_obj.by_consumer_type(ctx, 'nobody') == {}


def test_reshape_checks_emptied_provider_generation_in_transaction(
        ctx, provider):
    """A provider given empty inventories must still be generation-checked
    under the lock, or a write landing between the handler's check and the
    transaction would be silently overwritten."""
    stale = provider.generation
    inv_obj.replace_all(ctx, provider, {'VCPU': {'total': 4}})
    with pytest.raises(exception.ConcurrentUpdateDetected):
        reshaper_obj.reshape(ctx, [(provider, {}, stale)], [], 0)
    assert inv_obj.get_all(ctx, provider)


def test_providers_are_looked_up_once_per_write(ctx, provider):
    """The unknown-provider check, the lock and the generations the write
    bumps share one read of the providers."""
    sent = fixtures.statements_sent(
        ctx, _write, ctx, provider, {str(uuid.uuid4()): 1}, prepared_too=True)
    lookups = [s for s in sent if s.startswith(('SELECT ', 'UPDATE '))
               and ' FROM resource_providers ' in s]
    assert len(lookups) == 1, sent


def test_the_lock_bumps_the_generations(ctx, provider):
    """The locking statement bumps the providers it locks: no
    compare-and-set after it. Where UPDATE cannot return rows (MariaDB)
    the locking read comes before it."""
    sent = fixtures.statements_sent(
        ctx, _write, ctx, provider, {str(uuid.uuid4()): 1}, prepared_too=True)
    bumps = [s for s in sent if s.startswith('UPDATE resource_providers')]
    assert len(bumps) == 1, sent
    reads = [s for s in sent if s.startswith('SELECT ')
             and 'FROM resource_providers ' in s]
    if ctx.db.engine.dialect.update_returning:
        # SQLite's writer already holds the database's write lock.
        if ctx.db.engine.dialect.name != 'sqlite':
            assert ' FOR UPDATE' in bumps[0], bumps
        assert not reads, sent
    else:
        assert len(reads) == 1 and ' FOR UPDATE' in reads[0], sent
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == (
        provider.generation + 1)


@pytest.mark.parametrize('count', [1, 3, 4, 7])
def test_the_bumping_lock_of_many_providers(ctx, count):
    """Up to ``prepared.UP_TO`` providers the bumping lock is a
    prepared statement, above it one with an expanding list: both lock
    and bump exactly the providers named, and check they all exist."""
    providers = []
    for index in range(count):
        rp = rp_obj.create(ctx, str(uuid.uuid4()), 'node-%d' % index)
        inv_obj.replace_all(ctx, rp, {'VCPU': {'total': 2}})
        providers.append(rp_obj.get_by_uuid(ctx, rp.uuid))
    bystander = rp_obj.create(ctx, str(uuid.uuid4()), 'bystander')
    with pytest.raises(exception.ResourceProviderNotFound):
        alloc_obj.write(ctx, [_request(str(uuid.uuid4()), dict(
            {rp.uuid: {'VCPU': 1} for rp in providers},
            **{str(uuid.uuid4()): {'VCPU': 1}}))], 0)
    assert [rp_obj.get_by_uuid(ctx, rp.uuid).generation
            for rp in providers] == [rp.generation for rp in providers]
    alloc_obj.write(ctx, [_request(str(uuid.uuid4()), {
        rp.uuid: {'VCPU': 1} for rp in providers})], 0)
    assert [rp_obj.get_by_uuid(ctx, rp.uuid).generation
            for rp in providers] == [rp.generation + 1 for rp in providers]
    assert rp_obj.get_by_uuid(ctx, bystander.uuid).generation == (
        bystander.generation)


def test_an_unknown_provider_bumps_no_generation(ctx, provider):
    """The lock that bumps changes nothing unless every provider named
    exists: the consumers kept for the 400 are committed alone."""
    consumer = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderNotFound):
        alloc_obj.write(ctx, [_request(consumer, {
            provider.uuid: {'VCPU': 1}, str(uuid.uuid4()): {'VCPU': 1}})],
            0)
    assert _exists(ctx, consumer)
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == (
        provider.generation)
    assert inv_obj.usages(ctx, provider) == {'VCPU': 0}


def test_a_provider_deleted_while_locking_is_a_race(ctx, provider,
                                                    monkeypatch):
    """A provider counted by the bumping lock but deleted before it got
    its row (another transaction held it) rolls the attempt back as a
    race; the retry then reports the provider unknown."""
    other = rp_obj.create(ctx, str(uuid.uuid4()), 'other')
    real = provider_generation._bump_locked
    seen = []

    def gone_meanwhile(ctx_, uuids, ids):
        rows = real(ctx_, uuids, ids)
        seen.append(rows)
        if len(seen) == 1:
            rows = [row for row in rows if row[0] != other.id]
        return rows
    monkeypatch.setattr(provider_generation, '_bump_locked', gone_meanwhile)
    consumer = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderConcurrentUpdateDetected):
        alloc_obj.write(ctx, [_request(consumer, {
            provider.uuid: {'VCPU': 1}, other.uuid: {}})], 0)
    assert not _exists(ctx, consumer)
    assert rp_obj.get_by_uuid(ctx, provider.uuid).generation == (
        provider.generation)


def test_capacity_check_reads_inventories_and_usage_at_once(ctx, provider):
    sent = fixtures.statements_sent(
        ctx, _write, ctx, provider, {str(uuid.uuid4()): 1}, prepared_too=True)
    reads = [s for s in sent if s.startswith('SELECT ') and (
        'WHERE inventories.resource_provider_id IN' in s
        or 'FROM allocations WHERE allocations.resource_provider_id IN' in s)]
    assert len(reads) == 1, sent


#: Statements of a new consumer's allocations on one provider of a
#: standard class (17 on SQLite before they were counted): the project,
#: user and type ids with the consumer read, the consumer created (at
#: its final generation), the provider locked and bumped, old rows
#: deleted, capacity read, rows inserted; SQLite adds its BEGIN.
#: MariaDB reads the names one table at a time and the consumer apart,
#: and creates consumers without RETURNING: a savepoint around the
#: insert and a second read.
NEW_CONSUMER_STATEMENTS = {'sqlite': 7, 'postgresql': 6, 'mysql': 13}


def test_new_consumer_write_statements(ctx, provider):
    _write(ctx, provider, {str(uuid.uuid4()): 1})  # the project and user
    sent = fixtures.statements_sent(
        ctx, _write, ctx, provider, {str(uuid.uuid4()): 1}, prepared_too=True)
    dialect = ctx.db.engine.dialect
    if dialect.name == 'mysql' and not dialect.delete_returning:
        pytest.skip('MySQL proper: no RETURNING')
    assert len(sent) <= NEW_CONSUMER_STATEMENTS[dialect.name], (
        '\n'.join(sent))


def test_provider_generations_bumped_in_one_statement(ctx, provider):
    other = rp_obj.create(ctx, str(uuid.uuid4()), 'other')
    inv_obj.replace_all(ctx, other, {'VCPU': {'total': 2}})
    consumer = str(uuid.uuid4())
    before = {rp.uuid: rp_obj.get_by_uuid(ctx, rp.uuid).generation
              for rp in (provider, other)}
    sent = fixtures.statements_sent(
        ctx, alloc_obj.write, ctx, [_request(consumer, {
            provider.uuid: {'VCPU': 1}, other.uuid: {'VCPU': 1}})], 0,
        prepared_too=True)
    bumps = [s for s in sent if s.startswith('UPDATE resource_providers')]
    assert len(bumps) == 1, sent
    assert {rp.uuid: rp_obj.get_by_uuid(ctx, rp.uuid).generation
            for rp in (provider, other)} == {
        uuid_: generation + 1 for uuid_, generation in before.items()}


def test_deleting_a_consumer_takes_two_statements(ctx, provider):
    consumer = str(uuid.uuid4())
    _write(ctx, provider, {consumer: 1})
    sent = fixtures.statements_sent(
        ctx, alloc_obj.delete_by_consumer, ctx, consumer, prepared_too=True)
    assert [s.split(' WHERE ')[0] for s in sent] == [
        'DELETE FROM allocations', 'DELETE FROM consumers'], sent
    assert alloc_obj.get_by_consumer(ctx, consumer).allocations == {}
    with pytest.raises(exception.ConsumerAllocationsNotFound):
        alloc_obj.delete_by_consumer(ctx, consumer)


@pytest.mark.parametrize('count', [1, 9, 10])
def test_new_rows_are_stored_as_prepared(ctx, count):
    """Up to ``_PREPARED_ROWS`` allocation rows are inserted by a
    statement prepared per number of rows, above it by a list insert:
    both store every column in one statement."""
    classes = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'IPV4_ADDRESS', 'PCPU']
    providers = []
    for index in range(2):
        rp = rp_obj.create(ctx, str(uuid.uuid4()), 'node-%d' % index)
        inv_obj.replace_all(ctx, rp, {rc: {'total': 100} for rc in classes})
        providers.append(rp.uuid)
    pairs = [(rp, rc) for rp in providers for rc in classes][:count]
    allocations = {}
    for position, (rp, rc) in enumerate(pairs):
        allocations.setdefault(rp, {})[rc] = position + 1
    consumer = str(uuid.uuid4())
    before = db_api.utcnow()
    sent = fixtures.statements_sent(
        ctx, alloc_obj.write, ctx, [_request(consumer, allocations)], 0,
        prepared_too=True)
    assert len([s for s in sent
                if s.startswith('INSERT INTO allocations')]) == 1, sent
    view = alloc_obj.get_by_consumer(ctx, consumer)
    assert {rp: entry['resources']
            for rp, entry in view.allocations.items()} == allocations
    assert before <= view.last_modified <= db_api.utcnow()
