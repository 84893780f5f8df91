"""A keystone stand-in on loopback: just enough of the identity API v3
for keystonemiddleware to authenticate itself and validate tokens over
HTTP, as it does in production.

It answers version discovery (``/``, ``/v3``), ``POST /v3/auth/tokens``
(password authentication of the service user, who gets a token with a
catalog naming this server) and ``GET /v3/auth/tokens`` (validation of
the token in ``X-Subject-Token``: 200 with the token, 404 if unknown).
Every request is recorded in ``seen`` (method, path, headers), so tests
can look at what the service sent.
"""

import datetime
import http.server
import json
import threading
import uuid

SERVICE_USER = 'placement'
SERVICE_PROJECT = 'service'
#: The placement endpoint the catalog of every token names.
PLACEMENT_URL = 'http://placement.example:8778'


class Token:
    """What keystone knows about one token."""

    def __init__(self, user, project, roles, domain='default'):
        self.user, self.project, self.roles = user, project, roles
        self.domain = domain

    def body(self, url, catalog=True):
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp = '%Y-%m-%dT%H:%M:%S.000000Z'
        domain = {'id': self.domain, 'name': self.domain}
        token = {
            'methods': ['password'],
            'user': {'id': 'u-' + self.user, 'name': self.user,
                     'domain': domain},
            'project': {'id': self.project, 'name': self.project,
                        'domain': domain},
            'roles': [{'id': 'r-' + role, 'name': role}
                      for role in self.roles],
            'issued_at': now.strftime(stamp),
            'expires_at': (now + datetime.timedelta(hours=1)).strftime(
                stamp),
            'audit_ids': [uuid.uuid4().hex[:22]],
        }
        if catalog:
            token['catalog'] = [
                {'type': kind, 'name': name, 'id': name,
                 'endpoints': [{'id': '%s-%s' % (name, interface),
                                'interface': interface,
                                'region': 'RegionOne',
                                'region_id': 'RegionOne', 'url': address}
                               for interface in ('public', 'internal',
                                                 'admin')]}
                for kind, name, address in (
                    ('identity', 'keystone', url),
                    ('placement', 'placement', PLACEMENT_URL))]
        return {'token': token}


class KeystoneServer:
    """Serve on 127.0.0.1 in a thread; use as a context manager."""

    def __init__(self, service_password):
        self.service_password = service_password
        self.tokens = {}
        self.seen = []
        self._httpd = http.server.ThreadingHTTPServer(
            ('127.0.0.1', 0), _handler(self))
        self.url = 'http://127.0.0.1:%d' % self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def add(self, token_id, user, project, roles):
        self.tokens[token_id] = Token(user, project, roles)

    def authtoken_options(self):
        """``[keystone_authtoken]`` lines pointing keystonemiddleware here."""
        return {
            'www_authenticate_uri': self.url + '/v3',
            'auth_url': self.url + '/v3',
            'auth_type': 'password',
            'username': SERVICE_USER,
            'password': self.service_password,
            'project_name': SERVICE_PROJECT,
            'user_domain_id': 'default',
            'project_domain_id': 'default',
            'interface': 'internal',
            'region_name': 'RegionOne',
        }

    def _version(self):
        return {'id': 'v3.14', 'status': 'stable',
                'updated': '2020-01-01T00:00:00Z',
                'links': [{'rel': 'self', 'href': self.url + '/v3/'}],
                'media-types': [{
                    'base': 'application/json',
                    'type': 'application/vnd.openstack.identity-v3+json'}]}

    def answer(self, method, path, headers, body):
        """(status, headers, body) of one request."""
        path, _sep, query = path.partition('?')
        path = path.rstrip('/')
        if method == 'GET' and path == '':
            return 300, {}, {'versions': {'values': [self._version()]}}
        if method == 'GET' and path == '/v3':
            return 200, {}, {'version': self._version()}
        if path != '/v3/auth/tokens':
            return 404, {}, {'error': {'code': 404, 'title': 'Not Found'}}
        if method == 'POST':
            auth = json.loads(body or b'{}').get('auth', {})
            user = auth.get('identity', {}).get('password', {}).get(
                'user', {})
            if (user.get('name') != SERVICE_USER
                    or user.get('password') != self.service_password):
                return 401, {}, {'error': {'code': 401}}
            token_id = 'service-' + uuid.uuid4().hex
            self.tokens[token_id] = Token(SERVICE_USER, SERVICE_PROJECT,
                                          ['service', 'admin'])
            return 201, {'X-Subject-Token': token_id}, self.tokens[
                token_id].body(self.url + '/v3')
        if method == 'GET':
            if headers.get('X-Auth-Token') not in self.tokens:
                return 401, {}, {'error': {'code': 401}}
            token = self.tokens.get(headers.get('X-Subject-Token'))
            if token is None:
                return 404, {}, {'error': {'code': 404}}
            return 200, {'X-Subject-Token': headers['X-Subject-Token']}, (
                token.body(self.url + '/v3',
                           catalog='nocatalog' not in query))
        return 405, {}, {'error': {'code': 405}}


def _handler(server):

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def _serve(self):
            length = int(self.headers.get('Content-Length') or 0)
            body = self.rfile.read(length) if length else b''
            server.seen.append((self.command, self.path, dict(self.headers),
                                body))
            status, headers, document = server.answer(
                self.command, self.path, self.headers, body)
            data = json.dumps(document).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_HEAD = _serve

        def log_message(self, format, *args):
            pass

    return Handler
