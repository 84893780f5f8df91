"""One INFO line per request, in the shape operators grep for."""

import gc
import logging
import re
import weakref

import pytest
import webob

from placement.tests import fixtures

LINE = re.compile(
    r'^(?P<remote>\S+) "(?P<method>[A-Z]+) (?P<path>\S+)" '
    r'status: (?P<status>\d{3}) len: (?P<length>\d+|-) '
    r'microversion: (?P<version>[\d.]+|-) '
    r'request_id: (?P<request_id>req-[0-9a-f-]{36}) '
    r'time: \d+\.\dms$')


@pytest.fixture
def app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(), db)
    cleanup()


def _logged(app, caplog, path, method='GET', **headers):
    req = webob.Request.blank(path, method=method,
                              remote_addr='192.0.2.7')
    req.headers.update(headers)
    with caplog.at_level(logging.INFO, logger='placement.requestlog'):
        caplog.clear()
        resp = req.get_response(app)
    lines = [r.getMessage() for r in caplog.records
             if r.name == 'placement.requestlog']
    assert len(lines) == 1, lines
    match = LINE.match(lines[0])
    assert match, lines[0]
    return resp, match.groupdict()


def test_success_line(app, caplog):
    resp, line = _logged(app, caplog, '/resource_providers?name=a',
                         **{'x-auth-token': 'admin',
                            'openstack-api-version': 'placement 1.20'})
    assert line == {
        'remote': '192.0.2.7', 'method': 'GET',
        'path': '/resource_providers?name=a', 'status': '200',
        'length': str(len(resp.body)), 'version': '1.20',
        'request_id': resp.headers['x-openstack-request-id']}


def test_error_line_carries_status_and_default_version(app, caplog):
    resp, line = _logged(app, caplog, '/resource_providers/nope',
                         method='DELETE', **{'x-auth-token': 'admin'})
    assert (line['method'], line['status'], line['version']) == (
        'DELETE', '404', '1.0')
    assert line['length'] == str(len(resp.body))
    assert line['request_id'] == resp.headers['x-openstack-request-id']


def test_unauthenticated_request_is_logged_without_version(app, caplog):
    resp, line = _logged(app, caplog, '/traits')
    assert (line['status'], line['version']) == ('401', '-')
    assert line['request_id'] == resp.headers['x-openstack-request-id']


def test_mount_prefix_is_part_of_the_path(app, caplog):
    req = webob.Request.blank('/', headers={'x-auth-token': 'admin'})
    req.environ['SCRIPT_NAME'] = '/placement'
    req.environ['PATH_INFO'] = '/resource_providers'
    with caplog.at_level(logging.INFO, logger='placement.requestlog'):
        req.get_response(app)
    assert '"GET /placement/resource_providers" status: 200' in caplog.text


def test_the_line_names_where_it_was_logged(app, caplog):
    """As LOG.log would: the request log's module, function and a line
    of it (format strings may show them)."""
    from placement.middleware import requestlog
    req = webob.Request.blank('/', remote_addr='192.0.2.7')
    with caplog.at_level(logging.INFO, logger='placement.requestlog'):
        req.get_response(app)
    (record,) = [r for r in caplog.records
                 if r.name == 'placement.requestlog']
    code = requestlog.RequestLog._log.__code__
    assert (record.pathname, record.funcName, record.module) == (
        code.co_filename, '_log', 'requestlog')
    lines = [line for _start, _end, line in code.co_lines()
             if line is not None]
    assert min(lines) <= record.lineno <= max(lines)
    assert record.levelname == 'INFO' and record.exc_info is None


class _Body(list):
    """A response body that can be watched for being freed."""


def _serve_and_drop(app):
    """Serve one request through ``app`` and consume its body, as a WSGI
    server does; return only a weak reference to that body."""
    environ = webob.Request.blank('/', remote_addr='192.0.2.7').environ
    result = app(environ, lambda status, headers, exc_info=None: None)
    b''.join(result)
    return weakref.ref(result)


def test_a_logged_response_is_freed_without_a_garbage_collection(caplog):
    """The body of a request is freed as soon as the server drops it: the
    log line must not leave a reference cycle behind that reaches it
    (a listing of 70,000 providers kept ~100 MB per request alive until
    the next full collection)."""
    from placement.middleware import requestlog
    logged = requestlog.RequestLog(
        lambda environ, start_response: (
            start_response('200 OK', []), _Body([b'{}']))[1])
    gc.collect()
    gc.disable()
    try:
        with caplog.at_level(logging.INFO, logger='placement.requestlog'):
            body = _serve_and_drop(logged)
        assert len(caplog.records) == 1
        assert body() is None
    finally:
        gc.enable()
