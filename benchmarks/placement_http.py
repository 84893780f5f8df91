"""A minimal Placement HTTP client for load scripts (standard library only).

One ``Client`` per thread: it keeps one keep-alive connection and never
retries a request by itself, because a write whose connection broke may or
may not have been applied, and only the caller knows what that means.
"""

import http.client
import json
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
