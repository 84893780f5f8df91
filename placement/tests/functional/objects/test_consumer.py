"""Consumer preparation for large writes: a few statements for all the
consumers of a request, chunked, with the per-consumer semantics kept
(generation checks in request order, records created in the write's
transaction, concurrent creations told apart)."""

import uuid

import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import batch
from placement.db import tables
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement.objects import usage as usage_obj
from placement.tests import fixtures

CLASSES = ('VCPU', 'MEMORY_MB')


@pytest.fixture
def providers(ctx):
    found = []
    for name in ('first', 'second'):
        rp = rp_obj.create(ctx, str(uuid.uuid4()), name)
        inv_obj.replace_all(ctx, rp, {rc: {'total': 10 ** 6}
                                      for rc in CLASSES})
        found.append(rp_obj.get_by_uuid(ctx, rp.uuid))
    return found


def _requests(providers, count, project='proj', **consumer_args):
    return [alloc_obj.ConsumerRequest(
        dict(uuid=str(uuid.uuid4()), project=project, user='user',
             **consumer_args),
        {rp.uuid: {rc: 1 for rc in CLASSES} for rp in providers})
        for _ in range(count)]


def _records(ctx, uuids):
    """{uuid: (generation, project, user, type)} of stored consumers."""
    c, p, u, t = (tables.consumers, tables.projects, tables.users,
                  tables.consumer_types)
    with ctx.db.transaction(write=False) as conn:
        rows = conn.execute(
            sa.select(c.c.uuid, c.c.generation, p.c.external_id,
                      u.c.external_id, t.c.name)
            .select_from(c.join(p, p.c.id == c.c.project_id)
                         .join(u, u.c.id == c.c.user_id)
                         .outerjoin(t, t.c.id == c.c.consumer_type_id))
            .where(c.c.uuid.in_(list(uuids)))).all()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_statements_do_not_grow_with_consumers(ctx, providers):
    """Writing 1,000 new consumers costs a few statements per chunk of
    consumers more than writing 10, not statements per consumer."""
    counts = []
    for count in (10, 1000):
        requests = _requests(providers, count, project='p%d' % count,
                             generation=None, consumer_type='INSTANCE')
        sent = fixtures.statements_sent(ctx, alloc_obj.write, ctx, requests,
                                        0, prepared_too=True)
        counts.append(len(sent))
    chunks = 1000 // batch.SIZE + 1
    assert counts[1] - counts[0] <= 8 * chunks, counts


