"""The servers a fault run starts, and the faults each can suffer.

``PostgreSQL``: one server, two API hosts on it. ``MariaDB``: the same
with one MariaDB server. ``Galera``: three MariaDB Galera nodes on
loopback and one API host per node (multi-writer). Each keeps the
commit stream the checker replays (``stream``) and stops, by pid,
everything it started.

Faults (``FAULTS`` per topology):

``kill``     a database server (a Galera node) SIGKILLed, then started
             again after a second or two;
``pause``    a database server (node) SIGSTOPped for 1-4 s, then
             SIGCONTed;
``restart``  PostgreSQL (MariaDB) stopped as an operator does and
             started again;
``isolate``  a Galera node cut from the others for 6-12 s: its group
             communication refuses every peer (``gmcast.isolate``) and
             it goes non-primary, then it rejoins;
``worker``   an API worker SIGKILLed while it serves a request.

On Galera node 1 keeps the binary log the checker reads: it is paused
but never killed or isolated (a killed node's log loses its tail).
"""

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

from placement.tests import child_process
from placement.tests import database_servers
from placement.tests.faults import stream
from placement.tests import gunicorn_server

API_WORKERS = 2
DATABASE = 'faults'


def _busy(pid):
    """Whether a gunicorn sync worker is serving a request (running, or
    waiting on anything but its listening sockets)."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            state = stat.read().rsplit(')', 1)[1].split()[0]
        with open('/proc/%d/wchan' % pid) as wchan:
            waiting = wchan.read()
    except OSError:
        return False
    return state == 'R' or not any(word in waiting for word in (
        'select', 'poll', 'epoll'))


class _Topology:
    FAULTS = ()

    def __init__(self, workdir, environment=None):
        self.workdir = workdir
        self.environment = dict(environment or {})
        self.hosts = []
        self.worker_kills_busy = 0

    @property
    def urls(self):
        return [host.url for host in self.hosts]

    def _start_hosts(self, db_urls):
        for index, url in enumerate(db_urls):
            host = gunicorn_server.GunicornServer(
                url, os.path.join(self.workdir, 'host%d.log' % index),
                workers=API_WORKERS, environment=self.environment)
            host.start()
            self.hosts.append(host)

    def stop_hosts(self):
        for host in self.hosts:
            host.stop()

    def inject(self, kind, rng):
        """Inject one fault of ``kind``; returns what was done."""
        return getattr(self, '_' + kind)(rng)

    def _worker(self, rng):
        host = rng.choice(self.hosts)
        deadline = time.monotonic() + 2
        while True:
            pids = host.worker_pids()
            busy = [pid for pid in pids if _busy(pid)]
            if busy or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        pid = rng.choice(busy or pids)
        os.kill(pid, signal.SIGKILL)
        self.worker_kills_busy += bool(busy)
        return 'worker %d of %s%s' % (pid, host.url,
                                      '' if busy else ' (idle)')


class _Single(_Topology):
    """One database server (``self.server``), two API hosts on it."""

    HOSTS = 2

    def start(self):
        self.server.start()
        self.url = self.server.create_database(DATABASE)
        self._prepare_stream()
        self._start_hosts([self.url] * self.HOSTS)

    def _kill(self, rng):
        self.server.kill()
        time.sleep(rng.uniform(0.5, 2))
        self.server.start()
        return 'database killed and started'

    def _pause(self, rng):
        seconds = rng.uniform(1, 4)
        with self.server.frozen():
            time.sleep(seconds)
        return 'database paused %.1f s' % seconds

    def _restart(self, rng):
        self.server.stop()
        time.sleep(rng.uniform(0.2, 1))
        self.server.start()
        return 'database restarted'

    def final_url(self):
        return self.url

    def stop(self):
        self.stop_hosts()
        self.server.destroy()


class PostgreSQL(_Single):
    FAULTS = ('kill', 'pause', 'restart', 'worker')

    def __init__(self, workdir, environment=None):
        super().__init__(workdir, environment)
        self.server = database_servers.PostgreSQLServer(
            stream.POSTGRESQL_OPTIONS)

    def _prepare_stream(self):
        stream.create_slot(self.url)

    def transactions(self):
        return stream.read_slot(self.url)


#: Durability of each MariaDB server or Galera node: the redo log is
#: written to the operating system at every commit, so that a killed
#: server loses nothing it acknowledged (0 loses up to a second).
INNODB_FLUSH = 2


class MariaDB(_Single):
    FAULTS = ('kill', 'pause', 'restart', 'worker')

    def __init__(self, workdir, environment=None, innodb_flush=INNODB_FLUSH):
        super().__init__(workdir, environment)
        self.server = database_servers.MariaDBServer(
            stream.binlog_args(workdir) + [
                '--innodb-flush-log-at-trx-commit=%d' % innodb_flush])

    def _prepare_stream(self):
        self.url += '?charset=utf8mb4'

    def transactions(self):
        return stream.read_binlog(self.workdir, self.url)


class GaleraNode:
    """One node of a loopback Galera cluster, started and stopped by
    pid."""

    def __init__(self, cluster, number):
        self.cluster = cluster
        self.number = number
        self.ports = [gunicorn_server.free_port() for _ in range(4)]
        self.data = os.path.join(cluster.home, 'node%d' % number)
        self.process = None

    @property
    def url(self):
        return 'mysql+pymysql://root@127.0.0.1:%d' % self.ports[0]

    def args(self, peers, bootstrap):
        sql, gcomm, ist, sst = self.ports
        user = self.cluster.user
        args = [
            self.cluster.server, '--no-defaults', '--datadir=' + self.data,
            '--user=' + user, '--bind-address=127.0.0.1',
            '--port=%d' % sql, '--socket=%s.sock' % self.data,
            # Grant tables kept: see tools/with-galera.sh (triggers).
            '--pid-file=%s.pid' % self.data, '--skip-name-resolve',
            '--innodb-flush-log-at-trx-commit=%d' % INNODB_FLUSH,
            '--innodb-doublewrite=0', '--max-connections=300',
            '--character-set-server=utf8mb4',
            '--collation-server=utf8mb4_bin', '--binlog-format=ROW',
            '--default-storage-engine=InnoDB',
            '--innodb-autoinc-lock-mode=2', '--wsrep-on=ON',
            '--wsrep-provider=' + self.cluster.provider,
            '--wsrep-cluster-name=placement-faults',
            '--wsrep-cluster-address=gcomm://' + ','.join(
                '127.0.0.1:%d' % p for p in peers),
            '--wsrep-node-name=node%d' % self.number,
            '--wsrep-node-address=127.0.0.1:%d' % gcomm,
            '--wsrep-node-incoming-address=127.0.0.1:%d' % sql,
            '--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:%d;'
            'ist.recv_addr=127.0.0.1:%d;gcache.size=256M' % (gcomm, ist),
            '--wsrep-sst-method=rsync',
            '--wsrep-sst-receive-address=127.0.0.1:%d' % sst]
        if self.number == 1:
            args += stream.binlog_args(self.cluster.home)
        if bootstrap:
            args.append('--wsrep-new-cluster')
        return args

    def start(self, bootstrap=False, timeout=180):
        os.makedirs(self.data, exist_ok=True)
        shutil.chown(self.data, self.cluster.user)
        with open(self.data + '.log', 'ab') as log:
            self.process = subprocess.Popen(
                self.args(self.cluster.gcomm_ports(), bootstrap),
                stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=child_process.end_with_parent)
        self.wait_synced(timeout)

    def _admin(self, statement):
        """Run ``statement`` on this node; the first row. A plain driver
        connection: a non-primary node refuses the queries an SQLAlchemy
        engine sends when it connects (``1047 WSREP has not yet
        prepared node``), only SHOW and SET run there."""
        # Imported here, as in the other Galera methods: the installed
        # package (without the mysql extra) imports this module too.
        import pymysql
        conn = pymysql.connect(host='127.0.0.1', port=self.ports[0],
                               user='root', connect_timeout=3,
                               read_timeout=10, write_timeout=10,
                               autocommit=True)
        try:
            with conn.cursor() as cursor:
                cursor.execute(statement)
                return cursor.fetchone()
        finally:
            conn.close()

    def status(self, name):
        row = self._admin("SHOW STATUS LIKE '%s'" % name)
        return row and row[1]

    def wait_synced(self, timeout=180):
        import pymysql
        deadline = time.monotonic() + timeout
        while True:
            try:
                if (self.status('wsrep_local_state_comment') == 'Synced'
                        and self.status('wsrep_cluster_status')
                        == 'Primary'):
                    return
            except pymysql.MySQLError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError('galera node %d exited: see %s.log'
                                   % (self.number, self.data))
            if time.monotonic() > deadline:
                raise RuntimeError('galera node %d not Synced in %d s'
                                   % (self.number, timeout))
            time.sleep(0.3)

    def set_isolated(self, isolated):
        self._admin("SET GLOBAL wsrep_provider_options='gmcast.isolate=%d'"
                    % int(isolated))

    def kill(self):
        self.process.kill()
        self.process.wait()

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            gunicorn_server.terminate(self.process, 60)


class Galera(_Topology):
    """Three nodes, one API host on each."""

    FAULTS = ('kill', 'pause', 'isolate', 'worker')

    def __init__(self, workdir, environment=None):
        super().__init__(workdir, environment)
        self.server = database_servers._program('mariadbd', 'mysqld')
        self.installer = database_servers._program('mariadb-install-db',
                                                   'mysql_install_db')
        self.provider = os.environ.get('GALERA_PROVIDER',
                                       '/usr/lib/galera/libgalera_smm.so')
        # Not under ``workdir``: the nodes' user must reach it.
        self.home = tempfile.mkdtemp(prefix='placement-galera-')
        self.user = pwd.getpwuid(os.getuid()).pw_name
        if self.user == 'root':
            # rsync state transfer started as root writes as "nobody".
            self.user = 'mysql'
            shutil.chown(self.home, self.user)
        self.nodes = [GaleraNode(self, n) for n in (1, 2, 3)]

    @staticmethod
    def installed():
        return (database_servers.MariaDBServer.installed()
                and os.path.exists(os.environ.get(
                    'GALERA_PROVIDER', '/usr/lib/galera/libgalera_smm.so'))
                and shutil.which('rsync') is not None)

    def gcomm_ports(self):
        return [node.ports[1] for node in self.nodes]

    def start(self):
        first = self.nodes[0]
        subprocess.run(
            [self.installer, '--no-defaults', '--datadir=' + first.data,
             '--user=' + self.user, '--auth-root-authentication-method=normal',
             '--skip-test-db'], check=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=120)
        first.start(bootstrap=True)
        for node in self.nodes[1:]:
            node.start()
        database_servers._create_database(first.url + '/mysql', DATABASE)
        self.url = first.url + '/%s?charset=utf8mb4' % DATABASE
        # One host at a time: the first creates the schema.
        self._start_hosts([node.url + '/%s?charset=utf8mb4' % DATABASE
                           for node in self.nodes])

    def _target(self, rng, observer_too=False):
        return rng.choice(self.nodes if observer_too else self.nodes[1:])

    def _kill(self, rng):
        node = self._target(rng)
        node.kill()
        time.sleep(rng.uniform(0.5, 2))
        node.start()
        return 'node %d killed and started' % node.number

    def _pause(self, rng):
        node = self._target(rng, observer_too=True)
        seconds = rng.uniform(1, 4)
        with database_servers._stopped_processes(node.process.pid):
            time.sleep(seconds)
        node.wait_synced()
        return 'node %d paused %.1f s' % (node.number, seconds)

    def _isolate(self, rng):
        import pymysql
        node = self._target(rng)
        seconds = rng.uniform(6, 12)
        node.set_isolated(True)
        cut = False
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if not cut:
                    with contextlib.suppress(pymysql.MySQLError):
                        cut = node.status(
                            'wsrep_cluster_status') != 'Primary'
                time.sleep(0.2)
        finally:
            node.set_isolated(False)
        node.wait_synced()
        return 'node %d isolated %.1f s (%s)' % (
            node.number, seconds,
            'went non-Primary' if cut else 'stayed Primary')

    def transactions(self):
        return stream.read_binlog(self.home, self.url)

    def final_url(self):
        return self.url

    def stop(self):
        self.stop_hosts()
        for node in self.nodes:
            node.stop()
            with contextlib.suppress(OSError):
                shutil.copy(node.data + '.log', self.workdir)
        shutil.rmtree(self.home, ignore_errors=True)


TOPOLOGIES = {'postgresql': PostgreSQL, 'mariadb': MariaDB,
              'galera': Galera}


def make(name, workdir, environment=None, **options):
    """The topology ``name``; ``options`` go to its constructor
    (``innodb_flush`` for ``mariadb``)."""
    return TOPOLOGIES[name](workdir, environment, **options)
