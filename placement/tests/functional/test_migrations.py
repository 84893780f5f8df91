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
        assert migration.version(db) == migration.head() == 'a082b8bb98d0'
        with db.engine.connect() as conn:
            context = alembic_migration.MigrationContext.configure(conn)
            assert compare_metadata(context, tables.metadata) == []
        # A second run is a no-op.
        migration.upgrade(db)
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
