"""The conformance scenarios, row by row (data in conformance.yaml).

Every row runs once, in order, against one fresh database, because each
section builds on the state the earlier ones leave. The whole run happens
once per process and its problems are kept per row; each section is then
one test item reporting every failing row of that section, so one
failure never hides the others.

By default the target is the in-process application on a fresh database
(SQLite, or the server named by ``PLACEMENT_TEST_DB_URL``). With
``PLACEMENT_CONFORMANCE_URL=http://127.0.0.1:PORT`` the same rows run
against a real server started on a fresh database (ours or the
reference), which is how the encoding itself is checked; run that with
``-n 0`` since the rows may only run once against one database.
"""

import collections
import functools
import http.client
import json
import os
import re
import urllib.parse

import pytest
import webob
import yaml

from placement.tests import fixtures
from placement.web import route_table

URL_ENV = 'PLACEMENT_CONFORMANCE_URL'
DATA = os.path.join(os.path.dirname(__file__), 'conformance.yaml')
#: The address the scenarios' Location headers show; replaced by the
#: target's.
SPEC_BASE = 'http://127.0.0.1:8197'

#: The fixed part of error details by status (webob's explanations).
EXPLANATIONS = {
    400: 'The server could not comply with the request since it is either '
         'malformed or otherwise incorrect.',
    403: 'Access was denied to this resource.',
    404: 'The resource could not be found.',
    409: 'There was a conflict when trying to complete your request.',
    500: 'The server has either erred or is incapable of performing the '
         'requested operation.',
}

#: Variable parts of recorded messages, as regular expressions.
PLACEHOLDERS = {
    '{generated uuid}': '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                        '[0-9a-f]{12}',
    '{database detail}': '.+',
    '…': '.*',
}

REQUEST_ID = ('req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-'
              '[0-9a-f]{12}')

HTTP_DATE = r'[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT'

#: Every key a row may have (see conformance.yaml); any other is a typo
#: that would silently leave an expectation unchecked.
ROW_KEYS = {'n', 'setup', 'req', 'mv', 'with', 'token', 'body', 'raw',
            'status', 'code', 'message', 'json', 'paths', 'members',
            'names', 'headers', 'candidates', 'summaries', 'count'}

Response = collections.namedtuple('Response', 'status headers body')


def _load():
    with open(DATA) as f:
        return yaml.safe_load(f)


SPEC = _load()


