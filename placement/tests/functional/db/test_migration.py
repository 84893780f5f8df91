"""Migrations reach head and produce exactly the schema of db/tables.py."""

from alembic import migration as alembic_migration
from alembic.autogenerate import compare_metadata
import sqlalchemy as sa

from placement.db import api as db_api
from placement.db import migration
from placement.db import tables
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
        assert migration.version(db) == migration.head() == 'dabfd9010ed6'
        with db.engine.connect() as conn:
            context = alembic_migration.MigrationContext.configure(conn)
            assert compare_metadata(context, tables.metadata) == []
        assert _counter_rows(db) == [(1, 0, 0)]
        # A second run is a no-op.
        migration.upgrade(db)
        assert _counter_rows(db) == [(1, 0, 0)]
    finally:
        db.dispose()


def _counter_rows(db):
    counter = tables.provider_change_counter
    with db.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.select(
            counter.c.id, counter.c.version, counter.c.pruned_to))]


def test_upgrade_adds_change_log_to_an_upstream_head_schema(tmp_path):
    """A database at the upstream head (taken over from upstream) gets
    the change log and its counter row, its providers untouched."""
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
        assert _counter_rows(db) == [(1, 0, 0)]
        with db.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(
                tables.provider_changes)).scalar() == 0
    finally:
        db.dispose()


def test_schema_for_tests_has_the_counter_row(tmp_path):
    db = _empty_database(tmp_path)
    try:
        migration.create_schema_for_tests(db)
        assert migration.version(db) == migration.head()
        assert _counter_rows(db) == [(1, 0, 0)]
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
