"""The connection a transaction runs on, and the reader connections
threads keep between reads.

``Database.transaction`` (``db/api.py``) opens one of these holders:
``Transaction`` around a SQLAlchemy Connection (writers, and readers
where the driver needs one), ``ReaderConnection`` as that Connection's
stand-in for a reader's prepared statements, ``LightRead`` for the
single connection of an in-memory SQLite database. The pool's reset is
told when a transaction already ended (``reset_on_return``).
"""

import sys

import sqlalchemy as sa

from placement.db import prepared


def _enter_autocommit(conn):
    """Turn psycopg2's autocommit on for ``conn``'s driver connection (a
    flag of the client, set without a round trip); returns the driver
    connection, for ``_leave_autocommit``. Two plain calls rather than a
    generator context manager: every PostgreSQL reader runs them, and
    the generator costs more."""
    dbapi_conn = conn.connection.dbapi_connection
    dbapi_conn.autocommit = True
    return dbapi_conn


def _leave_autocommit(dbapi_conn):
    """Turn autocommit off again, unless the connection was lost (it is
    then discarded, not returned to the pool)."""
    if not dbapi_conn.closed:
        dbapi_conn.autocommit = False


def streamed(conn, chunk):
    """Execution options that stream a result ``chunk`` rows at a time
    on a server-side cursor, where there is one to use: none for a
    PostgreSQL reader, whose named cursors need a transaction (and would
    cost three round trips for what one query returns)."""
    dbapi_conn = conn.connection.dbapi_connection
    if getattr(dbapi_conn, 'autocommit', False) is True:
        return {}
    return {'yield_per': chunk}


class _Held:
    """Holds the database while a transaction of it is open, if it has
    a single connection (in-memory SQLite, whose one connection cannot
    hold two transactions at once): ``_open()`` runs with it held and
    returns what the ``with`` block gets, ``_close(*exc_info)`` ends it
    before it is let go."""

    __slots__ = ('_db',)

    def __enter__(self):
        lock = self._db._serial
        if lock is not None:
            lock.acquire()
        try:
            return self._open()
        except BaseException:
            if lock is not None:
                lock.release()
            raise

    def __exit__(self, *exc_info):
        try:
            self._close(*exc_info)
        finally:
            if self._db._serial is not None:
                self._db._serial.release()
        return False


class Transaction(_Held):
    """``Database.transaction``: the database held if it has a single
    connection (in-memory SQLite, whose one connection cannot hold two
    transactions at once), a pooled connection (in psycopg2's
    autocommit for a PostgreSQL reader), a transaction on it; left as
    SQLAlchemy's own context managers leave them (commit or roll back,
    autocommit cleared, then close).

    A class rather than nested generator context managers: every request
    opens one, and the generators cost a share of it worth saving.
    """

    __slots__ = ('_write', '_conn', '_tx', '_autocommit')

    def __init__(self, db, write):
        self._db = db
        self._write = write

    def _open(self):
        conn = self._db.engine.connect()
        self._autocommit = None
        try:
            if self._write:
                conn.execution_options(placement_writer=True)
            elif self._db.psycopg2:
                self._autocommit = _enter_autocommit(conn)
            self._tx = conn.begin().__enter__()
        except BaseException:
            self._leave_autocommit()
            conn.close()
            raise
        self._conn = conn
        return conn

    def _close(self, *exc_info):
        with self._conn:
            try:
                self._tx.__exit__(*exc_info)
            finally:
                self._leave_autocommit()
            if self._db.marks_ended and not self._conn.invalidated:
                self._conn.connection.info[ENDED] = True

    def _leave_autocommit(self):
        if self._autocommit is not None:
            _leave_autocommit(self._autocommit)
            self._autocommit = None


