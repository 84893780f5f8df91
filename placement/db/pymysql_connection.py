"""The PyMySQL connections ``Database`` makes on MySQL/MariaDB.

Three costs of every request on PyMySQL are left out here, on the
service's own connections only (``connect`` is the engine's
``do_connect`` listener: nothing of PyMySQL changes for the rest of the
process, which may be another project's when the fixture or
``placement.direct`` runs in it):

* A reader's COMMIT. Connections are in autocommit mode, so a read runs
  its statements alone, without BEGIN or COMMIT: the service uses READ
  COMMITTED, under which each statement sees what was committed before
  it started whether or not it runs inside a transaction, so nothing a
  reader gets changes (see api-ref/behaviour-choices.rst, 'Reads on
  MariaDB and MySQL'). Every transaction SQLAlchemy begins (writers,
  migrations, anything but a reader) sends BEGIN (``begin``).
* COMMIT or ROLLBACK when the server says no transaction is open in
  autocommit mode (after a read, or the pool's reset of it): there is
  nothing for them to end. The server reports both states with every
  answer, so this asks it nothing. They still let go of the last
  result, as sending them would have.
* A system call for every packet read or written: PyMySQL sets the
  socket's timeout before each, although it never changes on our
  connections (``_quiet``). About 15 to 30 calls for a small query,
  7 to 10 µs of CPU.
* Parsing the description of every column of every result: the server
  sends the same bytes for a column each time a statement runs, and
  PyMySQL reads six strings and a structure out of them. A connection
  keeps the parsed description of each column it has met (at most
  ``KNOWN_COLUMNS``, forgotten all at once beyond). A consumer's
  allocations (nine columns, three rows) took about a fifth less of
  the client's CPU to read.

A small GET on MariaDB took 15% less of the service's CPU with these
(api-ref/design.rst, 'Measured choices').
"""

import _socket
import functools

#: The server's status bits of a session in autocommit mode, and of one
#: inside a transaction (BEGIN sets it): PyMySQL's
#: ``SERVER_STATUS_AUTOCOMMIT`` and ``SERVER_STATUS_IN_TRANS``, the
#: protocol's values.
_AUTOCOMMIT = 2
_IN_TRANS = 1
#: Column descriptions a connection keeps: more than the service's
#: statements select, bounded in case a statement's columns vary with
#: its values (their lengths do for a selected parameter).
KNOWN_COLUMNS = 512


@functools.lru_cache(maxsize=None)
def connection_class():
    """Our subclass of PyMySQL's connection, made on first use: the
    driver is optional, imported only for a MySQL URL."""
    from pymysql import connections
    from pymysql import protocol

    column = protocol.FieldDescriptorPacket

    class Connection(connections.Connection):
        """A PyMySQL connection that skips what would do nothing, or
        what it did before."""

        _columns = None

        def connect(self, sock=None):
            super().connect(sock)
            _quieten(self._sock)
            self._columns = {}

        def _read_packet(self, packet_type=protocol.MysqlPacket):
            if packet_type is column and self._columns is not None:
                packet_type = self._known_column
            return super()._read_packet(packet_type)

        def _known_column(self, data, encoding):
            """The description of a result column the server sent as
            ``data``, parsed once (nothing changes a parsed one)."""
            found = self._columns.get(data)
            if found is None:
                if len(self._columns) >= KNOWN_COLUMNS:
                    self._columns.clear()
                found = self._columns[data] = column(data, encoding)
            return found

        def commit(self):
            if idle(self):
                self._forget_result()
            else:
                super().commit()

        def rollback(self):
            if idle(self):
                self._forget_result()
            else:
                super().rollback()

        def _forget_result(self):
            # Only the next command would let go of the last result
            # (all its rows), which the connection keeps meanwhile: a
            # kept reader connection would hold a whole listing.
            result = self._result
            if result is not None and not result.unbuffered_active:
                self._result = None

    return Connection


def idle(dbapi_conn):
    """True if the server said in its last answer on ``dbapi_conn``
    that it is in autocommit mode, outside a transaction: each statement
    committed itself, so COMMIT and ROLLBACK have nothing to end."""
    return dbapi_conn.server_status & (_AUTOCOMMIT | _IN_TRANS) == (
        _AUTOCOMMIT)


def connect(_dialect, _record, cargs, cparams):
    """An engine ``do_connect`` listener: our connection, made as the
    dialect would make PyMySQL's. ``Database`` turns autocommit on once
    the dialect set the isolation level (which turns it off)."""
    return connection_class()(*cargs, **cparams)


def begin(conn, fail):
    """Send BEGIN for the SQLAlchemy Connection ``conn`` if its
    statements would otherwise commit themselves; ``fail(conn, exc)``
    raises a driver error as SQLAlchemy would."""
    dbapi_conn = conn.connection.dbapi_connection
    if dbapi_conn.get_autocommit():
        try:
            dbapi_conn.begin()
        except conn.dialect.loaded_dbapi.Error as exc:
            fail(conn, exc)


def reads_alone(dbapi_conn):
    """True if a reader on ``dbapi_conn`` needs no BEGIN or COMMIT:
    one of ours, in autocommit mode outside a transaction."""
    return isinstance(dbapi_conn, connection_class()) and idle(dbapi_conn)


@functools.lru_cache(maxsize=None)
def _quiet(kind):
    """``kind`` of socket, whose ``settimeout`` makes a system call only
    when the timeout changes (``gettimeout`` reads the socket object)."""
    def settimeout(self, value):
        if self.gettimeout() != value:
            kind.settimeout(self, value)
    return type('Quiet' + kind.__name__, (kind,),
                {'__slots__': (), 'settimeout': settimeout})


def _quieten(sock):
    """Give ``sock`` the quiet ``settimeout`` if it is a system socket
    (or an SSL one): gevent's and eventlet's make no system call."""
    if isinstance(sock, _socket.socket):
        sock.__class__ = _quiet(type(sock))
