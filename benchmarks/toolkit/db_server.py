"""The database server two benchmarked services share, read from outside.

What one API host costs the database every host shares: the CPU time of
the server's processes (all PostgreSQL backends, or ``mariadbd`` and its
threads, from ``/proc``), the statements it ran by kind, and how much
room each service's database takes. Sides of a side-by-side run use
databases of their own on one server and are measured one at a time,
so a difference over one side's step is that side's.

Statements are counted where they are real and cheap:

- PostgreSQL: ``pg_stat_statements`` (calls per database), when the
  server preloads it (``tools/with-postgresql.sh`` does with
  ``PLACEMENT_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements"``);
  otherwise not counted.
- MariaDB (and each Galera node): the server's ``Com_*`` counters and
  ``Questions``, which count every database on the server.

A Galera cluster is read on all its nodes (``PLACEMENT_TEST_GALERA_URLS``,
``tools/with-galera.sh``): CPU and statements are the sums, sizes node 1's.
"""

import collections
import os

import sqlalchemy as sa

from benchmarks.toolkit import proc_cpu
from placement.tests import haproxy

#: Statement kinds reported, in order; anything else is "other".
KINDS = ('select', 'insert', 'update', 'delete', 'begin', 'commit',
         'rollback', 'other')
#: The key of a count that holds the statements clients sent: on
#: MariaDB the kinds also count statements that triggers run.
TOTAL = 'total'

GALERA_ENV = 'PLACEMENT_TEST_GALERA_URLS'
#: Calls per first word of the statement in one database. A statement
#: prepared on the server is counted by its PREPARE text: its kind is
#: the word after AS.
_PG_KINDS = r"""
SELECT substring(regexp_replace(lower(s.query),
                                '^\s*prepare\s+\S+(\s*\([^)]*\))?\s+as\s+', '')
                 from '^\s*([a-z]+)'),
       sum(s.calls)
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = :db GROUP BY 1
"""
URL_ENV = 'PLACEMENT_TEST_DB_URL'


def from_environment():
    """The server of ``tools/with-*.sh`` (all Galera nodes), or None."""
    galera = os.environ.get(GALERA_ENV, '').split()
    urls = galera or [u for u in [os.environ.get(URL_ENV)] if u]
    return DatabaseServer(urls) if urls else None


class DatabaseServer:
    """One database server, or the nodes of one cluster."""

    def __init__(self, urls):
        self.urls = [sa.engine.make_url(u) for u in urls]
        self.backend = self.urls[0].get_backend_name()
        self.pids = [proc_cpu.listener_pid(u.port) for u in self.urls]
        admin_db = 'postgres' if self.backend == 'postgresql' else None
        self._admins = [sa.create_engine(u.set(database=admin_db),
                                         isolation_level='AUTOCOMMIT',
                                         poolclass=sa.pool.StaticPool)
                        for u in self.urls]
        self._pg_statements = None

    def close(self):
        for engine in self._admins:
            engine.dispose()

    def describe(self):
        return '%s, %d node(s), pids %s' % (
            self.backend, len(self.urls),
            ','.join(str(p) for p in self.pids))

    # -- CPU ---------------------------------------------------------------

    def cpu_seconds(self):
        """CPU seconds of every node's processes (reaped ones too), or
        None when a node's process is not found."""
        if None in self.pids:
            return None
        seconds = [proc_cpu.tree_seconds(pid) for pid in self.pids]
        return None if None in seconds else sum(seconds)

    def exact_cpu_seconds(self):
        """Like ``cpu_seconds`` to the nanosecond, but of live processes
        and threads only: for short sequential probes on pooled
        connections."""
        if None in self.pids:
            return None
        seconds = [proc_cpu.tree_exact_seconds(pid) for pid in self.pids]
        return None if None in seconds else sum(seconds)

    # -- statements ----------------------------------------------------------

    def statements(self, database):
        """Counter {kind: statements run so far} (``KINDS`` and
        ``TOTAL``), of
        ``database`` on PostgreSQL and of the whole server on MariaDB;
        None when they are not counted here."""
        if self.backend == 'postgresql':
            return self._pg_count(database)
        if self.backend == 'mysql':
            return self._mysql_count()
        return None

    def _pg_count(self, database):
        with self._admins[0].connect() as conn:
            if self._pg_statements is None:
                try:
                    conn.execute(sa.text(
                        'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'))
                    conn.execute(sa.text(
                        'SELECT 1 FROM pg_stat_statements LIMIT 1'))
                    self._pg_statements = True
                except sa.exc.DBAPIError:
                    # Not preloaded by the server.
                    self._pg_statements = False
            if not self._pg_statements:
                return None
            rows = conn.execute(sa.text(_PG_KINDS), {'db': database})
            counts = collections.Counter()
            for verb, calls in rows:
                # "start transaction" is psycopg2's spelling of BEGIN
                # on some versions.
                verb = 'begin' if verb == 'start' else verb
                counts[verb if verb in KINDS else 'other'] += int(calls)
            counts[TOTAL] = sum(counts.values())
            return counts

    def _mysql_count(self):
        counts = collections.Counter()
        for engine in self._admins:
            with engine.connect() as conn:
                status = dict(conn.execute(sa.text(
                    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions',"
                    "'Com_select','Com_insert','Com_update','Com_delete',"
                    "'Com_begin','Com_commit','Com_rollback',"
                    "'Com_insert_select','Com_delete_multi',"
                    "'Com_update_multi','Com_replace')")).all())
            for kind in KINDS[:-1]:
                counts[kind] += int(status.get('Com_' + kind, 0)) + sum(
                    int(status.get('Com_%s%s' % (kind, extra), 0))
                    for extra in ('_select', '_multi'))
            # The SHOW STATUS itself is a question: not counted. No
            # "other": the kinds count statements of triggers too.
            counts[TOTAL] += int(status['Questions']) - 1
        return counts

    # -- size -------------------------------------------------------------

    def table_sizes(self, database):
        """{table: bytes of its rows and indexes} of ``database``
        (PostgreSQL: ``pg_total_relation_size``; MariaDB: InnoDB's data
        and index length after ``ANALYZE TABLE``)."""
        url = self.urls[0].set(database=database)
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                if self.backend == 'postgresql':
                    rows = conn.execute(sa.text(
                        "SELECT c.relname, pg_total_relation_size(c.oid) "
                        "FROM pg_class c JOIN pg_namespace n "
                        "ON n.oid = c.relnamespace WHERE "
                        "n.nspname = 'public' AND c.relkind = 'r'"))
                    return {name: int(size) for name, size in rows}
                names = [name for (name,) in conn.execute(sa.text(
                    'SELECT table_name FROM information_schema.tables '
                    'WHERE table_schema = :db'), {'db': database})]
                for name in names:
                    conn.execute(sa.text('ANALYZE TABLE `%s`' % name)).all()
                rows = conn.execute(sa.text(
                    'SELECT table_name, data_length + index_length '
                    'FROM information_schema.tables '
                    'WHERE table_schema = :db'), {'db': database})
                return {name: int(size or 0) for name, size in rows}
        finally:
            engine.dispose()


    def relation_lines(self, database):
        """Lines describing every table of ``database``: its rows, its
        indexes and, on PostgreSQL, its live and dead rows (what a
        size is made of; PostgreSQL keeps the pages of deleted rows,
        reusable after VACUUM; InnoDB's ``data_free`` is room inside
        the table's pages)."""
        url = self.urls[0].set(database=database)
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                if self.backend == 'postgresql':
                    rows = conn.execute(sa.text(_PG_RELATIONS)).all()
                    head = 'table: MB rows+toast / indexes; live, dead rows'
                    return [head] + [
                        '  %-30s %6.2f / %5.2f; %d live, %d dead (%s)' % (
                            name, table / 1e6, indexes / 1e6, live, dead,
                            ', '.join('%s %.2f' % (index, int(size) / 1e6)
                                      for index, size in each or ()))
                        for name, table, indexes, live, dead, each in rows]
                rows = conn.execute(sa.text(
                    'SELECT table_name, data_length, index_length, '
                    'data_free, table_rows FROM information_schema.tables '
                    'WHERE table_schema = :db ORDER BY data_length '
                    '+ index_length DESC'), {'db': database}).all()
                head = 'table: MB rows / indexes / free; rows (estimate)'
                return [head] + [
                    '  %-30s %6.2f / %5.2f / %5.2f; %d' % (
                        name, (data or 0) / 1e6, (index or 0) / 1e6,
                        (free or 0) / 1e6, count or 0)
                    for name, data, index, free, count in rows]
        finally:
            engine.dispose()