class ReaderConnection:
    """``ctx.conn`` of a reader on SQLite, psycopg2 or PyMySQL: the
    pooled driver connection, standing in for a SQLAlchemy Connection;
    on SQLite in a transaction begun on its own cursor, on psycopg2 and
    PyMySQL in autocommit (as ``Transaction`` runs PostgreSQL readers,
    see ``Database.transaction``).

    An SQLAlchemy Connection with its transaction costs a sizeable share
    of every small request's CPU (the connection object, its events, the
    transaction objects), while the hot reads run only prepared
    statements (``placement.db.prepared``), which need the dialect and
    the driver connection. Anything else asked of it (``execute``,
    error handling, ...) turns it into a real Connection on the same
    pooled connection, joining the transaction already begun, so it
    behaves as the Connection would have from then on.
    """

    __slots__ = ('engine', 'dialect', 'connection', '_full', '_begun',
                 '_autocommit', '_alone')

    def __init__(self, engine, fairy):
        self.engine = engine
        self.dialect = engine.dialect
        #: The pool's connection, as ``Connection.connection`` gives it.
        self.connection = fairy
        self._full = None
        self._begun = False
        #: The psycopg2 connection, while its autocommit is on.
        self._autocommit = None
        #: True on our PyMySQL connections in autocommit mode: each
        #: statement commits itself, nothing to begin or end.
        self._alone = False

    @classmethod
    def begin(cls, engine, autocommit=False, fairy=None, alone=None):
        """A reader on a pooled connection (``fairy``, else one from the
        pool): in a transaction begun on its cursor, with ``autocommit``
        in psycopg2's autocommit, or, where ``alone(driver connection)``
        says each statement commits itself (PyMySQL in autocommit,
        ``pymysql_connection.reads_alone``), without a transaction."""
        try:
            if fairy is None:
                fairy = engine.raw_connection()
        except engine.dialect.loaded_dbapi.Error:
            # Fail (or succeed) as SQLAlchemy's own connect would.
            conn = cls(engine, None)
            conn._full = engine.connect()
            conn.connection = conn._full.connection
            try:
                if autocommit:
                    conn._enter_autocommit()
                conn._full.begin()
            except BaseException:
                conn._leave_autocommit()
                conn._full.close()
                raise
            return conn
        conn = cls(engine, fairy)
        try:
            if autocommit:
                conn._enter_autocommit()
            else:
                if _ends_marked(engine.dialect):
                    # Its first statement begins the transaction, unless
                    # each statement commits itself.
                    fairy.info.pop(ENDED, None)
                    conn._alone = alone is not None and alone(
                        fairy.dbapi_connection)
                else:
                    prepared.execute(conn, 'BEGIN')
                conn._begun = not conn._alone
        except BaseException:
            conn.end(*sys.exc_info())
            raise
        return conn

    def _enter_autocommit(self):
        self._autocommit = _enter_autocommit(self)

    def _leave_autocommit(self):
        dbapi_conn, self._autocommit = self._autocommit, None
        if dbapi_conn is not None:
            _leave_autocommit(dbapi_conn)

    def full(self):
        """The SQLAlchemy Connection, created on first use."""
        full = self._full
        if full is None:
            full = self._full = sa.engine.Connection(
                self.engine, connection=self.connection)
            if self._begun or self._alone:
                # Its BEGIN is the one already run (see _on_begin), or
                # none is needed: its statements, and its COMMIT, stay
                # without a transaction (pymysql_connection.Connection
                # sends no COMMIT then).
                self.connection.info[BEGUN] = True
                try:
                    full.begin()
                finally:
                    self.connection.info.pop(BEGUN, None)
        return full

    def __getattr__(self, name):
        return getattr(self.full(), name)

    def end(self, *exc_info, keep=None):
        """Commit (or roll back after an error) and give the connection
        back to the pool, as ``Connection.begin()`` and ``close()``
        would; or, after a read that ended well on the driver connection
        alone, to ``keep(pooled connection)``."""
        full = self._full
        if full is None:
            dbapi_conn = self.connection.dbapi_connection
            try:
                if self._autocommit is not None:
                    pass  # nothing to end
                # With ``_alone``, PyMySQL's commit and rollback send
                # nothing (pymysql_connection.Connection).
                elif exc_info[0] is None:
                    dbapi_conn.commit()
                else:
                    dbapi_conn.rollback()
            except self.dialect.loaded_dbapi.Error as exc:
                # Wrapped (and a lost connection invalidated) as
                # SQLAlchemy's commit or rollback would.
                self._full = sa.engine.Connection(
                    self.engine, connection=self.connection)
                with self._full:
                    prepared.fail(self._full, exc, None, None, None)
            else:
                if _ends_marked(self.dialect):
                    self.connection.info[ENDED] = True
            finally:
                if self._full is None:
                    if (self._autocommit is not None and dbapi_conn.closed
                            or self._alone and not dbapi_conn.open):
                        # Lost after the last statement: discarded, as
                        # the pool would after failing to reset it.
                        self.connection.invalidate()
                    self._leave_autocommit()
                    if (keep is not None and exc_info[0] is None
                            and self.connection.is_valid):
                        keep(self.connection)
                    else:
                        self.connection.close()
            return
        with full:
            try:
                transaction = full.get_transaction()
                if transaction is not None:
                    transaction.__exit__(*exc_info)
                if _ends_marked(self.dialect) and not full.invalidated:
                    self.connection.info[ENDED] = True
            finally:
                self._leave_autocommit()


class LightRead(_Held):
    """``Database.transaction`` of a reader on SQLite, psycopg2 or
    MySQL: a ReaderConnection."""

    __slots__ = ('_conn',)

    def __init__(self, db):
        self._db = db

    def _open(self):
        db = self._db
        self._conn = ReaderConnection.begin(
            db.engine, autocommit=db.psycopg2,
            fairy=db._take_kept() if db.keeps_readers else None,
            alone=db.reads_alone)
        return self._conn

    def _close(self, *exc_info):
        db = self._db
        self._conn.end(*exc_info,
                       keep=db._keep if db.keeps_readers else None)


#: Set on a pooled connection's ``info`` while a ReaderConnection hands
#: its open transaction to a SQLAlchemy Connection.
BEGUN = 'placement_begun'


#: Set on a pooled connection's ``info`` once its transaction ended.
ENDED = 'placement_transaction_ended'


def _ends_marked(dialect):
    """Whether transactions on ``dialect`` mark their end (``ENDED``,
    see ``reset_on_return``); its driver (PyMySQL) also begins a
    transaction with the first statement, no BEGIN sent, unless the
    connection is in autocommit mode (``pymysql_connection``: a reader
    then has no transaction, a writer sends BEGIN)."""
    return dialect.name == 'mysql'


def reset_on_return(dbapi_conn, record, state):
    """The pool's rollback of a returned connection, left out after a
    transaction that ``Transaction`` saw committed or rolled back.

    SQLAlchemy's own reset rolls back after every COMMIT as well (it
    skips the ROLLBACK only when closing ends the transaction itself); on
    MySQL/MariaDB, where PyMySQL sends every ROLLBACK to the server, that
    was one more round trip per request (on SQLite and psycopg2 the
    rollback of an idle connection stays in the client, so the default
    reset is kept there).
    """
    ended = record is not None and record.info.pop(ENDED, False)
    if ended or state.transaction_was_reset or not state.asyncio_safe:
        return
    dbapi_conn.rollback()
