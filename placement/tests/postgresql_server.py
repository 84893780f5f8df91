"""A throwaway PostgreSQL server that a test may stop and start again.

``tools/with-postgresql.sh`` gives a whole test run one server; tests of
database outages need one of their own, on 127.0.0.1, to take away from
the service under test and give back on the same port.
"""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile

import sqlalchemy as sa

from placement.tests import gunicorn_server


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

    def __init__(self):
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
                 '-p %d -h 127.0.0.1 -k %s -F' % (self.port, self.home),
                 'start')

    def stop(self, mode='fast'):
        """Stop the server; ``fast`` ends open sessions, as an operator's
        restart or a failover does."""
        self._pg('pg_ctl', '-D', self.data, '-w', '-m', mode, 'stop')

    def create_database(self, name):
        """Create ``name``; return its SQLAlchemy URL."""
        engine = sa.create_engine(self.admin_url,
                                  isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as conn:
                conn.execute(sa.text('CREATE DATABASE %s' % name))
        finally:
            engine.dispose()
        return self.admin_url.rsplit('/', 1)[0] + '/' + name

    def destroy(self):
        try:
            self.stop(mode='immediate')
        except subprocess.CalledProcessError:
            pass  # Not running.
        shutil.rmtree(self.home, ignore_errors=True)
