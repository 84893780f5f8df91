"""Schema migrations: upgrade to head, report and stamp the revision.

Every operation runs on one connection holding a database-wide lock, so
several API workers (or a worker and ``placement-manage``) may start
against the same fresh database at once: the first migrates, the others
wait and then find the schema at head.
"""

import contextlib
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import sqlalchemy as sa

from placement.db import tables

_LOCK_KEY = 0x504c4d54  # "PLMT"; an arbitrary advisory lock id
_MYSQL_LOCK = 'placement_schema_migration'


def _alembic_config(conn):
    ini = os.path.join(os.path.dirname(__file__), 'migrations', 'alembic.ini')
    config = alembic_config.Config(ini)
    config.attributes['connection'] = conn
    return config


def head():
    """The newest revision id known to this code."""
    directory = alembic_script.ScriptDirectory.from_config(
        _alembic_config(None))
    return directory.get_current_head()


@contextlib.contextmanager
def _locked_connection(db):
    """A connection in a transaction that holds the migration lock."""
    with db.engine.connect() as conn:
        if db.dialect == 'mysql':
            # MySQL DDL is not transactional; a named lock serialises us.
            conn.execute(sa.text('SELECT GET_LOCK(:n, 600)'),
                         {'n': _MYSQL_LOCK})
            conn.commit()
            try:
                with conn.begin():
                    yield conn
            finally:
                conn.execute(sa.text('SELECT RELEASE_LOCK(:n)'),
                             {'n': _MYSQL_LOCK})
                conn.commit()
            return
        if db.dialect == 'sqlite':
            conn = conn.execution_options(placement_writer=True)
        with conn.begin():
            if db.dialect == 'postgresql':
                conn.execute(sa.text('SELECT pg_advisory_xact_lock(:k)'),
                             {'k': _LOCK_KEY})
            yield conn


def _current(conn):
    return alembic_migration.MigrationContext.configure(
        conn).get_current_revision()


def version(db):
    """The database's current revision id, or None if unversioned."""
    with db.engine.connect() as conn:
        return _current(conn)


def upgrade(db, revision='head'):
    """Bring the schema to ``revision`` (default: the latest)."""
    with _locked_connection(db) as conn:
        command.upgrade(_alembic_config(conn), revision)


def stamp(db, revision):
    """Record ``revision`` as current without running migrations."""
    with _locked_connection(db) as conn:
        command.stamp(_alembic_config(conn), revision)


def create_schema_for_tests(db):
    """Create the head schema directly from the table definitions.

    Much faster than running every migration; the migration tests prove
    that both routes produce the same schema.
    """
    with _locked_connection(db) as conn:
        tables.metadata.create_all(conn)
        command.stamp(_alembic_config(conn), 'head')
