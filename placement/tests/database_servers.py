"""Throwaway database servers that a test may stop and start again.

``tools/with-postgresql.sh`` and ``tools/with-mysql.sh`` give a whole
test run one server; tests of database outages need one of their own, on
127.0.0.1, to take away from the service under test and give back on the
same port. Both classes offer ``start``, ``stop``, ``frozen``,
``create_database`` and ``destroy``.
"""

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import sqlalchemy as sa

from placement.tests import child_process
from placement.tests import fixtures
from placement.tests import gunicorn_server


def for_this_pass():
    """The server class matching the test pass's backend (None on SQLite
    or when that kind of server is not installed), so that each server
    pass exercises its own kind."""
    backend = fixtures.backend_name()
    if backend == 'postgresql' and bindir() is not None:
        return PostgreSQLServer
    if backend == 'mysql' and MariaDBServer.installed():
        return MariaDBServer
    return None


def _create_database(admin_url, name):
    engine = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as conn:
            conn.execute(sa.text('CREATE DATABASE %s' % name))
    finally:
        engine.dispose()
    return admin_url.rsplit('/', 1)[0] + '/' + name


@contextlib.contextmanager
def _stopped_processes(parent):
    """Process ``parent`` and its children stopped (SIGSTOP) for the
    block: a server that hangs, as one on a host out of memory or behind
    a lost network does. The kernel still accepts connections to its
    port; nothing answers on them, new or open."""
    pids = [parent]
    try:
        os.kill(parent, signal.SIGSTOP)  # first: it starts no child after
        pids += gunicorn_server.children(parent)
        for pid in pids[1:]:
            _signal(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in pids:
            _signal(pid, signal.SIGCONT)


def _signal(pid, number):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass  # a backend that was ending when it was listed


def _alive(pid):
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def bindir():
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin'),
                   key=lambda path: int(path.split('/')[-2]))
    if found and os.path.exists(os.path.join(found[-1], 'pg_ctl')):
        return found[-1]
    pg_ctl = shutil.which('pg_ctl')
    return os.path.dirname(pg_ctl) if pg_ctl else None


