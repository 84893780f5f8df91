"""A minimal Placement HTTP client (standard library only), for the load
scripts in ``benchmarks/`` and the tests that start servers. It lives in
``placement.tests`` so that the installed package never imports
``benchmarks`` (not part of it).

One ``Client`` per thread: it keeps one keep-alive connection and never
retries a request by itself, because a write whose connection broke may or
may not have been applied, and only the caller knows what that means.
``RawClient`` does the same over a bare socket, for load generators that
share the machine with the servers they measure.
"""

import http.client
import json
import socket
import struct
import urllib.parse

MICROVERSION = '1.39'


class Response:
    """What came back: ``status`` is None when no HTTP answer arrived."""

    def __init__(self, status, body=None, failure=None, headers=None):
        self.status = status
        self.body = body
        self.failure = failure
        #: ``Client`` answers: the response's headers (an http.client
        #: HTTPMessage), e.g. to check Retry-After on a 503.
        self.headers = headers

    @property
    def failure_kind(self):
        """The exception class name of a failed exchange."""
        return self.failure and self.failure.split(':')[0]

    def _first_error(self):
        """``errors[0]`` of a Placement error body, else {}."""
        try:
            return self.body['errors'][0]
        except (TypeError, KeyError, IndexError):
            return {}

    @property
    def error_code(self):
        return self._first_error().get('code')

    @property
    def error_detail(self):
        return self._first_error().get('detail')

    def __repr__(self):
        return '<Response %s %s>' % (self.status, self.failure or self.body)


def decode(data):
    """A body as JSON, as text when it is not JSON, None when empty."""
    try:
        return json.loads(data) if data else None
    except ValueError:
        return data.decode('utf-8', 'replace')


class Client:
    """Requests over one persistent connection to ``url`` with ``token``."""

    def __init__(self, url, token='admin', timeout=60,
                 microversion=MICROVERSION):
        parts = urllib.parse.urlsplit(url)
        self._prefix = parts.path.rstrip('/')
        self._connection = http.client.HTTPConnection(
            parts.hostname, parts.port or 80, timeout=timeout)
        self._headers = {
            'x-auth-token': token,
            'accept': 'application/json',
            'openstack-api-version': 'placement %s' % microversion,
        }

    def fetch(self, method, path, body=None):
        """Send once and read the whole body, leaving it as bytes.

        For timing: the caller's clock can stop on return, before any
        decoding. Connection failures become a status-less Response.
        """
        headers = dict(self._headers)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers['content-type'] = 'application/json'
        try:
            self._connection.request(method, self._prefix + path,
                                     body=payload, headers=headers)
            raw = self._connection.getresponse()
            data = raw.read()
        except (OSError, http.client.HTTPException) as exc:
            # The next request opens a fresh connection.
            self._connection.close()
            return Response(None, failure='%s: %s' % (
                type(exc).__name__, exc))
        return Response(raw.status, data, headers=raw.headers)

    def request(self, method, path, body=None):
        """Send once; the body comes back decoded (JSON, else text)."""
        resp = self.fetch(method, path, body)
        if resp.status is not None:
            resp.body = decode(resp.body)
        return resp

    def checked(self, method, path, body=None, expect=(200,)):
        """Request that must succeed (setup and verification reads).

        Reads are retried once over a fresh connection, since a read is
        safe to repeat and servers may close idle keep-alive connections.
        """
        resp = self.request(method, path, body)
        if resp.status is None and method == 'GET':
            resp = self.request(method, path, body)
        if resp.status not in expect:
            raise RuntimeError('%s %s failed: %r' % (method, path, resp))
        return resp.body

    def close(self):
        self._connection.close()


class RawClient:
    """``Client.fetch`` over a bare socket, at a fraction of the CPU.

    http.client parses every response's headers with the email package
    and builds several objects per request; a load generator on the
    servers' own cores pays that on every request. This sends one
    prepared buffer and reads the answer by ``Content-Length`` (or
    chunks, or until the server closes). It closes its socket as soon as
    a response says ``Connection: close``: gunicorn's sync workers close
    every connection and then wait for the client's end to close too, so
    a late close would cost the server being measured worker time.
    """

    def __init__(self, url, token='admin', timeout=60):
        parts = urllib.parse.urlsplit(url)
        self._address = (parts.hostname, parts.port or 80)
        self._prefix = parts.path.rstrip('/')
        self._timeout = timeout
        self._headers = (
            'Host: %s\r\nX-Auth-Token: %s\r\nAccept: application/json\r\n'
            'OpenStack-API-Version: placement %s\r\n' % (
                parts.netloc, token, MICROVERSION)).encode()
        self._sock = None

    def fetch(self, method, path, body=None):
        """As ``Client.fetch``: the body is left as bytes."""
        head = [('%s %s%s HTTP/1.1\r\n' % (
            method, self._prefix, path)).encode(), self._headers]
        payload = b''
        if body is not None:
            payload = json.dumps(body).encode()
            head.append(b'Content-Type: application/json\r\n')
        if body is not None or method in ('POST', 'PUT', 'PATCH'):
            head.append(b'Content-Length: %d\r\n' % len(payload))
        head.append(b'\r\n')
        try:
            if self._sock is None:
                self._sock = _connect(self._address, self._timeout)
            self._sock.sendall(b''.join(head) + payload)
            status, data, keep = _read_response(self._sock.recv, method)
        except (OSError, ValueError) as exc:
            self.close()
            return Response(None, failure='%s: %s' % (
                type(exc).__name__, exc))
        if not keep:
            self.close()
        return Response(status, data)

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _connect(address, timeout):
    """A connected blocking socket whose sends and receives fail after
    ``timeout`` seconds: kernel timeouts, because Python's own make every
    receive a poll and a receive."""
    sock = socket.socket()
    try:
        limit = struct.pack('ll', int(timeout), int(timeout % 1 * 1e6))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, limit)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, limit)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock


