"""Start this checkout and upstream Placement 16.0.0 side by side.

For benchmarks that must compare both servers in one run (timings on a
shared machine drift over minutes, so separate runs do not compare).
Each server runs under gunicorn with ``workers`` processes, ``noauth2``
and a database of its own: an SQLite file in a temporary directory, or,
when ``PLACEMENT_TEST_DB_URL`` names a database server
(``tools/with-postgresql.sh`` / ``tools/with-mysql.sh`` export it), a
new database on that server. Upstream runs from its own virtualenv
(``placement/tests/upstream.py`` creates or reuses it), as a black box.

Loading a large cloud through the API takes many minutes per server, so
a benchmark may fill ours once (``prepare``) and give upstream its own
schema filled with ours' rows (``copy_rows``; checked by comparing what
both servers answer).
"""

import contextlib
import dataclasses
import os
import tempfile
import time

import sqlalchemy as sa

from benchmarks.toolkit import labels
from benchmarks.toolkit import proc_cpu
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import placement_http
from placement.tests import upstream

#: Providers whose usages the copy check compares.
CHECKED_USAGES = 20


@dataclasses.dataclass
class Served:
    """A started server: ``pid`` is the gunicorn master's, ``database``
    its database's URL."""

    label: str
    url: str
    pid: int
    database: str = None


def _database(tmp, name):
    url = fixtures.server_url()
    if url:
        return fixtures.create_server_database(url, 'bench_' + name)
    return 'sqlite:///%s' % os.path.join(tmp, name + '.sqlite')


def can_copy():
    """Whether ours' data can be copied for upstream here."""
    return fixtures.backend_name() in ('sqlite', 'postgresql', 'mysql')


#: Tables whose rows are each installation's own, never copied.
NOT_COPIED = ('alembic_version',)


def copy_rows(source, target):
    """Fill database ``target``, migrated by upstream, with the rows of
    ``source`` (ours, nobody writing to it) that upstream's schema has.

    Only upstream's own tables, columns and indexes end up in ``target``:
    none of ours (the change log, its triggers) makes upstream's writes
    dearer or its database larger than upstream's own schema would.
    Foreign keys are not checked while copying; PostgreSQL's sequences
    are moved past the copied ids.
    """
    engines = [sa.create_engine(url, poolclass=sa.pool.NullPool)
               for url in (source, target)]
    try:
        ours, theirs = (sa.MetaData() for _ in engines)
        ours.reflect(engines[0])
        theirs.reflect(engines[1])
        backend = engines[1].dialect.name
        with engines[0].connect() as src, engines[1].begin() as dst:
            dst.execute(sa.text({
                'postgresql': 'SET session_replication_role = replica',
                # An id of 0 (VCPU's resource class) is kept as it is.
                'mysql': "SET foreign_key_checks = 0, sql_mode = "
                         "CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')",
                'sqlite': 'PRAGMA defer_foreign_keys = ON'}[backend]))
            for name, table in theirs.tables.items():
                if name in NOT_COPIED or name not in ours.tables:
                    continue
                columns = [c.name for c in table.columns
                           if c.name in ours.tables[name].columns]
                rows = [dict(row._mapping) for row in src.execute(
                    sa.select(*(ours.tables[name].c[c] for c in columns)))]
                dst.execute(table.delete())
                for at in range(0, len(rows), 5000):
                    dst.execute(table.insert(), rows[at:at + 5000])
                if backend == 'postgresql' and 'id' in table.columns:
                    dst.execute(sa.text(
                        "SELECT setval(pg_get_serial_sequence(:t, 'id'), "
                        "coalesce(max(id), 0) + 1, false) FROM %s" % name),
                        {'t': name})
    finally:
        for engine in engines:
            engine.dispose()


def check_same_cloud(ours_url, theirs_url):
    """RuntimeError unless both servers list the same providers at the
    same generations and agree on the usages of the first few."""
    listed = []
    for url in (ours_url, theirs_url):
        client = placement_http.Client(url, timeout=300)
        try:
            providers = client.checked('GET', '/resource_providers')
            generations = {rp['uuid']: rp['generation']
                           for rp in providers['resource_providers']}
            usages = {rp: client.checked(
                'GET', '/resource_providers/%s/usages' % rp)['usages']
                for rp in sorted(generations)[:CHECKED_USAGES]}
        finally:
            client.close()
        listed.append((generations, usages))
    if listed[0] != listed[1]:
        raise RuntimeError('upstream does not read the copy of our '
                           'database as we do')
    return len(listed[0][0])


