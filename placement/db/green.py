"""psycopg2 that lets other green threads run while it waits, under gevent.

gunicorn's gevent worker serves every client connection of a process in
a green thread of one system thread. psycopg2 waits for the server inside
libpq, where gevent cannot switch: a statement waiting for a lock, or a
connection attempt to a server that does not answer (up to its
``connect_timeout``), would hold every client of the worker, and the
health check could not answer within its own timeout. psycopg2's wait
callback lets us wait instead: as libpq would for a few milliseconds
(a healthy database has answered by then), and beyond that through
gevent, while the worker's other clients are served. psycopg2 then talks
to the server asynchronously underneath; transactions are unchanged.

eventlet installs its own callback when it patches psycopg2; PyMySQL is
pure Python and uses the patched socket already (holding its reads in
poll first, as we hold psycopg2's waits, made the MariaDB mix worse: see
api-ref/design.rst, 'Measured choices'). We install ours only
when gevent has patched the socket module and no callback is set, from
the engine's ``do_connect`` event: that runs in the worker, after
gunicorn's gevent worker patched it, before the connection is made.

Ours, not psycogreen's: that package (last released in 2020) hands
every wait to gevent at once (see HOLD_MILLISECONDS) and without a
deadline, so a connection attempt would ignore ``connect_timeout``,
which libpq leaves to the application when it connects asynchronously.
"""

import select
import socket
import sys
import time

try:
    import psycopg2
    from psycopg2 import extensions
except ImportError:  # SQLite or MySQL only: nothing to make green.
    psycopg2 = None


#: Milliseconds a wait holds the worker before it lets other green
#: threads run. A healthy database answers within a millisecond or two,
#: and waiting for that in the system's poll, as libpq itself would,
#: costs what a worker without the callback pays. A switch per
#: statement let requests interleave (more pooled connections taken,
#: more writes to one provider conflicting), which cost the server and
#: the database more CPU per request than no callback at all; holding
#: first does not (api-ref/design.rst, 'Measured choices'). Longer
#: waits (a lock, a server that does not answer) hold the other clients
#: this long at most.
HOLD_MILLISECONDS = 10


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
        extensions.set_wait_callback(_GeventWait())


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


class _GeventWait:
    """psycopg2's wait callback: wait for a connection's operation to
    finish, holding the worker for HOLD_MILLISECONDS at most, then as a
    green thread. A connection attempt gives up after its connect_timeout
    with the error libpq raises then."""

    def __init__(self):
        from gevent import monkey
        from gevent import socket as green_socket

        # poll, not select: a gevent worker's descriptors may pass
        # select's limit of 1024.
        self._poll = monkey.get_original('select', 'poll')
        self._events = {extensions.POLL_READ: select.POLLIN,
                        extensions.POLL_WRITE: select.POLLOUT}
        self._green = {extensions.POLL_READ: green_socket.wait_read,
                       extensions.POLL_WRITE: green_socket.wait_write}

    def __call__(self, conn):
        deadline = None
        if conn.status == extensions.STATUS_SETUP:
            timeout = _connect_timeout(conn)
            if timeout is not None:
                deadline = time.monotonic() + timeout
        while True:
            state = conn.poll()
            if state == extensions.POLL_OK:
                return
            if state not in self._green:
                raise psycopg2.OperationalError(
                    'unexpected poll state %r' % (state,))
            fd = conn.fileno()
            waiting = self._poll()
            waiting.register(fd, self._events[state])
            if waiting.poll(HOLD_MILLISECONDS):
                continue
            left = None if deadline is None else max(
                0.0, deadline - time.monotonic())
            try:
                self._green[state](fd, timeout=left)
            except socket.timeout:
                raise psycopg2.OperationalError('timeout expired') from None
