"""Schema migrations: upgrade, downgrade, report and stamp the revision.

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
from placement.db import triggers

_LOCK_KEY = 0x504c4d54  # "PLMT"; an arbitrary advisory lock id
_MYSQL_LOCK = 'placement_schema_migration'


def _alembic_config(conn):
    ini = os.path.join(os.path.dirname(__file__), 'migrations', 'alembic.ini')
    config = alembic_config.Config(ini)
    config.attributes['connection'] = conn
    return config


class DowngradeRefused(Exception):
    """A downgrade that would not run, with the one-line reason."""


def _scripts():
    return alembic_script.ScriptDirectory.from_config(_alembic_config(None))


def head():
    """The newest revision id known to this code."""
    return _scripts().get_current_head()


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


def downgrade_floor():
    """The oldest revision ``downgrade`` can reach.

    Only revisions we added on top of upstream's schema can be undone
    (upstream's own revisions have no way down): the floor is the parent
    of the oldest revision in the unbroken run of downgradable ones below
    head, i.e. upstream Placement 16.0.0's head ``a082b8bb98d0``.
    """
    floor = head()
    for script in _scripts().walk_revisions():  # head first
        if not hasattr(script.module, 'downgrade'):
            break
        floor = script.down_revision
    return floor


def _lineage(scripts, revision):
    """``revision`` and every revision below it, as ids."""
    return [s.revision for s in scripts.iterate_revisions(revision, 'base')]


def _check_downgrade(conn, revision):
    """The full id of the downgrade target, or DowngradeRefused."""
    scripts = _scripts()
    floor = downgrade_floor()
    if revision == 'base':
        raise DowngradeRefused('cannot downgrade below %s (upstream '
                               'Placement 16.0.0)' % floor)
    try:
        target = scripts.get_revision(revision).revision
    except Exception:  # unknown, ambiguous or malformed
        raise DowngradeRefused('unknown revision %r' % revision)
    current = _current(conn)
    if current is None:
        raise DowngradeRefused('the database has no schema revision')
    try:
        below_current = _lineage(scripts, current)
    except Exception:
        raise DowngradeRefused('the current revision %s is unknown to '
                               'this version of placement' % current)
    if target not in below_current:
        raise DowngradeRefused('revision %s is not below the current '
                               'revision %s' % (target, current))
    if target != floor and target in _lineage(scripts, floor):
        raise DowngradeRefused('cannot downgrade below %s (upstream '
                               'Placement 16.0.0)' % floor)
    return target


def upgrade(db, revision='head'):
    """Bring the schema to ``revision`` (default: the latest)."""
    with _locked_connection(db) as conn:
        command.upgrade(_alembic_config(conn), revision)


def downgrade(db, revision):
    """Bring the schema down to ``revision``; return the revision reached.

    Refuses (DowngradeRefused) an unknown revision, one that is not below
    the current one, and one below ``downgrade_floor()``. Asking for the
    current revision changes nothing. See api-ref/behaviour-choices.rst,
    'What db downgrade removes'.
    """
    with _locked_connection(db) as conn:
        target = _check_downgrade(conn, revision)
        if target != _current(conn):
            command.downgrade(_alembic_config(conn), target)
        return target


class NotAtHead(Exception):
    """The schema is not at this code's head revision."""


def create_missing_triggers(db):
    """``triggers.create_missing`` under the migration lock, on a schema
    at this code's head only (the triggers' form follows the revision):
    the names that were missing."""
    with _locked_connection(db) as conn:
        current = _current(conn)
        if current != head():
            raise NotAtHead('the schema is at %s, not %s: run "db sync" '
                            'first' % (current or 'no revision', head()))
        return triggers.create_missing(conn)


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
        triggers.create_triggers(conn)
        command.stamp(_alembic_config(conn), 'head')
