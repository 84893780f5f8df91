"""Migrations reach head and produce exactly the schema of db/tables.py."""

from alembic import migration as alembic_migration
from alembic.autogenerate import compare_metadata
import pytest
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import migration
from placement.db import tables
from placement.db import triggers
from placement.tests import fixtures


def _empty_database(tmp_path):
    url = fixtures.server_url()
    if url is None:
        return db_api.Database('sqlite:///%s' % (tmp_path / 'm.sqlite'))
    return db_api.Database(
        fixtures.create_server_database(url, purpose='migrations'))


def test_upgrade_from_empty_matches_table_definitions(tmp_path):
    db = _empty_database(tmp_path)
    try:
        assert migration.version(db) is None
        migration.upgrade(db)
        assert migration.version(db) == migration.head() == HEAD
        with db.engine.connect() as conn:
            context = alembic_migration.MigrationContext.configure(conn)
            assert compare_metadata(context, tables.metadata) == []
        assert _triggers(db) == EXPECTED_TRIGGERS
        assert _log_rows(db) == [None]
        # A second run is a no-op.
        migration.upgrade(db)
        assert _log_rows(db) == [None]
    finally:
        db.dispose()


HEAD = 'c6f209155b76'
EXPECTED_TRIGGERS = sum(3 if column else 2
                        for column in triggers.TRIGGERED.values())


def _log_rows(db):
    log = tables.provider_change_log
    with db.engine.connect() as conn:
        return [row.resource_provider_id for row in conn.execute(
            sa.select(log.c.resource_provider_id).order_by(log.c.id))]


def _counter_rows(db):
    """The counter of the change log before triggers (dabfd9010ed6)."""
    with db.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(
            'SELECT id, version, pruned_to FROM provider_change_counter'))]


def _triggers(db):
    """How many of our triggers (and PostgreSQL functions) exist."""
    queries = {
        'sqlite': "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                  " AND name LIKE 'placement_log_%'",
        'postgresql': "SELECT count(*) FROM pg_trigger WHERE tgname LIKE "
                      "'placement_log_%'",
        'mysql': "SELECT count(*) FROM information_schema.triggers WHERE "
                 "trigger_schema = DATABASE() AND trigger_name LIKE "
                 "'placement_log_%'",
    }
    with db.engine.connect() as conn:
        found = conn.execute(sa.text(queries[db.dialect])).scalar()
        if db.dialect == 'postgresql':
            # And the functions they run.
            functions = conn.execute(sa.text(
                "SELECT count(*) FROM pg_proc WHERE proname LIKE "
                "'placement_log_%'")).scalar()
            return (found, functions)
        return found


#: Before 2517d0f02a51: the same everywhere but on PostgreSQL, where
#: each table had one row trigger for all its events, running one of
#: three functions.
ROW_TRIGGERS = EXPECTED_TRIGGERS
if fixtures.backend_name() == 'postgresql':
    ROW_TRIGGERS = (len(triggers.TRIGGERED), 3)
    # The tables logging every provider keep their row trigger; the
    # provider tables have a statement trigger per event, running one
    # of six functions (two columns, three events).
    EVERYTHING = list(triggers.TRIGGERED.values()).count(None)
    EXPECTED_TRIGGERS = (
        EVERYTHING + 3 * (len(triggers.TRIGGERED) - EVERYTHING), 1 + 6)
NO_TRIGGERS = (0, 0) if fixtures.backend_name() == 'postgresql' else 0


def test_upgrade_adds_change_log_to_an_upstream_head_schema(tmp_path):
    """A database at the upstream head (taken over from upstream) gets
    the change log and its triggers, its providers untouched."""
    db = _empty_database(tmp_path)
    try:
        migration.upgrade(db, 'a082b8bb98d0')
        with db.engine.begin() as conn:
            names = sa.inspect(conn).get_table_names()
            assert 'provider_changes' not in names
            conn.execute(sa.insert(tables.resource_providers).values(
                id=1, uuid='11111111-1111-1111-1111-111111111111',
                name='old', generation=3, root_provider_id=None))
        migration.upgrade(db)
        assert _triggers(db) == EXPECTED_TRIGGERS
        with db.engine.begin() as conn:
            names = sa.inspect(conn).get_table_names()
            assert 'provider_change_counter' not in names
            assert 'provider_changes' not in names
            conn.execute(sa.update(tables.resource_providers).values(
                name='renamed'))
        assert _log_rows(db) == [None, 1]
    finally:
        db.dispose()


def _indexes(db, table):
    with db.engine.connect() as conn:
        return {i['name']: tuple(i['column_names'])
                for i in sa.inspect(conn).get_indexes(table)}