@contextlib.contextmanager
def side_by_side(workers=2, with_upstream=True, timeout=300, prepare=None,
                 copy=True, gunicorn_args=(), own_args=None):
    """Yield [Served] (ours, then upstream), stopped however it ends.

    ``timeout`` is gunicorn's worker timeout: above the client's, so
    that the client decides when a request took too long.
    ``gunicorn_args`` are given to both gunicorns alike (e.g. a worker
    class that keeps connections open); ``own_args`` ({'ours': [...],
    'upstream': [...]}) to one of them after those, to measure each
    server as it is best deployed.
    ``prepare(label, url)``, when given, fills a server's database
    before the benchmark: ours', then upstream gets a copy of it when
    ``copy`` and ``can_copy()``; otherwise each server's in turn.
    """
    own_args = own_args or {}
    args = ['--timeout', str(int(timeout)), *gunicorn_args]
    with tempfile.TemporaryDirectory(prefix='bench-servers.') as tmp:
        with contextlib.ExitStack() as stack:
            ours_db = _database(tmp, 'ours')
            ours = gunicorn_server.GunicornServer(
                ours_db, os.path.join(tmp, 'ours.log'),
                workers=workers,
                gunicorn_args=args + list(own_args.get(labels.OURS, ())))
            # gunicorn puts its working directory on sys.path.
            ours.cwd = tmp
            stack.enter_context(ours)
            copy = (copy and prepare is not None and with_upstream
                    and can_copy())
            if prepare is not None:
                prepare(labels.OURS, ours.url)
            if with_upstream:
                venv = upstream.ensure_venv(tmp)
                db_url = _database(tmp, 'upstream')
                config = upstream.write_config(
                    os.path.join(tmp, 'upstream.conf'), db_url)
                upstream.manage(venv, config, tmp, 'db', 'sync')
                if copy:
                    copy_rows(ours_db, db_url)
                theirs = upstream.UpstreamServer(
                    venv, db_url, tmp, os.path.join(tmp, 'upstream.log'),
                    workers=workers, gunicorn_args=args + list(
                        own_args.get(labels.UPSTREAM, ())))
                stack.enter_context(theirs)
                if copy:
                    count = check_same_cloud(ours.url, theirs.url)
                    print('upstream: a copy of our database, %d providers '
                          'read back alike' % count, flush=True)
                elif prepare is not None:
                    prepare(labels.UPSTREAM, theirs.url)
            served = [Served(labels.OURS, ours.url, ours._process.pid,
                             ours_db)]
            if with_upstream:
                served.append(Served(labels.UPSTREAM, theirs.url,
                                     theirs._process.pid, db_url))
            yield served


def start_application(stack, tmp, label, application, options, workers,
                      environment=None):
    """Start gunicorn serving ``application`` in ``stack``; (url, master
    pid). Ours (``gunicorn_server.APPLICATION``) gets a fresh database;
    any other application (``toolkit/hello_app.py``) opens none.
    ``environment`` adds variables to the server's."""
    ours = application == gunicorn_server.APPLICATION
    server = gunicorn_server.GunicornServer(
        _database(tmp, label.replace('-', '_')) if ours else 'sqlite://',
        os.path.join(tmp, label + '.log'), workers=workers,
        environment=environment, gunicorn_args=options)
    server.cwd = tmp
    if not ours:
        server._command_and_env = _with_application(
            server._command_and_env, application)
    stack.enter_context(server)
    return server.url, server._process.pid


def _with_application(command_and_env, application):
    def replaced():
        command, env = command_and_env()
        return command[:-1] + [application], env
    return replaced


class Restartable:
    """A server a benchmark stops and starts again around bulk writes to
    its SQLite file (``db_url``), and whose workers it measures."""

    def __init__(self, label, server):
        self.label, self.server = label, server
        self.db_url = server.db_url

    @property
    def url(self):
        return self.server.url

    def start(self, timeout):
        """Start and wait until ``GET /`` answers."""
        self.server.start(timeout)

    def stop(self):
        self.server.stop()

    def create_schema(self):
        """Start once and stop: the first start creates the schema and
        the standard names a bulk loader needs."""
        self.start(120)
        self.wait('/traits', 120)
        self.wait('/resource_classes', 120)
        self.stop()

    def wait(self, path, timeout):
        """Poll until ``path`` answers 200."""
        deadline = time.monotonic() + timeout
        while True:
            if self.server._process.poll() is not None:
                raise RuntimeError('%s exited: %s' % (
                    self.label, self.server.log()))
            client = placement_http.Client(self.url, timeout=timeout)
            resp = client.fetch('GET', path)
            client.close()
            if resp.status == 200:
                return
            if time.monotonic() > deadline:
                raise RuntimeError('%s: no 200 for %s within %g s (%s)' % (
                    self.label, path, timeout, resp.status or resp.failure))
            time.sleep(0.2)

    def workers(self):
        """Pids of the gunicorn workers."""
        return self.server.worker_pids()

    def cpu_seconds(self):
        """User and system CPU time the workers have used so far."""
        return sum(proc_cpu.tree_seconds(pid) or 0
                   for pid in self.workers())

    def rss_mb(self):
        """Each worker's resident memory (``VmRSS``), in MiB."""
        sizes = []
        for pid in self.workers():
            with open('/proc/%d/status' % pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        sizes.append(int(line.split()[1]) / 1024)
        return sizes


def on_sqlite_files(workdir, upstream_venv=None, workers=2, timeout=60):
    """[Restartable] ours and, with ``upstream_venv`` (a virtualenv with
    upstream Placement and gunicorn), upstream, each on an SQLite file of
    its own in ``workdir``, not started (``create_schema`` before a bulk
    load); ``timeout`` is the clients', which gunicorn's worker timeout
    exceeds."""
    args = ['--timeout', str(int(timeout) + 5)]
    ours = gunicorn_server.GunicornServer(
        'sqlite:///' + os.path.join(workdir, 'ours.db'),
        os.path.join(workdir, 'ours.log'), workers=workers,
        gunicorn_args=args)
    # gunicorn puts its working directory on sys.path.
    ours.cwd = workdir
    found = [Restartable(labels.OURS, ours)]
    if upstream_venv:
        db_url = 'sqlite:///' + os.path.join(workdir, 'upstream.db')
        upstream.manage(upstream_venv, upstream.write_config(
            os.path.join(workdir, 'upstream.conf'), db_url), workdir,
            'db', 'sync')
        # --preload: the master writes the standard names once, before
        # the workers start.
        found.append(Restartable(labels.UPSTREAM, upstream.UpstreamServer(
            upstream_venv, db_url, workdir,
            os.path.join(workdir, 'upstream.log'), workers=workers,
            gunicorn_args=args + ['--preload'])))
    return found