class PostgreSQLServer:
    """initdb'd in a temporary directory; ``start``/``stop``/``destroy``.

    As root, the server runs as the ``postgres`` user (PostgreSQL refuses
    root), which must exist.
    """

    def __init__(self, options=''):
        #: More server options (``-c name=value ...``).
        self.options = options
        self.bindir = bindir()
        if self.bindir is None:
            raise RuntimeError('PostgreSQL is not installed')
        self.home = tempfile.mkdtemp(prefix='placement-pg-')
        self.data = os.path.join(self.home, 'data')
        self.port = gunicorn_server.free_port()
        self._run_as = []
        if os.getuid() == 0:
            user = pwd.getpwnam('postgres')
            os.chown(self.home, user.pw_uid, user.pw_gid)
            self._run_as = ['runuser', '-u', 'postgres', '--']
        self._pg('initdb', '-D', self.data, '-A', 'trust', '-U',
                 'postgres', '-E', 'UTF8', '--no-sync')

    @property
    def admin_url(self):
        return 'postgresql+psycopg2://postgres@127.0.0.1:%d/postgres' % (
            self.port)

    def _pg(self, tool, *args):
        subprocess.run(self._run_as + [os.path.join(self.bindir, tool)]
                       + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)

    def start(self):
        self._pg('pg_ctl', '-D', self.data, '-w', '-l',
                 os.path.join(self.home, 'server.log'), '-o',
                 '-p %d -h 127.0.0.1 -k %s -F %s' % (
                     self.port, self.home, self.options),
                 'start')

    def stop(self, mode='fast'):
        """Stop the server; ``fast`` ends open sessions, as an operator's
        restart or a failover does."""
        self._pg('pg_ctl', '-D', self.data, '-w', '-m', mode, 'stop')

    def _postmaster(self):
        with open(os.path.join(self.data, 'postmaster.pid')) as f:
            return int(f.readline())

    def frozen(self):
        """Context manager: the postmaster and every backend stopped."""
        return _stopped_processes(self._postmaster())

    def kill(self):
        """SIGKILL the postmaster and every backend, as a crash does;
        ``start`` then recovers from the write-ahead log."""
        parent = self._postmaster()
        os.kill(parent, signal.SIGSTOP)  # it starts no child after
        for pid in gunicorn_server.children(parent) + [parent]:
            _signal(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(parent) and time.monotonic() < deadline:
            time.sleep(0.05)
        # pg_ctl's postmaster is no child of ours: it may stay a zombie
        # (when nothing reaps orphans), which PostgreSQL would take for a
        # running server.
        for lock in (os.path.join(self.data, 'postmaster.pid'),
                     os.path.join(self.home, '.s.PGSQL.%d.lock' % self.port)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)

    def create_database(self, name):
        """Create ``name``; return its SQLAlchemy URL."""
        return _create_database(self.admin_url, name)

    def destroy(self):
        try:
            self.stop(mode='immediate')
        except subprocess.CalledProcessError:
            pass  # Not running.
        shutil.rmtree(self.home, ignore_errors=True)


def _program(*names):
    for name in names:
        found = shutil.which(name) or shutil.which(name, path='/usr/sbin')
        if found:
            return found
    return None


class MariaDBServer:
    """mariadb-install-db'd in a temporary directory, as
    ``tools/with-mysql.sh`` runs it: no grant tables, root on loopback."""

    @staticmethod
    def installed():
        return bool(_program('mariadbd', 'mysqld')
                    and _program('mariadb-install-db', 'mysql_install_db'))

    def __init__(self, extra_args=()):
        #: More server options, after (so overriding) the usual ones.
        self.extra_args = list(extra_args)
        self.server = _program('mariadbd', 'mysqld')
        self.home = tempfile.mkdtemp(prefix='placement-mysql-')
        self.data = os.path.join(self.home, 'data')
        self.port = gunicorn_server.free_port()
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self._process = None
        subprocess.run(
            [_program('mariadb-install-db', 'mysql_install_db'),
             '--no-defaults', '--datadir=' + self.data, '--user=' + self.user,
             '--auth-root-authentication-method=normal', '--skip-test-db'],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=120)

    @property
    def admin_url(self):
        return 'mysql+pymysql://root@127.0.0.1:%d/mysql' % self.port

    def start(self, timeout=60):
        with open(os.path.join(self.home, 'server.log'), 'ab') as log:
            self._process = subprocess.Popen(
                [self.server, '--no-defaults', '--datadir=' + self.data,
                 '--user=' + self.user, '--bind-address=127.0.0.1',
                 '--port=%d' % self.port,
                 '--socket=' + os.path.join(self.home, 'mysql.sock'),
                 '--skip-grant-tables', '--skip-name-resolve',
                 '--innodb-flush-log-at-trx-commit=0',
                 '--character-set-server=utf8mb4',
                 '--collation-server=utf8mb4_bin'] + self.extra_args,
                stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=child_process.end_with_parent)
        deadline = time.monotonic() + timeout
        engine = sa.create_engine(self.admin_url)
        try:
            while True:
                try:
                    with engine.connect():
                        return
                except sa.exc.OperationalError:
                    if (time.monotonic() > deadline
                            or self._process.poll() is not None):
                        raise
                    time.sleep(0.2)
        finally:
            engine.dispose()

    def stop(self, timeout=60):
        """Shut down as on SIGTERM: open sessions are ended."""
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def frozen(self):
        """Context manager: the server process stopped."""
        return _stopped_processes(self._process.pid)

    def kill(self):
        """SIGKILL the server, as a crash does."""
        self._process.kill()
        self._process.wait()

    def create_database(self, name):
        """Create ``name``; return its SQLAlchemy URL."""
        return _create_database(self.admin_url, name)

    def destroy(self):
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)
