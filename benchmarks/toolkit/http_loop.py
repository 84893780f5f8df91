"""Many concurrent Placement exchanges from one thread, over epoll.

A load generator that shares two cores with the servers it measures must
cost them as little as it can. Threads blocked on sockets cost a GIL
hand-over and a context switch or two per response; here one thread
sends every request from non-blocking sockets and waits for all the
answers in one ``epoll``.

The traffic is written as *flows*: generators that yield a ``Request``
and get back what it answered, ``(status, body)`` (``(None, failure
text)`` when no HTTP answer came), so a task of several dependent
requests reads top to bottom as it would with a blocking client::

    def refresh(node):
        status, body = yield Request('GET in_tree', 'GET', path, decode=True)

Like ``placement_http.RawClient``, a request is never retried here:
only the flow knows whether it may be. A connection the server keeps
open is kept for the next request (the most recently used first) and
dropped as soon as the server closes it while idle; one it closes is
closed at once (gunicorn's sync workers wait for the client's close).
"""

import collections
import errno
import json
import os
import select
import socket
import time
import urllib.parse

from placement.tests import placement_http

_IN = select.EPOLLIN
_OUT = select.EPOLLOUT
_RECEIVE = 1 << 20


class Request(collections.namedtuple(
        'Request', 'endpoint method path body decode')):
    """What a flow asks for: ``endpoint`` names it in the latencies;
    the answer's body comes back decoded (JSON, else text) when
    ``decode``, else as bytes."""

    __slots__ = ()

    def __new__(cls, endpoint, method, path, body=None, decode=False):
        return super().__new__(cls, endpoint, method, path, body, decode)


class _Exchange:
    """A request on the wire: its flow, socket, unsent bytes, parser."""

    __slots__ = ('flow', 'request', 'sock', 'pending', 'parser', 'start')

    def __init__(self, flow, request, sock, pending, start):
        self.flow, self.request, self.sock = flow, request, sock
        self.pending, self.start = pending, start
        self.parser = placement_http.ResponseParser(request.method)


