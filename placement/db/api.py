"""Engine creation and the transaction decorators every object uses.

Object functions take the request context first and are decorated with
``@reader`` or ``@writer``. The decorator opens one transaction, exposes
its connection as ``ctx.conn`` for the duration of the call, commits on
success and rolls back on any exception. Nested decorated calls join the
outer transaction, so a composite operation stays atomic.

A writer transaction that fails because of a deadlock, a lock timeout, a
serialization failure or a dropped connection is re-run from the start,
COMMIT included (the function must therefore be free of side effects
outside the database); a reader is re-run only after a dropped connection
(a pooled connection the server closed while it was down).

Two budgets bound the re-runs. A lost conflict with another transaction
(deadlock, serialization failure, lock timeout, or a Galera certification
failure, which MariaDB reports as a deadlock at COMMIT) is re-run up to
``MAX_CONFLICT_RETRIES`` times within ``CONFLICT_RETRY_WINDOW`` seconds,
after an exponentially growing, fully jittered pause, so that writers
that collided do not collide again in step; if it still loses, it leaves
the decorator as ``exception.TransactionConflict`` (409
``placement.concurrent_update``: nothing was written). A dropped
connection is re-run up to ``MAX_RETRIES`` times within ``RETRY_WINDOW``
seconds, so that a dead database cannot hold a request. A failure that
means the database cannot be used right now (it is down, unreachable,
shutting down, or the pool has no connection to give) then leaves the
decorator as ``exception.DatabaseUnavailable``, which the API answers
with 503. See api-ref/behaviour-choices.rst, 'Write conflicts'.

SQLite writers start with ``BEGIN IMMEDIATE`` so that they take the write
lock before reading and wait on the busy timeout behind other writers,
instead of failing when a read lock cannot be upgraded.

Writers need not say which providers they changed: database triggers log
every change in the writing transaction (``placement.db.changes``).

MariaDB can fail those triggers without anything being wrong with them
(``is_broken_trigger``): the failing connection is discarded, the node
is asked to reopen the tables (``Database.reload_triggered_tables``) and
the transaction re-runs on a fresh connection, within the dropped-
connection budget.
"""

import datetime
import functools
import logging
import os
import random
import threading
import time
import weakref

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy import pool as sa_pool

from placement.db import connections
from placement.db import failures
from placement.db import green
from placement.db import prepared
from placement.db import triggers
from placement import exception
from placement.observability import metrics

LOG = logging.getLogger(__name__)

#: Re-runs of a transaction after a dropped connection.
MAX_RETRIES = 5
#: Seconds after the first attempt past which a transaction is not re-run
#: after a dropped connection.
RETRY_WINDOW = 3.0
#: Re-runs of a writer that lost a conflict with another transaction: on
#: a multi-writer Galera cluster, clients writing allocations of a few
#: providers through every node lose some writes several times in a row.
MAX_CONFLICT_RETRIES = 30
#: Seconds after the first attempt past which a lost conflict is not
#: re-run.
CONFLICT_RETRY_WINDOW = 20.0
#: The n-th re-run after a conflict waits a random time between 0 and
#: min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (n - 1)) seconds ("full jitter").
BACKOFF_BASE = 0.01
BACKOFF_CAP = 0.5
#: Seconds a new server connection may take before it counts as failed,
#: unless the connection URL sets ``connect_timeout`` itself.
CONNECT_TIMEOUT = 5
#: Seconds a flush of the triggered tables waits for the transactions
#: using them (``Database.reload_triggered_tables``).
RELOAD_LOCK_WAIT = 2
#: Seconds between two warnings that the tables were reopened.
RELOAD_LOG_INTERVAL = 60.0
#: Seconds an SQLite connection waits for a lock before giving up.
SQLITE_BUSY_TIMEOUT = 60
#: Seconds a thread keeps its reader connection between two reads
#: (``Database.transaction``) before giving it back to the pool.
KEEP_READER_SECONDS = 1.0


#: Whose kept reader connection is whose: the system's thread. Under
#: gevent or eventlet (a gunicorn gevent worker serves each open
#: connection in a green thread of its own) ``threading.get_ident``
#: names the green thread, and a connection kept by each of them would
#: fill the pool while they wait for their clients. Neither patches the
#: native id. Green threads of one system thread share its kept
#: connection: one that reads while another holds it (eventlet's green
#: psycopg2 waits, a listing streamed to its client) takes another from
#: the pool, given back when it ends if one is kept already. Named, not
#: wrapped: it is called twice per read.
_thread_id = threading.get_native_id