_PG_RELATIONS = """
SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid),
       coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0),
       (SELECT array_agg(ARRAY[i.relname, pg_relation_size(i.oid)::text]
                         ORDER BY i.relname)
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE n.nspname = 'public' AND c.relkind = 'r'
ORDER BY pg_total_relation_size(c.oid) DESC
"""


def database_name(url):
    """The database a service's URL names."""
    return sa.engine.make_url(url).database


def per_request(counts, requests):
    """{kind: statements per request} of a Counter difference."""
    if counts is None or not requests:
        return None
    return {kind: counts.get(kind, 0) / requests for kind in KINDS + (TOTAL,)}


def difference(after, before):
    if after is None or before is None:
        return None
    return collections.Counter({k: after.get(k, 0) - before.get(k, 0)
                                for k in set(after) | set(before)})


def statements_text(per):
    """'12.0 (select 8.0, begin 1.0, ...)' of ``per_request``."""
    if per is None:
        return '-'
    total = per[TOTAL]
    parts = ['%s %.1f' % (k, per[k]) for k in KINDS if per.get(k)]
    return '%.1f (%s)' % (total, ', '.join(parts))


def size_text(sizes, top=4):
    """'3.1 MB (allocations 1.0, ...)' of ``table_sizes``."""
    if not sizes:
        return '-'
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:top]
    return '%.2f MB (%s)' % (sum(sizes.values()) / 1e6, ', '.join(
        '%s %.2f' % (name, size / 1e6) for name, size in largest))


_TCP_CONFIG = '''\
global
    maxconn 2000

defaults
    mode tcp
    timeout connect 5s
    timeout client 600s
    timeout server 600s

frontend database
    bind 127.0.0.1:%(port)d
    default_backend nodes

backend nodes
    balance roundrobin
%(servers)s
'''


class RoundRobin(haproxy.HAProxy):
    """HAProxy in TCP mode giving each new database connection to the
    next node of a cluster in turn: every service's pooled connections,
    and so its writes, spread over all nodes."""

    def __init__(self, node_urls, directory):
        urls = [sa.engine.make_url(u) for u in node_urls]
        super().__init__(['http://%s:%d' % (u.host, u.port) for u in urls],
                         directory)
        self.db_url = urls[0].set(port=self.port).render_as_string(
            hide_password=False)

    def _config(self):
        servers = '\n'.join(
            '    server node%d %s check inter 2s' % (
                index, url.split('://', 1)[1])
            for index, url in enumerate(self.backends))
        return _TCP_CONFIG % {'port': self.port, 'servers': servers}

    def _answers(self):
        engine = sa.create_engine(self.db_url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text('SELECT 1'))
            return True
        except sa.exc.DBAPIError:
            return False
        finally:
            engine.dispose()
