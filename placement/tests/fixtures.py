"""Databases, configurations and applications for tests.

``Database`` is a public fixture other projects' tests use (with
``placement.tests.functional.fixtures.placement.PlacementFixture``); the
functions below it serve this project's own suite.

The backend is SQLite unless ``PLACEMENT_TEST_DB_URL`` names a server
URL without a database (e.g. ``postgresql+psycopg2://u@127.0.0.1:5432``
or ``mysql+pymysql://root@127.0.0.1:3306``). On a server each test
process (xdist worker) owns one database, created once and emptied for
every fresh use, so tests never see each other's rows.
"""

import os
import tempfile
import uuid

import fixtures
import sqlalchemy as sa
import webob

from placement import conf as placement_conf
from placement import context
from placement.db import api as db_api
from placement.db import migration
from placement.db import prepared
from placement.db import tables
from placement import deploy

URL_ENV = 'PLACEMENT_TEST_DB_URL'


class Database(fixtures.Fixture):
    """A fresh placement schema, standard classes and traits included.

    On the ``[placement_database] connection`` of ``conf_fixture`` (an
    ``oslo_config.fixture.Config`` with placement's options registered),
    or, when none is set, on a new in-memory SQLite database of its own
    (named, so that an application built from the configuration in this
    process reaches the same data). ``set_config=True`` writes the
    connection used into the configuration. ``db`` is the handle
    (``placement.db.api.Database``) for building an application on.
    """

    def __init__(self, conf_fixture, set_config=False):
        super().__init__()
        self.conf_fixture = conf_fixture
        self.set_config = set_config
        self.db = None
        self.url = None

    def _setUp(self):
        group = self.conf_fixture.conf.placement_database
        self.url = group.connection or (
            'sqlite:///file:placement-%s?mode=memory&cache=shared&uri=true'
            % uuid.uuid4().hex)
        self.db = db_api.Database(self.url)
        self.addCleanup(self.db.dispose)
        migration.create_schema_for_tests(self.db)
        _sync_standard_names(self.db)
        if self.set_config:
            self.conf_fixture.config(group='placement_database',
                                     connection=self.url)


# Emptied in this order (children before what they reference).
_TABLES_TO_EMPTY = (
    'allocations', 'consumers', 'consumer_types', 'projects', 'users',
    'inventories', 'resource_provider_traits',
    'resource_provider_aggregates', 'placement_aggregates')

#: The test database on the configured server, created once per process.
_server_db_url = None


def server_url():
    """The server URL under test, or None for SQLite."""
    return os.environ.get(URL_ENV) or None


def backend_name():
    url = server_url()
    return sa.engine.make_url(url).get_backend_name() if url else 'sqlite'


