"""psycopg2 that lets other green threads run while it waits, under gevent.

gunicorn's gevent worker serves every client connection of a process in
a green thread of one system thread. psycopg2 waits for the server inside
libpq, where gevent cannot switch: a statement waiting for a lock, or a
connection attempt to a server that does not answer (up to its
``connect_timeout``), would hold every client of the worker, and the
health check could not answer within its own timeout. psycopg2's wait
callback hands those waits to gevent instead (psycopg2 then talks to the
server asynchronously underneath, transactions unchanged).

eventlet installs its own callback when it patches psycopg2; PyMySQL is
pure Python and uses the patched socket already. We install ours only
when gevent has patched the socket module and no callback is set, from
the engine's ``do_connect`` event: that runs in the worker, after
gunicorn's gevent worker patched it, before the connection is made.

Ours, not psycogreen's: that small package is unmaintained, and ignores
``connect_timeout``, which libpq leaves to the application when it
connects asynchronously.
"""

import socket
import sys
import time

try:
    import psycopg2
    from psycopg2 import extensions
except ImportError:  # SQLite or MySQL only: nothing to make green.
    psycopg2 = None


def gevent_patched():
    """True if gevent has patched this process's socket module."""
    monkey = sys.modules.get('gevent.monkey')
    return monkey is not None and monkey.is_module_patched('socket')


def follow_gevent(*_connect_args):
    """An engine ``do_connect`` listener: make psycopg2 green if gevent
    patched the process since the last connection. Returns None, so the
    engine goes on to connect as usual."""
    if (psycopg2 is not None and extensions.get_wait_callback() is None
            and gevent_patched()):
        extensions.set_wait_callback(_gevent_wait)


def _connect_timeout(conn):
    """Seconds a connection attempt may take, as libpq reads its
    ``connect_timeout`` (absent or 0: no limit); None for no limit."""
    value = extensions.parse_dsn(conn.dsn).get('connect_timeout')
    try:
        seconds = int(value or 0)
    except ValueError:
        return None
    # libpq waits at least two seconds whatever the setting.
    return max(seconds, 2) if seconds > 0 else None


def _gevent_wait(conn):
    """Wait for ``conn``'s operation to finish, switching green threads
    meanwhile; a connection attempt gives up after its connect_timeout
    with the error libpq raises then."""
    from gevent import socket as green_socket

    deadline = None
    if conn.status == extensions.STATUS_SETUP:
        timeout = _connect_timeout(conn)
        if timeout is not None:
            deadline = time.monotonic() + timeout
    while True:
        state = conn.poll()
        if state == extensions.POLL_OK:
            return
        if state == extensions.POLL_READ:
            wait = green_socket.wait_read
        elif state == extensions.POLL_WRITE:
            wait = green_socket.wait_write
        else:
            raise psycopg2.OperationalError(
                'unexpected poll state %r' % (state,))
        left = None if deadline is None else max(
            0.0, deadline - time.monotonic())
        try:
            wait(conn.fileno(), timeout=left)
        except socket.timeout:
            raise psycopg2.OperationalError('timeout expired') from None