def utcnow():
    """Naive UTC timestamp, as stored in created_at/updated_at."""
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None, microsecond=0)


class Database:
    """One engine per process, created from configuration."""

    def __init__(self, url, sqlite_synchronous=True, mysql_sql_mode=None,
                 mysql_wsrep_sync_wait=None, pool_size=None,
                 max_overflow=None, pool_timeout=None, pool_recycle=3600,
                 echo=False, postgresql_prepared_statements=True):
        self.url = sa.engine.make_url(url)
        self.dialect = self.url.get_backend_name()
        kwargs = {'future': True, 'pool_pre_ping': False,
                  'pool_recycle': pool_recycle}
        if echo:
            kwargs['echo'] = True
        # An in-memory SQLite database lives only as long as a connection
        # to it: keep one, shared by every thread, one transaction at a
        # time.
        self.in_memory = self.dialect == 'sqlite' and (
            self.url.database in (None, '', ':memory:')
            or self.url.query.get('mode') == 'memory')
        self._serial = threading.RLock() if self.in_memory else None
        self._reload_refused = False
        self._reload_logged_at = -RELOAD_LOG_INTERVAL
        if self.dialect == 'sqlite':
            kwargs['connect_args'] = {'timeout': SQLITE_BUSY_TIMEOUT,
                                      'check_same_thread': False}
            if self.in_memory:
                kwargs['poolclass'] = sa_pool.StaticPool
        else:
            if 'connect_timeout' not in self.url.query:
                kwargs['connect_args'] = {'connect_timeout': CONNECT_TIMEOUT}
            for name, value in (('pool_size', pool_size),
                                ('max_overflow', max_overflow),
                                ('pool_timeout', pool_timeout)):
                if value is not None:
                    kwargs[name] = value
        # The PostgreSQL driver the whole suite runs on (see setup.cfg);
        # with another one, readers keep their transaction.
        self.psycopg2 = (self.dialect == 'postgresql'
                         and self.url.get_driver_name() == 'psycopg2')
        if self.psycopg2:
            # An UPDATE or DELETE run with many parameter sets is sent in
            # pages (psycopg2's execute_batch), not one round trip per
            # row; their rowcount is then unknown, which nothing reads.
            kwargs['executemany_mode'] = 'values_plus_batch'
        # Our PyMySQL connections (placement.db.pymysql_connection): in
        # autocommit mode, readers without BEGIN and COMMIT.
        self.pymysql = (self.dialect == 'mysql'
                        and self.url.get_driver_name() == 'pymysql')
        if self.dialect == 'mysql':
            kwargs['isolation_level'] = 'READ COMMITTED'
            if not self.url.query.get('charset'):
                self.url = self.url.update_query_dict({'charset': 'utf8mb4'})
        # On MySQL/MariaDB the pool's rollback of a returned connection
        # is a round trip; connections.reset_on_return leaves out the
        # needless ones.
        self.marks_ended = self.dialect == 'mysql'
        if self.marks_ended:
            kwargs['pool_reset_on_return'] = None
        self.engine = sa.create_engine(self.url, **kwargs)
        if self.psycopg2:
            event.listen(self.engine, 'do_connect', green.follow_gevent)
        if self.psycopg2 and postgresql_prepared_statements:
            # See placement.db.prepared.
            event.listen(self.engine, 'connect', prepared.serve_prepared)
        if self.marks_ended:
            event.listen(self.engine, 'reset', connections.reset_on_return)
        #: Whether a reader's driver connection needs no transaction
        #: (``connections.ReaderConnection.begin``), if that can be.
        self.reads_alone = None
        if self.pymysql:
            from placement.db import pymysql_connection
            event.listen(self.engine, 'do_connect',
                         pymysql_connection.connect)
            self.reads_alone = pymysql_connection.reads_alone
        # SQLite, psycopg2 and MySQL readers run on the pooled driver
        # connection until they need more (ReaderConnection);
        # SQLAlchemy's statement log (echo) needs its Connection
        # throughout.
        self.light_reads = (self.dialect in ('sqlite', 'mysql')
                            or self.psycopg2) and not echo
        # A light reader's connection, kept by its thread for the next
        # read (see ``transaction``): {``_thread_id()``: (pooled
        # connection, monotonic time it was kept)}. Not with a single
        # connection.
        self.keeps_readers = self.light_reads and not self.in_memory
        self._kept = {}
        self._swept = time.monotonic()
        if self.dialect == 'sqlite':
            self._configure_sqlite(sqlite_synchronous)
        elif self.dialect == 'mysql':
            self._configure_mysql(mysql_sql_mode, mysql_wsrep_sync_wait)
        # A forked worker must not reuse its parent's pooled connections.
        # The hook holds the database weakly: a process that makes many
        # (a test runner) must be able to free them.
        if hasattr(os, 'register_at_fork'):
            os.register_at_fork(after_in_child=functools.partial(
                _forget_parent_connections, weakref.ref(self)))

    def _configure_sqlite(self, synchronous):
        memory = self.in_memory

        @event.listens_for(self.engine, 'connect')
        def _on_connect(dbapi_conn, _record):
            # Let SQLAlchemy, not the driver, decide when a transaction
            # starts, so that writers can use BEGIN IMMEDIATE.
            dbapi_conn.isolation_level = None
            cursor = dbapi_conn.cursor()
            if not memory:
                cursor.execute('PRAGMA journal_mode=WAL')
            cursor.execute('PRAGMA synchronous=%s'
                           % ('FULL' if synchronous else 'NORMAL'))
            cursor.execute('PRAGMA foreign_keys=ON')
            cursor.execute('PRAGMA busy_timeout=%d'
                           % (SQLITE_BUSY_TIMEOUT * 1000))
            cursor.close()

        @event.listens_for(self.engine, 'begin')
        def _on_begin(conn):
            # On the driver's cursor: every request begins a transaction.
            if conn.get_execution_options().get('placement_writer'):
                prepared.execute(conn, 'BEGIN IMMEDIATE')
            elif not conn.connection.info.pop(connections.BEGUN, False):
                prepared.execute(conn, 'BEGIN')

    def _configure_mysql(self, sql_mode, wsrep_sync_wait):
        modes = [m for m in (sql_mode or '').split(',') if m]
        # Standard resource class VCPU has id 0.
        modes.append('NO_AUTO_VALUE_ON_ZERO')

        autocommit = self.pymysql

        @event.listens_for(self.engine, 'connect')
        def _on_connect(dbapi_conn, _record):
            if autocommit:
                # After the dialect set the isolation level (see
                # placement.db.pymysql_connection).
                dbapi_conn.autocommit(True)
            cursor = dbapi_conn.cursor()
            cursor.execute("SET SESSION sql_mode = %s", (','.join(modes),))
            if wsrep_sync_wait is not None:
                # Only a Galera node has (and needs) the setting; MySQL
                # has no such variable, MariaDB off a cluster ignores it.
                cursor.execute("SHOW VARIABLES LIKE 'wsrep_on'")
                if [row[1] for row in cursor.fetchall()] == ['ON']:
                    cursor.execute('SET SESSION wsrep_sync_wait = %s',
                                   (wsrep_sync_wait,))
            cursor.close()

        if autocommit:
            from placement.db import pymysql_connection

            @event.listens_for(self.engine, 'begin')
            def _on_begin(conn):
                # Not for a reader's Connection (ReaderConnection.full).
                if not conn.connection.info.pop(connections.BEGUN, False):
                    pymysql_connection.begin(conn, _fail_begin)

        @event.listens_for(self.engine, 'handle_error')
        def _on_error(context):
            if failures.is_broken_trigger(context.original_exception):
                # Treated as a lost connection: this one is closed (its
                # transaction rolled back) and the transaction re-run.
                context.is_disconnect = True
                context.invalidate_pool_on_disconnect = False

    def reload_triggered_tables(self):
        """Have the server reopen the tables that carry our triggers,
        dropping the cached instances whose triggers it failed to load
        (see ``is_broken_trigger``); True if it did. ``LOCAL``: on a
        Galera cluster only the node that cached them. The flush waits
        for transactions using the tables, and new statements on them
        wait behind it: ``RELOAD_LOCK_WAIT`` bounds that. It needs the
        RELOAD privilege; without it a warning, once per process, says
        what to run instead, and re-runs still succeed whenever they are
        handed a sound instance.
        """
        statement = 'FLUSH LOCAL TABLES ' + ', '.join(
            '`%s`' % name for name in triggers.TRIGGERED)
        try:
            with self.engine.connect() as conn:
                conn.exec_driver_sql('SET SESSION lock_wait_timeout = %d'
                                     % RELOAD_LOCK_WAIT)
                try:
                    conn.exec_driver_sql(statement)
                finally:
                    conn.exec_driver_sql(
                        'SET SESSION lock_wait_timeout = DEFAULT')
        except (sa_exc.DBAPIError, sa_exc.TimeoutError) as exc:
            if not self._reload_refused:
                self._reload_refused = True
                LOG.warning(
                    'The database server failed to load a trigger of a '
                    'table it had cached (the statement loading it was '
                    'killed); writes re-run but may keep meeting it. '
                    'Could not make it reopen the tables (%s): run "%s" '
                    'on the server, or grant this service\'s database '
                    'user the RELOAD privilege.',
                    failures.describe_failure(exc), statement)
            return False
        now = time.monotonic()
        if now - self._reload_logged_at >= RELOAD_LOG_INTERVAL:
            self._reload_logged_at = now
            LOG.warning('The database server failed to load a trigger of '
                        'a table it had cached (the statement loading it '
                        'was killed); it has reopened the tables.')
        return True

    def transaction(self, write):
        """A connection inside a transaction, committed on success (a
        context manager).

        On PostgreSQL and on MariaDB/MySQL through PyMySQL a reader
        runs in autocommit mode instead: under READ COMMITTED every
        statement takes its own snapshot, inside a transaction or not,
        so BEGIN and COMMIT would only add round trips to every read
        (see api-ref/behaviour-choices.rst, 'Reads on PostgreSQL' and
        'Reads on MariaDB and MySQL'). Writers there send BEGIN.

        A reader's connection (SQLite files, psycopg2) is kept by its
        thread for its next read, rather than given back to the pool and
        taken again: that round is a sizeable share of a small read's CPU
        on PostgreSQL. A connection
        kept more than ``KEEP_READER_SECONDS`` goes back to the pool at
        the thread's next read (so the pool's checks, recycling and the
        replacement of connections older than a lost server, still run
        at least that often), as it does before the thread's next writer
        and after a failed read; the ``in_use`` connections metric does
        not count it.
        """
        if self.light_reads and not write:
            return connections.LightRead(self)
        if self._kept:
            # The thread's connections in use stay one at a time.
            self._give_back_kept(_thread_id())
        return connections.Transaction(self, write)

    def _take_kept(self):
        """The connection this thread kept from its last read, or None
        (then a reader takes one from the pool)."""
        kept = self._kept.pop(_thread_id(), None)
        if kept is None:
            return None
        fairy, since = kept
        if (time.monotonic() - since > KEEP_READER_SECONDS
                or not fairy.is_valid):
            fairy.close()  # back to the pool
            return None
        metrics.connection_lent(fairy.info)
        return fairy

    def _keep(self, fairy):
        """Keep the connection of a read that ended well for this
        thread's next read."""
        metrics.connection_kept(fairy.info)
        now = time.monotonic()
        if self._kept.setdefault(_thread_id(), (fairy, now))[0] is not fairy:
            # Another green thread of this thread kept one meanwhile.
            fairy.close()
        if now - self._swept > KEEP_READER_SECONDS:
            self._swept = now
            self._sweep(now)

    def _sweep(self, now):
        """Give back what threads that stopped reading (or ended) keep.

        Whoever pops a kept connection owns it: its thread, which then
        takes another from the pool, or this sweep."""
        for thread, (_fairy, since) in list(self._kept.items()):
            if now - since <= KEEP_READER_SECONDS:
                continue
            kept = self._kept.pop(thread, None)
            if kept is None:
                continue
            if (now - kept[1] > KEEP_READER_SECONDS
                    or self._kept.setdefault(thread, kept) is not kept):
                kept[0].close()

    def _give_back_kept(self, thread):
        """Return ``thread``'s kept connection to the pool. A kept
        connection is out of the ``in_use`` count already, so the pool's
        checkin changes no gauge."""
        kept = self._kept.pop(thread, None)
        if kept is not None:
            kept[0].close()

    def ping(self):
        """Ask the server a trivial question; DatabaseUnavailable if it
        cannot answer. A pooled connection the server dropped is replaced
        once, as a request's reader would."""
        for attempt in (1, 2):
            try:
                with self.engine.connect() as conn:
                    conn.exec_driver_sql('SELECT 1')
                return
            except (sa_exc.DBAPIError, sa_exc.TimeoutError) as exc:
                if attempt == 1 and getattr(exc, 'connection_invalidated',
                                            False):
                    continue
                if failures.is_unavailable(exc):
                    raise exception.DatabaseUnavailable(
                        reason=failures.describe_failure(exc)) from exc
                raise

    def dispose(self):
        for thread in list(self._kept):
            self._give_back_kept(thread)
        self.engine.dispose()