class Symbols:
    """Replaces the scenarios' symbolic names by their uuids, everywhere."""

    def __init__(self, mapping, base_url):
        self.mapping = dict(mapping)
        self.mapping[SPEC_BASE] = base_url
        names = sorted(self.mapping, key=len, reverse=True)
        self.pattern = re.compile(
            '|'.join(r'(?<![\w-])%s(?![\w-])' % re.escape(n) for n in names))

    def __call__(self, value):
        if isinstance(value, str):
            return self.pattern.sub(lambda m: self.mapping[m.group(0)], value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        return value


class WSGIClient:
    """Calls the application in-process, as the scenarios' server
    address."""

    base_url = SPEC_BASE

    def __init__(self, app):
        self.app = app

    def __call__(self, method, path, headers, body):
        req = webob.Request.blank(path, base_url=self.base_url,
                                  method=method)
        if body is not None:
            req.body = body
        for name, value in headers.items():
            req.headers[name] = value
        resp = req.get_response(self.app)
        return Response(resp.status_int,
                        {k.lower(): v for k, v in resp.headerlist},
                        resp.body)


class HTTPClient:
    """Calls a real server over HTTP."""

    def __init__(self, url):
        self.base_url = url.rstrip('/')
        parts = urllib.parse.urlsplit(self.base_url)
        self.host, self.port = parts.hostname, parts.port or 80

    def __call__(self, method, path, headers, body):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return Response(resp.status,
                            {k.lower(): v for k, v in resp.getheaders()},
                            resp.read())
        finally:
            conn.close()


def _request(row, sym):
    """The row's request as (method, path, headers, body)."""
    method, path = row['req'].split(' ', 1)
    headers = {}
    if row.get('token', 'admin') is not None:
        headers['X-Auth-Token'] = row.get('token', 'admin')
    if 'mv' in row:
        headers['OpenStack-API-Version'] = 'placement %s' % row['mv']
    body = None
    if 'body' in row:
        body = json.dumps(sym(row['body'])).encode('utf-8')
    elif 'raw' in row:
        body = row['raw'].encode('utf-8')
    if body is not None:
        headers['Content-Type'] = 'application/json'
    for name, value in row.get('with', {}).items():
        # A header the row gives replaces the default of any spelling.
        for default in [h for h in headers if h.lower() == name.lower()]:
            del headers[default]
        headers[name] = value
    return method, sym(path), headers, body


def negotiated_version(headers):
    """The microversion a request's headers select (api-ref/general.rst).

    None when the value is not a supported version (the service answers
    400 or 406 without version headers then).
    """
    value = ','.join(v for k, v in headers.items()
                     if k.lower() == 'openstack-api-version')
    for entry in reversed(value.split(',')):
        words = entry.split()
        if len(words) == 2 and words[0].lower() == 'placement':
            wanted = words[1]
            break
    else:
        return (1, 0)
    if wanted == 'latest':
        return (1, 39)
    try:
        major, minor = (int(p) for p in wanted.split('.', 1))
    except ValueError:
        return None
    return (major, minor) if (1, 0) <= (major, minor) <= (1, 39) else None


def _message_pattern(text):
    pattern = re.escape(text)
    for placeholder, regex in PLACEHOLDERS.items():
        pattern = pattern.replace(re.escape(placeholder), regex)
    return re.compile(pattern, re.DOTALL)


def _path(doc, dotted):
    for part in dotted.split('.'):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def _allocation_requests(doc):
    """Allocation requests as {provider: resources} in either format."""
    found = []
    for request in doc['allocation_requests']:
        allocations = request['allocations']
        if isinstance(allocations, list):  # before 1.12
            allocations = {a['resource_provider']['uuid']: a['resources']
                           for a in allocations}
        else:
            allocations = {rp: a['resources']
                           for rp, a in allocations.items()}
        found.append(allocations)
    return found


def _unordered(value):
    """``value`` with every list sorted: list order is not significant."""
    if isinstance(value, dict):
        return {k: _unordered(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_unordered(v) for v in value),
                      key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _same(found, expected):
    return _unordered(found) == _unordered(expected)


def _check_error(row, version, resp, doc, message, problems):
    """The JSON error body (api-ref/general.rst, 'Errors'): one error,
    envelope, code."""
    errors = doc.get('errors') if isinstance(doc, dict) else None
    if not errors or len(errors) != 1:
        problems.append('not one placement error: %r' % (doc,))
        return
    error = errors[0]
    if error.get('status') != resp.status:
        problems.append('error status %r' % error.get('status'))
    if error.get('request_id') != resp.headers.get('x-openstack-request-id'):
        problems.append('request_id %r is not the response id'
                        % error.get('request_id'))
    want_code = row.get('code') or (
        'placement.undefined_code' if version and version >= (1, 23)
        else None)
    if error.get('code') != want_code:
        problems.append('code %r, expected %r' % (error.get('code'),
                                                  want_code))
    if message is None:
        return
    head, _sep, rest = error.get('detail', '').partition('\n\n ')
    if resp.status in EXPLANATIONS:
        if head != EXPLANATIONS[resp.status] or not rest.endswith('  '):
            problems.append('detail envelope %r' % error.get('detail'))
        rest = rest[:-2]
    if not _message_pattern(message).fullmatch(rest):
        problems.append('message %r, expected %r' % (rest, message))


def _cached(method, path, version, status):
    """Whether the response carries the cache headers (api-ref/general.rst,
    'Caching')."""
    if version is None or version < (1, 15) or status >= 400:
        return False
    if method == 'GET':
        return True
    if method not in ('PUT', 'POST') or path.startswith(
            ('/allocations', '/reshaper', '/resource_classes')):
        return False
    return not (method, path) == ('POST', '/resource_providers') or (
        version >= (1, 20))


def _check_cache_headers(request, version, resp, problems):
    method, path = request[0], request[1].split('?')[0]
    present = [h for h in ('cache-control', 'last-modified')
               if h in resp.headers]
    if not _cached(method, path, version, resp.status):
        if present:
            problems.append('unexpected %s' % ', '.join(present))
        return
    if resp.headers.get('cache-control') != 'no-cache':
        problems.append('cache-control %r'
                        % resp.headers.get('cache-control'))
    # Upstream Placement omits Last-Modified where it has no timestamp (a
    # provider's first update, an empty inventory); we send one there too
    # (api-ref/behaviour-choices.rst, 'Caching headers').
    modified = resp.headers.get('last-modified')
    if modified is not None and not re.fullmatch(HTTP_DATE, modified):
        problems.append('last-modified %r' % modified)


def _check_general(request, version, resp, problems):
    """What every response must show, whatever the row (request id,
    version headers, cache headers, error format)."""
    if not re.fullmatch(REQUEST_ID, resp.headers.get(
            'x-openstack-request-id', '')):
        problems.append('request id %r'
                        % resp.headers.get('x-openstack-request-id'))
    want = None
    if version is not None and resp.status != 401:
        want = 'placement %d.%d' % version
    if resp.headers.get('openstack-api-version') != want:
        problems.append('openstack-api-version %r, expected %r' % (
            resp.headers.get('openstack-api-version'), want))
    content_type = resp.headers.get('content-type')
    if not resp.body and content_type and request[0] != 'HEAD':
        problems.append('Content-Type %r without a body' % content_type)
    if resp.body.startswith(b'{') and content_type != 'application/json':
        problems.append('JSON body as %r' % content_type)
    _check_cache_headers(request, version, resp, problems)


def _check_facts(row, doc, sym, problems):
    """The recorded facts about the row's response body."""
    if 'json' in row and not _same(doc, sym(row['json'])):
        problems.append('body %r, expected %r' % (doc, sym(row['json'])))
    for dotted, value in row.get('paths', {}).items():
        try:
            found = _path(doc, dotted)
        except (KeyError, IndexError, TypeError, ValueError):
            problems.append('no %s in %r' % (dotted, doc))
            continue
        if not _same(found, sym(value)):
            problems.append('%s = %r, expected %r' % (dotted, found,
                                                      sym(value)))
    if 'members' in row and sorted(doc or {}) != row['members']:
        problems.append('members %r' % sorted(doc or {}))
    if 'names' in row:
        names = sorted(rp['name'] for rp in doc['resource_providers'])
        if names != sorted(row['names']):
            problems.append('provider names %r' % names)
    if 'candidates' in row:
        found = _allocation_requests(doc)
        if not _same(found, sym(row['candidates'])):
            problems.append('candidates %r' % found)
    if 'summaries' in row:
        if sorted(doc['provider_summaries']) != sorted(
                sym(row['summaries'])):
            problems.append('summaries for %r' % sorted(
                doc['provider_summaries']))
    if 'count' in row and len(doc['allocation_requests']) != row['count']:
        problems.append('%d candidates' % len(doc['allocation_requests']))


def check(row, request, resp, sym):
    """Every problem of the response against the row's expectations."""
    problems = []
    if resp.status != row['status']:
        problems.append('status %d, expected %d: %s' % (
            resp.status, row['status'], resp.body[:300]))
        return problems
    version = negotiated_version(request[2])
    _check_general(request, version, resp, problems)
    for name, value in sym(row.get('headers', {})).items():
        if resp.headers.get(name) != value:
            problems.append('header %s: %r, expected %r' % (
                name, resp.headers.get(name), value))
    try:
        doc = json.loads(resp.body) if resp.body else None
    except ValueError:
        doc = None
    if resp.status >= 400 and doc and 'errors' in doc:
        _check_error(row, version, resp, doc, sym(row.get('message')),
                     problems)
    elif 'message' in row:
        problems.append('no placement error body: %r' % resp.body[:300])
    _check_facts(row, doc, sym, problems)
    return problems


def run_rows(client):
    """Run every row in order; return {section id: [problem lines]}."""
    sym = Symbols(SPEC['symbols'], client.base_url)
    report = {}
    for section in SPEC['sections']:
        failures = report.setdefault(section['id'], [])
        for row in section['rows']:
            label = ('row %d' % row['n'] if 'n' in row
                     else 'setup %s' % row['setup'])
            unknown = set(row) - ROW_KEYS
            if unknown:
                failures.append('%s: unknown keys %s' % (label,
                                                         sorted(unknown)))
            try:
                request = _request(row, sym)
                problems = check(row, request, client(*request), sym)
            except Exception as exc:  # a bad body must not stop the run
                problems = ['%s: %s' % (type(exc).__name__, exc)]
            failures.extend('%s %s: %s' % (label, row['req'], p)
                            for p in problems)
    return report


@functools.lru_cache(maxsize=None)
def _report():
    url = os.environ.get(URL_ENV)
    if url:
        if os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1') != '1':
            pytest.fail('%s needs -n 0: the rows run once per database'
                        % URL_ENV, pytrace=False)
        return run_rows(HTTPClient(url))
    db, cleanup = fixtures.new_database()
    try:
        return run_rows(WSGIClient(fixtures.new_app(fixtures.new_conf(), db)))
    finally:
        cleanup()


def _param(section):
    """The section as a test parameter.

    A section whose routes are not in our route table yet must fail in
    process (strict xfail), so it is noticed as soon as it passes.
    """
    missing = set(section.get('needs', ())) - set(route_table.ROUTES)
    if missing and not os.environ.get(URL_ENV):
        return pytest.param(section['id'], marks=pytest.mark.xfail(
            reason='not routed yet: %s' % ', '.join(sorted(missing)),
            strict=True))
    return section['id']


@pytest.mark.parametrize('section', [_param(s) for s in SPEC['sections']])
def test_section(section):
    failures = _report()[section]
    if failures:
        pytest.fail('%d problem(s) in %s:\n%s' % (
            len(failures), section, '\n'.join(failures)), pytrace=False)