def _read_response(recv, method):
    """(status, body bytes, whether the connection stays open) of the
    next response read with ``recv``; ValueError when it is not HTTP."""
    parser = ResponseParser(method)
    while True:
        chunk = recv(65536)
        if not chunk:
            parser.closed()
            break
        if parser.feed(chunk):
            break
    return parser.status, parser.body, parser.keep


class ResponseParser:
    """One HTTP/1.x response, read from chunks as they arrive.

    ``feed`` each chunk received until it says the response is complete,
    or call ``closed`` when the peer closes first; then ``status``,
    ``body`` (bytes) and ``keep`` (whether the connection may carry
    another request) are set. Both raise ValueError on what is not a
    whole HTTP response. Only the three headers that frame the body are
    looked at: a load generator reads thousands of responses a second on
    the cores of the servers it measures.
    """

    __slots__ = ('status', 'body', 'keep', '_method', '_buffer',
                 '_parts', '_have', '_length', '_chunked')

    def __init__(self, method):
        self.status = self.body = self.keep = None
        self._method = method
        self._buffer = b''
        self._parts = None      # body chunks, once the headers are read
        self._have = 0
        self._length = None     # Content-Length; None: chunked or close
        self._chunked = False

    def feed(self, chunk):
        """Take the next bytes; True when the response is complete."""
        if self._parts is None:
            self._buffer += chunk
            end = self._buffer.find(b'\r\n\r\n')
            if end < 0:
                return False
            rest = self._buffer[end + 4:]
            self._head(self._buffer[:end])
            self._buffer = b''
            if self._length == 0:
                self.body = b''
                return True
            if not rest:
                return False
            chunk = rest
        self._parts.append(chunk)
        self._have += len(chunk)
        if self._length is not None:
            if self._have < self._length:
                return False
            data = b''.join(self._parts)
            self.body = data[:self._length]
            return True
        if self._chunked:
            self.body = _dechunked(b''.join(self._parts))
            return self.body is not None
        return False

    def closed(self):
        """The peer closed the connection: ends a body read until then."""
        if self.body is not None:
            return
        if self._parts is None:
            raise ValueError('connection closed before the headers')
        if self._length is not None or self._chunked:
            raise ValueError('connection closed in the body')
        self.body = b''.join(self._parts)
        self.keep = False

    def _head(self, head):
        first, _sep, fields = head.partition(b'\r\n')
        version, status = first.split(None, 2)[:2]
        self.status = status = int(status)
        fields = b'\r\n' + fields.lower()
        self.keep = (version == b'HTTP/1.1'
                     and _field(fields, b'connection') != b'close')
        self._parts = []
        if (self._method == 'HEAD' or status in (204, 304)
                or status < 200):
            self._length = 0
            return
        length = _field(fields, b'content-length')
        if length is not None:
            self._length = int(length)
            if self._length < 0:
                raise ValueError('negative Content-Length')
        else:
            self._chunked = _field(
                fields, b'transfer-encoding') == b'chunked'


def _field(fields, name):
    """The stripped value of header ``name`` in lower-cased ``fields``
    (each line preceded by CRLF), None when absent."""
    at = fields.find(b'\r\n' + name + b':')
    if at < 0:
        return None
    at += len(name) + 3
    end = fields.find(b'\r\n', at)
    return fields[at:end if end >= 0 else len(fields)].strip()


def _dechunked(data):
    """The body of the chunked ``data``; None while it is incomplete."""
    body = []
    at = 0
    while True:
        end = data.find(b'\r\n', at)
        if end < 0:
            return None
        size = int(data[at:end].split(b';')[0], 16)
        at = end + 2
        if len(data) < at + size + 2:
            return None
        if size == 0:
            return b''.join(body)
        body.append(data[at:at + size])
        at += size + 2