def create_server_database(url, purpose='shared'):
    """(Re)create a database of this worker on the server; return its URL.

    ``purpose`` keeps databases of different uses apart (the shared one
    behind ``new_database`` must never be dropped under its engine).
    """
    base = sa.engine.make_url(url)
    name = 'placement_test_%s_%s' % (
        os.environ.get('PYTEST_XDIST_WORKER', 'main'), purpose)
    admin_db = 'postgres' if base.get_backend_name() == 'postgresql' else None
    admin = sa.create_engine(base.set(database=admin_db),
                             isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        if base.get_backend_name() == 'postgresql':
            conn.execute(sa.text('DROP DATABASE IF EXISTS %s WITH (FORCE)'
                                 % name))
            conn.execute(sa.text("CREATE DATABASE %s ENCODING 'UTF8'"
                                 % name))
        else:
            conn.execute(sa.text('DROP DATABASE IF EXISTS %s' % name))
            conn.execute(sa.text('CREATE DATABASE %s CHARACTER SET utf8mb4 '
                                 'COLLATE utf8mb4_bin' % name))
    admin.dispose()
    return str(base.set(database=name).render_as_string(hide_password=False))


def fresh_database_url(tmp_path, purpose):
    """A new, empty database for a server under test: on the test
    database server when one is configured, else an SQLite file in
    ``tmp_path``."""
    url = server_url()
    if url:
        return create_server_database(url, purpose)
    return 'sqlite:///%s' % (tmp_path / 'placement.sqlite')


def _empty(db):
    """Delete every row except the standard resource classes and traits."""
    with db.transaction(write=True) as conn:
        for name in _TABLES_TO_EMPTY:
            conn.execute(sa.delete(tables.metadata.tables[name]))
        rps = tables.resource_providers
        conn.execute(sa.update(rps).values(root_provider_id=None,
                                           parent_provider_id=None))
        conn.execute(sa.delete(rps))
        conn.execute(sa.delete(tables.resource_classes).where(
            tables.resource_classes.c.id >= 10000))
        conn.execute(sa.delete(tables.traits).where(
            tables.traits.c.name.like('CUSTOM\\_%', escape='\\')))


def new_database():
    """A Database with the head schema, standard names and no other rows.

    Returns ``(db, cleanup)``; call ``cleanup()`` when done.
    """
    global _server_db_url
    url = server_url()
    if url is None:
        fd, path = tempfile.mkstemp(prefix='placement-test-',
                                    suffix='.sqlite')
        os.close(fd)
        db = db_api.Database('sqlite:///' + path)
        migration.create_schema_for_tests(db)
        _sync_standard_names(db)

        def cleanup():
            db.dispose()
            for suffix in ('', '-wal', '-shm'):
                if os.path.exists(path + suffix):
                    os.unlink(path + suffix)
        return db, cleanup
    # A Database of its own, as on SQLite: what the process keeps per
    # database (provider index, listed rows, their cursors in the change
    # log) starts afresh rather than carrying an earlier test's state.
    if _server_db_url is None:
        _server_db_url = create_server_database(url)
        db = db_api.Database(_server_db_url)
        migration.create_schema_for_tests(db)
    else:
        db = db_api.Database(_server_db_url)
        _empty(db)
    _sync_standard_names(db)
    return db, db.dispose


def _sync_standard_names(db):
    ctx = context.AdminContext(db)
    from placement.objects import resource_class, trait
    resource_class.sync_standard(ctx)
    trait.sync_standard(ctx)


def new_conf(**overrides):
    """A ConfigOpts for tests: no config files, noauth2, given overrides.

    ``overrides`` are ``group__option=value`` (``DEFAULT__debug=True``).
    """
    conf = placement_conf.build([], config_files=[])
    conf.set_override('auth_strategy', 'noauth2', group='api')
    for key, value in overrides.items():
        group, _sep, name = key.rpartition('__')
        conf.set_override(name, value,
                          group=None if group in ('', 'DEFAULT') else group)
    return conf


def new_app(conf, db):
    """The full WSGI stack on an already prepared database."""
    return deploy.build_app(conf, db)


def call_as_admin(app, method, path, body=None):
    """``method path`` on the in-process ``app`` as admin at the latest
    microversion, with ``body`` as JSON."""
    req = webob.Request.blank(path, method=method)
    req.headers['x-auth-token'] = 'admin'
    req.headers['openstack-api-version'] = 'placement latest'
    if body is not None:
        req.json_body = body
        req.content_type = 'application/json'
    return req.get_response(app)


def statements_sent(ctx, fn, *args, prepared_too=False):
    """The statements ``fn(*args)`` sends through SQLAlchemy, whitespace
    folded; with ``prepared_too``, those run on the driver's cursor by
    ``placement.db.prepared`` too, in order (their SQL as compiled)."""
    sent = []

    def seen(_conn, _cursor, statement, *_args):
        sent.append(' '.join(statement.split()))
    rows = prepared.Prepared.rows

    def prepared_rows(statement, conn, **values):
        sent.append(' '.join(statement._for(conn.dialect).sql.split()))
        return rows(statement, conn, **values)
    sa.event.listen(ctx.db.engine, 'before_cursor_execute', seen)
    if prepared_too:
        prepared.Prepared.rows = prepared_rows
    try:
        fn(*args)
    finally:
        prepared.Prepared.rows = rows
        sa.event.remove(ctx.db.engine, 'before_cursor_execute', seen)
    return sent