def test_upgrade_widens_the_consumer_index_of_populated_allocations(
        tmp_path):
    """The index usages read replaces the consumer index on a database
    with allocations, which it keeps and finds by consumer, and a
    downgrade gives the old index back."""
    db = _empty_database(tmp_path)
    consumer = '22222222-2222-2222-2222-222222222222'
    allocations = tables.allocations
    try:
        migration.upgrade(db, '8c49c564818b')
        with db.engine.begin() as conn:
            conn.execute(sa.insert(tables.resource_providers).values(
                id=1, uuid='11111111-1111-1111-1111-111111111111',
                name='rp', generation=1, root_provider_id=1))
            conn.execute(sa.insert(allocations), [
                dict(resource_provider_id=1, consumer_id=consumer,
                     resource_class_id=rc, used=used)
                for rc, used in ((0, 2), (1, 512))])
        assert _indexes(db, 'allocations')[
            'allocations_consumer_id_idx'] == ('consumer_id',)
        migration.upgrade(db)
        found = _indexes(db, 'allocations')
        assert 'allocations_consumer_id_idx' not in found
        assert found['allocations_consumer_id_class_used_idx'] == (
            'consumer_id', 'resource_class_id', 'used')
        with db.engine.connect() as conn:
            assert conn.execute(
                sa.select(allocations.c.resource_class_id,
                          allocations.c.used)
                .where(allocations.c.consumer_id == consumer)
                .order_by(allocations.c.resource_class_id)).all() == [
                    (0, 2), (1, 512)]
        migration.downgrade(db, '8c49c564818b')
        found = _indexes(db, 'allocations')
        assert found['allocations_consumer_id_idx'] == ('consumer_id',)
        assert 'allocations_consumer_id_class_used_idx' not in found
    finally:
        db.dispose()


def test_statement_triggers_log_a_provider_once_per_statement(tmp_path):
    """On PostgreSQL the head revision logs each provider once per
    statement; a downgrade gives back the row triggers, which log it
    once per row (as SQLite and MySQL/MariaDB always do)."""
    db = _empty_database(tmp_path)
    log = tables.provider_change_log
    at_head = 1 if fixtures.backend_name() == 'postgresql' else 2

    def logged():
        with db.engine.begin() as conn:
            before = conn.execute(sa.select(sa.func.max(log.c.id))).scalar()
            conn.execute(sa.insert(tables.inventories), [
                dict(resource_provider_id=1, resource_class_id=rc, total=8,
                     reserved=0, min_unit=1, max_unit=8, step_size=1,
                     allocation_ratio=1.0) for rc in (0, 1)])
            inserted = conn.execute(sa.select(log.c.resource_provider_id)
                                    .where(log.c.id > before)).all()
        with db.engine.begin() as conn:
            before = conn.execute(sa.select(sa.func.max(log.c.id))).scalar()
            conn.execute(sa.delete(tables.inventories))
            deleted = conn.execute(sa.select(log.c.resource_provider_id)
                                   .where(log.c.id > before)).all()
        return len(inserted), len(deleted)

    try:
        migration.upgrade(db)
        with db.engine.begin() as conn:
            conn.execute(sa.insert(tables.resource_providers).values(
                id=1, uuid='11111111-1111-1111-1111-111111111111',
                name='rp', generation=1, root_provider_id=1))
        assert logged() == (at_head, at_head)
        migration.downgrade(db, '8b870f51e68b')
        assert _triggers(db) == ROW_TRIGGERS
        assert logged() == (2, 2)
        migration.upgrade(db)
        assert _triggers(db) == EXPECTED_TRIGGERS
        assert logged() == (at_head, at_head)
    finally:
        db.dispose()


def test_upgrade_adds_the_type_to_the_consumers_project_index(tmp_path):
    """Usages by type read the project's consumers from an index that
    carries their type; a downgrade gives upstream's index back."""
    db = _empty_database(tmp_path)
    old, new = ('consumers_project_id_uuid_idx',
                'consumers_project_id_consumer_type_id_uuid_idx')
    try:
        migration.upgrade(db, '2517d0f02a51')
        with db.engine.begin() as conn:
            conn.execute(sa.insert(tables.consumers), [
                dict(uuid=str(number) * 36, project_id=number % 2,
                     user_id=1, consumer_type_id=None, generation=0)
                for number in range(1, 4)])
        assert old in _indexes(db, 'consumers')
        migration.upgrade(db)
        found = _indexes(db, 'consumers')
        assert old not in found
        assert found[new] == ('project_id', 'consumer_type_id', 'uuid')
        with db.engine.connect() as conn:
            consumers = tables.consumers
            assert conn.execute(
                sa.select(consumers.c.uuid)
                .where(consumers.c.project_id == 1)
                .order_by(consumers.c.uuid)).scalars().all() == [
                    '1' * 36, '3' * 36]
        migration.downgrade(db, '2517d0f02a51')
        found = _indexes(db, 'consumers')
        assert found[old] == ('project_id', 'uuid')
        assert new not in found
    finally:
        db.dispose()