class Loop:
    """Runs flows against the server at ``url`` until they end.

    ``record(endpoint, status, seconds, text)`` is called once per
    request: ``seconds`` from just before the connection (or the send on
    a kept connection) to the poll that delivered the answer's last
    bytes, so the time the loop spends on other answers is not counted
    as the server's; ``text`` is the body bytes or the failure.
    """

    def __init__(self, url, token, timeout, record):
        parts = urllib.parse.urlsplit(url)
        self._address = (parts.hostname, parts.port or 80)
        self._prefix = parts.path.rstrip('/')
        self._headers = (
            ' HTTP/1.1\r\nHost: %s\r\nX-Auth-Token: %s\r\n'
            'Accept: application/json\r\n'
            'OpenStack-API-Version: placement %s\r\n' % (
                parts.netloc, token, placement_http.MICROVERSION)).encode()
        self._timeout = timeout
        self._record = record
        self._epoll = select.epoll()
        # Received into one buffer and copied out at their size: a
        # large ``recv`` allocates (and maps) its whole size every time.
        self._buffer = bytearray(_RECEIVE)
        self._view = memoryview(self._buffer)
        self._exchanges = {}         # fd -> _Exchange
        self._idle = {}              # fd -> socket kept open, LIFO
        self.flows = 0               # flows started and not ended
        self._checked = time.monotonic()

    def close(self):
        for exchange in list(self._exchanges.values()):
            exchange.sock.close()
        for sock in self._idle.values():
            sock.close()
        self._exchanges.clear()
        self._idle.clear()
        self._epoll.close()
        self._view.release()

    def start(self, flow):
        """Run ``flow`` (a started generator is advanced to its first
        request) until its next request is on the wire."""
        self.flows += 1
        self._advance(flow, None)

    def poll(self, timeout):
        """Wait up to ``timeout`` seconds for answers and move their
        flows on.

        Every answer of the poll is finished (its connection closed or
        kept) before any flow moves on: a gunicorn sync worker waits for
        the client's close after each response before it takes the next
        connection, so a close left until other flows have sent their
        next requests would hold the server up.
        """
        events = self._epoll.poll(max(timeout, 0))
        now = time.perf_counter()
        exchanges = self._exchanges
        answered = []
        for fd, mask in events:
            exchange = exchanges.get(fd)
            if exchange is None:
                self._idle_event(fd)
            elif exchange.pending:
                self._send(exchange, mask)
            elif self._receive(exchange):
                answered.append(exchange)
        for exchange in answered:
            self._answered(exchange, now)
        if exchanges and time.monotonic() - self._checked > 1.0:
            self._expire()

    # -- flows --------------------------------------------------------------

    def _advance(self, flow, answer):
        """Give ``answer`` to ``flow`` and send its next request."""
        while True:
            try:
                request = flow.send(answer)
            except StopIteration:
                self.flows -= 1
                return
            answer = self._issue(flow, request)
            if answer is None:
                return

    def _issue(self, flow, request):
        """Send ``request``; its answer now when it failed at once."""
        data = self._bytes(request)
        start = time.perf_counter()
        sock = None
        kept = bool(self._idle)
        try:
            sock = self._idle.pop(next(reversed(self._idle))) if kept \
                else self._connect()
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            if sock is not None:
                sock.close()
            return self._failed(request, start, exc)
        exchange = _Exchange(flow, request, sock, data[sent:], start)
        fd = sock.fileno()
        self._exchanges[fd] = exchange
        mask = _OUT if exchange.pending else _IN
        if not kept:
            self._epoll.register(fd, mask)
        elif exchange.pending:
            self._epoll.modify(fd, mask)
        return None

    def _bytes(self, request):
        method, path, body = request.method, request.path, request.body
        head = method.encode() + b' ' + (self._prefix + path).encode()
        if body is None:
            if method in ('POST', 'PUT', 'PATCH'):
                return head + self._headers + b'Content-Length: 0\r\n\r\n'
            return head + self._headers + b'\r\n'
        payload = json.dumps(body).encode()
        return b''.join((
            head, self._headers,
            b'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n'
            % len(payload), payload))

    def _connect(self):
        """A new non-blocking connection to the server."""
        # Non-blocking from its creation: no ioctl to make it so.
        sock = socket.socket(socket.AF_INET,
                             socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # On loopback the handshake is over when this returns; the
            # poll says when it is elsewhere (the send is then pending).
            error = sock.connect_ex(self._address)
            if error not in (0, errno.EINPROGRESS):
                raise OSError(error, os.strerror(error))
        except BaseException:
            sock.close()
            raise
        return sock

    def _failed(self, request, start, exc):
        failure = '%s: %s' % (type(exc).__name__, exc)
        self._record(request.endpoint, None, time.perf_counter() - start,
                     failure)
        return None, failure

    # -- events -------------------------------------------------------------

    def _send(self, exchange, mask):
        try:
            if mask & select.EPOLLERR and not mask & _OUT:
                raise ConnectionError(exchange.sock.getsockopt(
                    socket.SOL_SOCKET, socket.SO_ERROR), 'connect failed')
            sent = exchange.sock.send(exchange.pending)
        except BlockingIOError:
            return
        except OSError as exc:
            self._end(exchange, False)
            self._advance(exchange.flow, self._failed(
                exchange.request, exchange.start, exc))
            return
        exchange.pending = exchange.pending[sent:]
        if not exchange.pending:
            self._epoll.modify(exchange.sock.fileno(), _IN)

    def _receive(self, exchange):
        """Read what arrived; True when it completed the answer, whose
        connection is then closed or kept. One receive per event, since
        a second one would mostly find nothing yet (gunicorn sends
        headers and body apart), and the poll reports what is left
        anyway."""
        parser = exchange.parser
        try:
            size = exchange.sock.recv_into(self._buffer)
            if size:
                done = parser.feed(self._view[:size].tobytes())
            else:
                parser.closed()
                done = True
        except BlockingIOError:
            return False
        except (OSError, ValueError) as exc:
            self._end(exchange, False)
            self._advance(exchange.flow, self._failed(
                exchange.request, exchange.start, exc))
            return False
        if done:
            self._end(exchange, parser.keep)
        return done

    def _answered(self, exchange, now):
        """Record a complete answer and give it to its flow."""
        request, parser = exchange.request, exchange.parser
        body = parser.body
        self._record(request.endpoint, parser.status, now - exchange.start,
                     body)
        if request.decode:
            body = placement_http.decode(body)
        self._advance(exchange.flow, (parser.status, body))

    def _end(self, exchange, keep):
        """The exchange is over: keep its connection or close it."""
        fd = exchange.sock.fileno()
        del self._exchanges[fd]
        if keep:
            self._idle[fd] = exchange.sock
        else:
            exchange.sock.close()        # also leaves the epoll set

    def _idle_event(self, fd):
        """A kept connection became readable: the server closed it (or
        sent what nobody asked for); either way it is not reused."""
        sock = self._idle.pop(fd, None)
        if sock is not None:
            sock.close()

    def _expire(self):
        """Fail the exchanges older than the timeout."""
        self._checked = time.monotonic()
        limit = time.perf_counter() - self._timeout
        for exchange in [e for e in self._exchanges.values()
                         if e.start < limit]:
            self._end(exchange, False)
            self._advance(exchange.flow, self._failed(
                exchange.request, exchange.start,
                TimeoutError('no answer in %g s' % self._timeout)))
