"""A minimal Placement HTTP client for load scripts (standard library only).

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

    def __init__(self, status, body=None, failure=None):
        self.status = status
        self.body = body
        self.failure = failure

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

    def __init__(self, url, token='admin', timeout=60):
        parts = urllib.parse.urlsplit(url)
        self._prefix = parts.path.rstrip('/')
        self._connection = http.client.HTTPConnection(
            parts.hostname, parts.port or 80, timeout=timeout)
        self._headers = {
            'x-auth-token': token,
            'accept': 'application/json',
            'openstack-api-version': 'placement %s' % MICROVERSION,
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
        return Response(raw.status, data)

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
    buffer = b''
    end = -1
    while end < 0:
        chunk = recv(65536)
        if not chunk:
            raise ValueError('connection closed before the headers')
        buffer += chunk
        end = buffer.find(b'\r\n\r\n')
    lines = buffer[:end].split(b'\r\n')
    rest = buffer[end + 4:]
    version, status = lines[0].split(None, 2)[:2]
    status = int(status)
    headers = {}
    for line in lines[1:]:
        name, _sep, value = line.partition(b':')
        headers[name.strip().lower()] = value.strip().lower()
    keep = (version == b'HTTP/1.1'
            and headers.get(b'connection') != b'close')
    if method == 'HEAD' or status in (204, 304) or status < 200:
        return status, b'', keep
    if b'content-length' in headers:
        length = int(headers[b'content-length'])
        parts, have = [rest], len(rest)
        while have < length:
            chunk = recv(max(65536, length - have))
            if not chunk:
                raise ValueError('connection closed in the body')
            parts.append(chunk)
            have += len(chunk)
        return status, b''.join(parts)[:length], keep
    if headers.get(b'transfer-encoding') == b'chunked':
        return status, _dechunk(rest, recv), keep
    parts = [rest]
    while True:
        chunk = recv(65536)
        if not chunk:
            return status, b''.join(parts), False
        parts.append(chunk)


def _dechunk(buffer, recv):
    """The body of a chunked response whose first bytes are ``buffer``."""
    body = []
    while True:
        while b'\r\n' not in buffer:
            buffer += _more(recv)
        size_line, buffer = buffer.split(b'\r\n', 1)
        size = int(size_line.split(b';')[0], 16)
        while len(buffer) < size + 2:
            buffer += _more(recv)
        if size == 0:
            return b''.join(body)
        body.append(buffer[:size])
        buffer = buffer[size + 2:]


def _more(recv):
    chunk = recv(65536)
    if not chunk:
        raise ValueError('connection closed in a chunked body')
    return chunk