def test_schema_for_tests_has_the_triggers(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.create_schema_for_tests(db)
        assert migration.version(db) == migration.head()
        assert _triggers(db) == EXPECTED_TRIGGERS
    finally:
        db.dispose()


def test_stamp_records_revision_without_migrating(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.stamp(db, '422ece571366')
        assert migration.version(db) == '422ece571366'
        with db.engine.connect() as conn:
            names = sa.inspect(conn).get_table_names()
            assert 'resource_providers' not in names
    finally:
        db.dispose()


def _schema(db):
    """Tables with their columns, indexes, unique and foreign keys."""
    with db.engine.connect() as conn:
        inspector = sa.inspect(conn)
        found = {}
        for table in inspector.get_table_names():
            found[table] = (
                sorted((c['name'], str(c['type']), c['nullable'])
                       for c in inspector.get_columns(table)),
                sorted((i['name'], tuple(i['column_names']), i['unique'])
                       for i in inspector.get_indexes(table)),
                sorted((tuple(u['column_names']))
                       for u in inspector.get_unique_constraints(table)),
                sorted((tuple(f['constrained_columns']), f['referred_table'])
                       for f in inspector.get_foreign_keys(table)))
        return found


def _second_empty_database(tmp_path):
    url = fixtures.server_url()
    if url is None:
        return db_api.Database('sqlite:///%s' % (tmp_path / 'm2.sqlite'))
    return db_api.Database(
        fixtures.create_server_database(url, purpose='migrations2'))


def test_downgrade_floor_is_upstream_head():
    assert migration.downgrade_floor() == 'a082b8bb98d0'


def test_downgrade_restores_exactly_the_upstream_head_schema(tmp_path):
    ours, upstream = _empty_database(tmp_path), _second_empty_database(
        tmp_path)
    try:
        migration.upgrade(upstream, 'a082b8bb98d0')
        migration.upgrade(ours)
        with ours.engine.begin() as conn:
            conn.execute(sa.insert(tables.resource_providers).values(
                id=1, uuid='11111111-1111-1111-1111-111111111111',
                name='kept', generation=3, root_provider_id=1))
        assert _log_rows(ours) == [None, 1]
        assert migration.downgrade(ours, 'a082b8bb98d0') == 'a082b8bb98d0'
        assert migration.version(ours) == 'a082b8bb98d0'
        assert _schema(ours) == _schema(upstream)
        assert _triggers(ours) == NO_TRIGGERS
        with ours.engine.connect() as conn:
            assert conn.execute(sa.select(
                tables.resource_providers.c.name,
                tables.resource_providers.c.generation)).all() == [
                    ('kept', 3)]
        # And up again: the change log starts afresh.
        migration.upgrade(ours)
        assert migration.version(ours) == migration.head()
        assert _log_rows(ours) == [None]
        assert _triggers(ours) == EXPECTED_TRIGGERS
    finally:
        ours.dispose()
        upstream.dispose()


def test_downgrade_to_the_current_revision_changes_nothing(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.upgrade(db)
        assert migration.downgrade(db, 'head') == migration.head()
        assert _triggers(db) == EXPECTED_TRIGGERS
    finally:
        db.dispose()


def test_downgrade_to_the_counter_log_brings_it_back(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.upgrade(db)
        assert migration.downgrade(db, 'dabfd9010ed6') == 'dabfd9010ed6'
        assert _counter_rows(db) == [(1, 0, 0)]
        assert _triggers(db) == NO_TRIGGERS
        with db.engine.connect() as conn:
            assert 'provider_change_log' not in sa.inspect(
                conn).get_table_names()
        migration.upgrade(db)
        assert _triggers(db) == EXPECTED_TRIGGERS
    finally:
        db.dispose()


@pytest.mark.parametrize('revision, current, reason', [
    ('nosuchrev', 'head', "unknown revision 'nosuchrev'"),
    ('422ece571366', 'head', 'cannot downgrade below a082b8bb98d0'),
    ('base', 'head', 'cannot downgrade below a082b8bb98d0'),
    ('dabfd9010ed6', 'a082b8bb98d0',
     'revision dabfd9010ed6 is not below the current revision '
     'a082b8bb98d0'),
    ('a082b8bb98d0', None, 'the database has no schema revision'),
])
def test_downgrade_refusals(tmp_path, revision, current, reason):
    db = _empty_database(tmp_path)
    try:
        if current:
            migration.upgrade(db, current)
        before = migration.version(db)
        with pytest.raises(migration.DowngradeRefused) as refused:
            migration.downgrade(db, revision)
        assert str(refused.value).startswith(reason)
        assert migration.version(db) == before
    finally:
        db.dispose()


def test_downgrade_refuses_a_revision_unknown_to_this_code(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.upgrade(db)
        with db.engine.begin() as conn:
            conn.execute(sa.text(
                "UPDATE alembic_version SET version_num = 'f00dfeed0001'"))
        with pytest.raises(migration.DowngradeRefused) as refused:
            migration.downgrade(db, 'a082b8bb98d0')
        assert str(refused.value) == (
            'the current revision f00dfeed0001 is unknown to this version '
            'of placement')
    finally:
        db.dispose()