#: Reader connections kept by a parent process's threads when it forked:
#: held here, never used nor closed (their sockets are the parent's).
_INHERITED = []


def _forget_parent_connections(ref):
    db = ref()
    if db is not None:
        _INHERITED.extend(fairy for fairy, _since in db._kept.values())
        db._kept.clear()
        db.engine.dispose(close=False)


def _fail_begin(conn, exc):
    prepared.fail(conn, exc, 'BEGIN', (), None)


def backoff(attempt):
    """Seconds to wait before re-run number ``attempt`` (from 1) after a
    conflict: exponential, capped, fully jittered."""
    return random.uniform(
        0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)))


def _should_rerun(exc, write, attempt, started):
    elapsed = time.monotonic() - started
    if write and failures.is_conflict(exc):
        return (attempt < MAX_CONFLICT_RETRIES
                and elapsed < CONFLICT_RETRY_WINDOW)
    if attempt >= MAX_RETRIES or elapsed > RETRY_WINDOW:
        return False
    return isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated


def _final_error(exc, write):
    """What a failure that is not re-run leaves the decorator as."""
    if write and failures.is_conflict(exc):
        LOG.warning('Giving up a transaction that kept losing conflicts '
                    'with others: %s', failures.describe_failure(exc))
        return exception.TransactionConflict(
            reason=failures.describe_failure(exc))
    if failures.is_unavailable(exc):
        return exception.DatabaseUnavailable(
            reason=failures.describe_failure(exc))
    return None