def test_thousands_of_new_consumers_in_one_write(ctx, providers):
    requests = _requests(providers, 3000, generation=None,
                         consumer_type='INSTANCE')
    alloc_obj.write(ctx, requests, 0)
    records = _records(ctx, [r.consumer['uuid'] for r in requests])
    assert set(records.values()) == {(1, 'proj', 'user', 'INSTANCE')}
    assert len(records) == 3000
    assert usage_obj.totals(ctx, 'proj') == {rc: 6000 for rc in CLASSES}


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 3, so a handful of consumers spans several."""
    monkeypatch.setattr(batch, 'SIZE', 3)


def test_chunked_write_keeps_each_consumer_right(ctx, providers,
                                                 small_chunks):
    """New and existing consumers, moved, emptied and retyped, across
    chunks and with different projects."""
    first = _requests(providers[:1], 7, generation=None)
    alloc_obj.write(ctx, first, 0)
    kept, emptied = first[:4], first[4:]
    later = [alloc_obj.ConsumerRequest(
        dict(r.consumer, generation=1, project='other',
             consumer_type='MIGRATION'),
        {providers[1].uuid: {'VCPU': 2}}) for r in kept]
    later += [alloc_obj.ConsumerRequest(dict(r.consumer, generation=1), {})
              for r in emptied]
    later += _requests(providers, 5, project='third', generation=None)
    alloc_obj.write(ctx, later, 0)
    records = _records(ctx, [r.consumer['uuid'] for r in later])
    assert {records[r.consumer['uuid']] for r in kept} == {
        (2, 'other', 'user', 'MIGRATION')}
    assert not any(r.consumer['uuid'] in records for r in emptied)
    assert {records[r.consumer['uuid']] for r in later[7:]} == {
        (1, 'third', 'user', None)}
    assert inv_obj.usages(ctx, providers[0]) == {'VCPU': 5, 'MEMORY_MB': 5}
    assert inv_obj.usages(ctx, providers[1]) == {'VCPU': 13, 'MEMORY_MB': 5}


def test_first_mismatch_in_request_order_is_reported(ctx, providers,
                                                     small_chunks):
    existing = _requests(providers, 1)
    alloc_obj.write(ctx, existing, 0)
    requests = _requests(providers, 5, generation=None)
    requests.append(alloc_obj.ConsumerRequest(
        dict(existing[0].consumer, generation=None), {}))
    requests += _requests(providers, 1, generation=4)
    with pytest.raises(exception.ConsumerGenerationMismatch) as info:
        alloc_obj.write(ctx, requests, 0)
    assert str(info.value) == (
        'consumer generation conflict - expected 1 but got None')
    assert _records(ctx, [r.consumer['uuid'] for r in requests]) == {
        existing[0].consumer['uuid']: (1, 'proj', 'user', None)}


@pytest.fixture
def created_meanwhile(ctx, monkeypatch):
    """A consumer another request creates between this request's read
    and its insert: committed first, then hidden from the first read."""
    consumer = str(uuid.uuid4())
    consumer_obj.prepare(ctx, consumer, 'proj', 'user')
    real = consumer_obj._stored
    reads = []

    def stored(ctx, uuids, every=False):
        found = real(ctx, uuids, every)
        reads.append(uuids)
        if len(reads) == 1:
            found.pop(consumer, None)
        return found
    monkeypatch.setattr(consumer_obj, '_stored', stored)
    return consumer


@pytest.mark.parametrize('size', [3, 500])
def test_consumer_created_meanwhile_is_not_ours(
        ctx, providers, created_meanwhile, monkeypatch, size):
    monkeypatch.setattr(batch, 'SIZE', size)
    uuids = [str(uuid.uuid4()) for _ in range(4)] + [created_meanwhile]
    consumers = consumer_obj.prepare_all(ctx, [
        dict(uuid=u, project='proj', user='user') for u in uuids])
    assert [c.created for c in consumers] == [True] * 4 + [False]
    assert [c.generation for c in consumers] == [0] * 5
    assert len(set(c.id for c in consumers)) == 5


def test_consumer_created_meanwhile_fails_a_null_generation(
        ctx, providers, created_meanwhile):
    requests = _requests(providers, 2, generation=None)
    requests.append(alloc_obj.ConsumerRequest(
        dict(uuid=created_meanwhile, project='proj', user='user',
             generation=None), {}))
    with pytest.raises(exception.ConsumerGenerationMismatch) as info:
        alloc_obj.write(ctx, requests, 0)
    assert str(info.value) == (
        'consumer generation conflict - expected 0 but got None')
    assert list(_records(ctx, [r.consumer['uuid'] for r in requests])) == [
        created_meanwhile]


def test_single_prepare_keeps_its_interface(ctx):
    consumer = str(uuid.uuid4())
    made = consumer_obj.prepare(ctx, consumer, 'proj', 'user',
                                consumer_type='INSTANCE')
    again = consumer_obj.prepare(ctx, consumer, 'proj', 'other',
                                 generation=0)
    assert (made.created, again.created) == (True, False)
    assert made.id == again.id and again.generation == 0
    assert again.type_id is consumer_obj.UNCHANGED
    assert made.user_id != again.user_id


@pytest.fixture
def case_insensitive(ctx):
    """Projects and consumers compared the way a MySQL database created
    with its default collation compares them (case-insensitively)."""
    if fixtures.backend_name() != 'mysql':
        pytest.skip('collations are a MySQL matter')
    columns = {'projects': 'external_id', 'consumers': 'uuid'}

    def collate(collation):
        with ctx.db.transaction(write=True) as conn:
            for table, column in columns.items():
                conn.exec_driver_sql(
                    'ALTER TABLE %s MODIFY %s VARCHAR(%d) COLLATE %s NOT NULL'
                    % (table, column, 255 if table == 'projects' else 36,
                       collation))
    collate('utf8mb4_general_ci')
    yield
    collate('utf8mb4_bin')


def test_names_the_database_matches_differently_spelled(
        ctx, providers, case_insensitive):
    """The same records as when each name is looked up on its own: a
    project and a consumer the database finds under other spellings."""
    consumer = str(uuid.uuid4())
    first = _requests(providers, 1, project='proj')
    first[0].consumer['uuid'] = consumer
    alloc_obj.write(ctx, first, 0)
    again = _requests(providers, 3, project='PROJ')
    again[0].consumer.update(uuid=consumer.upper(), generation=1)
    alloc_obj.write(ctx, again, 0)
    records = _records(ctx, [r.consumer['uuid'] for r in again])
    assert len(records) == 3
    assert {record[1] for record in records.values()} == {'proj'}
    assert records[consumer][0] == 2


def test_names_and_consumers_are_read_by_one_statement(ctx, providers):
    """Existing and new consumers of known names: one read finds the
    project, user and type ids and the consumers, and the new consumers
    come back from their insert (MySQL, whose INSERT returns no rows: read
    back)."""
    alloc_obj.write(ctx, _requests(providers, 2, generation=None,
                                   consumer_type='INSTANCE'), 0)
    existing = _requests(providers, 1, generation=None,
                         consumer_type='INSTANCE')
    alloc_obj.write(ctx, existing, 0)
    requests = _requests(providers, 2, generation=None,
                         consumer_type='INSTANCE')
    existing[0].consumer['generation'] = 1
    sent = fixtures.statements_sent(ctx, alloc_obj.write, ctx,
                                    requests + existing, 0, prepared_too=True)
    reads = [s for s in sent if s.lstrip().startswith('SELECT') and (
        'FROM consumers' in s or 'FROM projects' in s)]
    expected = 1 if ctx.db.engine.dialect.insert_returning else 2
    assert len(reads) == expected, sent
    records = _records(ctx, [r.consumer['uuid']
                             for r in requests + existing])
    assert [records[r.consumer['uuid']][0]
            for r in requests + existing] == [1, 1, 2]


@pytest.mark.parametrize('count', [1, 3, 4])
def test_new_consumers_are_stored_as_prepared(ctx, providers, count):
    """Up to ``prepared.UP_TO`` new consumers are inserted by a statement
    prepared per number of rows, above it by a list insert: both store
    every column, the creation time among them, and the consumers are
    created by the one insert (MySQL without RETURNING: in a
    savepoint)."""
    before = db_api.utcnow()
    requests = _requests(providers, count, generation=None,
                         consumer_type='INSTANCE')
    sent = fixtures.statements_sent(ctx, alloc_obj.write, ctx, requests, 0,
                                    prepared_too=True)
    assert len([s for s in sent
                if s.startswith('INSERT INTO consumers')]) == 1, sent
    c = tables.consumers
    with ctx.db.transaction(write=False) as conn:
        created = conn.execute(sa.select(c.c.created_at).where(
            c.c.uuid.in_([r.consumer['uuid'] for r in requests]))).scalars()
        created = list(created)
    assert len(created) == count
    assert all(before <= when <= db_api.utcnow() for when in created)
    assert set(_records(ctx, [r.consumer['uuid'] for r in requests])
               .values()) == {(1, 'proj', 'user', 'INSTANCE')}
