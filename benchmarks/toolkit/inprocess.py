"""The application in process, for the benchmarks that call it without
a server: built as gunicorn's worker builds it (``deploy.loadapp``:
start-up work, then the middleware pipeline), on a migrated database,
``noauth2``, configured by ``group__option`` overrides."""

import io
import sys
import time

import webob

from placement import deploy
from placement.db import api as db_api
from placement.db import migration
from placement.observability import log_format
from placement.tests import fixtures


def database(url):
    """The database at ``url``, migrated to the head revision."""
    db = db_api.Database(url)
    migration.upgrade(db)
    return db


def application(db, log_file=None, **overrides):
    """The WSGI application on ``db``; with ``log_file``, logging is set
    up as ``placement.wsgi.api`` sets it up, into that file."""
    conf = fixtures.new_conf(**overrides)
    if log_file is not None:
        conf.set_override('log_file', log_file)
        log_format.setup(conf)
    return deploy.loadapp(conf, db)


def timed_get(app, path, expect=200, headers=None):
    """(seconds, response) of one ``GET path`` through ``app`` from
    127.0.0.1 (which the metrics pages answer); AssertionError unless it
    answered ``expect``."""
    req = webob.Request.blank(path, remote_addr='127.0.0.1',
                              headers=headers)
    start = time.perf_counter()
    resp = req.get_response(app)
    elapsed = time.perf_counter() - start
    assert resp.status_int == expect, resp.text[:300]
    return elapsed, resp


HEADERS = {
    'HTTP_X_AUTH_TOKEN': 'admin',
    'HTTP_ACCEPT': 'application/json',
    'HTTP_OPENSTACK_API_VERSION': 'placement 1.39',
    'HTTP_HOST': '127.0.0.1:8000',
    'HTTP_CONNECTION': 'keep-alive',
}


def environ_for(method, path, body=b''):
    """What a WSGI server passes for ``method path``."""
    path_info, _sep, query = path.partition('?')
    environ = {
        'REQUEST_METHOD': method, 'SCRIPT_NAME': '', 'PATH_INFO': path_info,
        'QUERY_STRING': query, 'SERVER_NAME': '127.0.0.1',
        'SERVER_PORT': '8000', 'SERVER_PROTOCOL': 'HTTP/1.1',
        'REMOTE_ADDR': '127.0.0.1', 'REMOTE_PORT': '40000',
        'wsgi.version': (1, 0), 'wsgi.url_scheme': 'http',
        'wsgi.input': io.BytesIO(body), 'wsgi.errors': sys.stderr,
        'wsgi.multithread': True, 'wsgi.multiprocess': True,
        'wsgi.run_once': False,
    }
    environ.update(HEADERS)
    if body:
        environ['CONTENT_TYPE'] = 'application/json'
        environ['CONTENT_LENGTH'] = str(len(body))
    return environ


def call(app, method, path, body=b''):
    """(status, body bytes) of one request with the environ a WSGI server
    passes, the response fully consumed: what a worker spends on it."""
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer['status'] = status
    result = app(environ_for(method, path, body), start_response)
    try:
        data = b''.join(result)
    finally:
        if hasattr(result, 'close'):
            result.close()
    return int(answer['status'].split(' ', 1)[0]), data