def _transactional(write):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(ctx, *args, **kwargs):
            current = ctx.conn
            if current is not None:
                if write and not ctx.conn_writes:
                    raise RuntimeError(
                        '%s needs a writer transaction but was called '
                        'inside a reader' % fn.__qualname__)
                return fn(ctx, *args, **kwargs)
            attempt = 0
            started = time.monotonic()
            while True:
                try:
                    with ctx.db.transaction(write) as conn:
                        ctx.conn, ctx.conn_writes = conn, write
                        try:
                            return fn(ctx, *args, **kwargs)
                        finally:
                            ctx.conn, ctx.conn_writes = None, False
                except (sa_exc.DBAPIError, sa_exc.TimeoutError) as exc:
                    if not _should_rerun(exc, write, attempt, started):
                        final = _final_error(exc, write)
                        if final is None:
                            raise
                        raise final from exc
                    attempt += 1
                    metrics.retry('database')
                    if failures.is_broken_trigger(exc):
                        ctx.db.reload_triggered_tables()
                    # DEBUG: while the database is down every request
                    # would add a line; the final failure is logged once.
                    LOG.debug('Retrying %s after database error (%d): %s',
                              fn.__qualname__, attempt,
                              failures.describe_failure(exc))
                    if write and failures.is_conflict(exc):
                        time.sleep(backoff(attempt))
                    else:
                        time.sleep(random.uniform(0.005, 0.02) * attempt)
        return wrapper
    return decorator


#: Run the decorated function in a read-only transaction.
reader = _transactional(write=False)
#: Run the decorated function in a write transaction, retried on deadlock
#: and lost connections.
writer = _transactional(write=True)


def storable(value):
    """False for strings no row can hold (PostgreSQL refuses NUL
    characters even in comparisons), so lookups can treat them as
    unknown instead of failing."""
    return '\x00' not in value


def insert_missing(conn, table, rows):
    """Insert ``rows``, silently skipping any that violate a unique key.

    Safe when several processes insert the same rows at once (start-up
    synchronisation of standard names).
    """
    if not rows:
        return
    dialect = conn.dialect.name
    if dialect == 'sqlite':
        from sqlalchemy.dialects import sqlite
        stmt = sqlite.insert(table).on_conflict_do_nothing()
    elif dialect == 'postgresql':
        from sqlalchemy.dialects import postgresql
        stmt = postgresql.insert(table).on_conflict_do_nothing()
    elif dialect == 'mysql':
        stmt = sa.insert(table).prefix_with('IGNORE')
    else:
        raise NotImplementedError(dialect)
    conn.execute(stmt, rows)
