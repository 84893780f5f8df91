"""Nothing secret leaves the process.

Sentinel secrets go into the configuration (the database password in
the connection URL, the keystone_authtoken password) and into request
headers (``X-Auth-Token``, ``X-Service-Token``). Then everything the
service produces is searched for them: every response (status line,
headers, body, errors included), every log line at DEBUG and above,
the metrics (``GET /metrics`` labels), the health check details, the
CADF audit events, and ``placement-status`` output, while the database
works and while it does not answer.
"""

import base64
import json
import logging
import os
import urllib.parse
import uuid

import pytest
import webob

from placement.cmd import status
from placement import conf as placement_conf
from placement.db import api as db_api
from placement import deploy
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import keystone_server


def _sentinel(name):
    return 'Sentinel%s%s' % (name, uuid.uuid4().hex * 2)


DB_PASSWORD = _sentinel('DbPassword')
KEYSTONE_PASSWORD = _sentinel('KeystonePassword')
USER_TOKEN = _sentinel('UserToken')
READER_TOKEN = _sentinel('ReaderToken')
SERVICE_TOKEN = _sentinel('ServiceToken')
UNKNOWN_TOKEN = _sentinel('UnknownToken')
SECRETS = (DB_PASSWORD, KEYSTONE_PASSWORD, USER_TOKEN, READER_TOKEN,
           SERVICE_TOKEN, UNKNOWN_TOKEN)


def _forms(secret):
    """The secret as it might appear: plain, URL-quoted, base64, or
    partly masked (its random end, as pycadf leaves a token's last
    eighth visible)."""
    return {secret, urllib.parse.quote(secret),
            base64.b64encode(secret.encode()).decode(), secret[-8:]}


def assert_clean(text, where):
    for secret in SECRETS:
        for form in _forms(secret):
            assert form not in text, 'secret %s... in %s:\n%s' % (
                secret[:20], where, text[max(0, text.find(form) - 500):
                                         text.find(form) + 200])


@pytest.fixture
def logs(caplog):
    """Every log line of every logger, DEBUG included, with tracebacks."""
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture(scope='module')
def keystone():
    with keystone_server.KeystoneServer(KEYSTONE_PASSWORD) as server:
        server.add(USER_TOKEN, 'alice', 'p-admin', ['admin', 'member',
                                                    'reader'])
        server.add(READER_TOKEN, 'bob', 'p1', ['reader'])
        server.add(SERVICE_TOKEN, 'nova', 'services', ['service'])
        yield server


def _database_url():
    """A working database whose URL carries DB_PASSWORD where the
    server lets one be given (PostgreSQL trusts loopback in the tests),
    else the test database as it is."""
    db, cleanup = fixtures.new_database()
    url = db.engine.url
    if url.get_backend_name() == 'postgresql':
        url = url.set(password=DB_PASSWORD)
    return url.render_as_string(hide_password=False), cleanup


def _conf_file(tmp_path, keystone, connection, **extra):
    options = {
        'DEFAULT': {'debug': 'True'},
        'api': {'auth_strategy': 'keystone'},
        'placement_database': {'connection': connection,
                               'max_retries': '1', 'retry_interval': '0'},
        'metrics': {'capacity_refresh_interval': '0'},
        'keystone_authtoken': keystone.authtoken_options(),
        # Every request audited, to the log.
        'audit': {'enabled': 'True', 'ignore_req_list': '',
                  'audit_map_file': os.path.join(
                      gunicorn_server.CHECKOUT, 'etc', 'placement',
                      'api_audit_map.conf')},
    }
    for group, values in extra.items():
        options.setdefault(group, {}).update(values)
    path = tmp_path / ('placement-%s.conf' % uuid.uuid4().hex[:6])
    path.write_text(''.join(
        '[%s]\n' % group + ''.join('%s = %s\n' % item
                                   for item in values.items())
        for group, values in options.items()))
    return str(path)


def _send(app, method, path, token=USER_TOKEN, body=None, headers=None):
    req = webob.Request.blank(path, method=method, remote_addr='192.0.2.9')
    req.headers['openstack-api-version'] = 'placement latest'
    if token:
        req.headers['x-auth-token'] = token
    req.headers['x-service-token'] = SERVICE_TOKEN
    req.headers.update(headers or {})
    if body is not None:
        req.body = body if isinstance(body, bytes) else json.dumps(
            body).encode()
        req.content_type = 'application/json'
    resp = req.get_response(app)
    return '%s %s\n%s\n\n%s' % (method, resp.status, '\n'.join(
        '%s: %s' % item for item in resp.headerlist), resp.body.decode(
            'utf-8', 'replace'))


def _every_kind_of_answer(app):
    rp = str(uuid.uuid4())
    sent = [
        ('GET', '/', None, None),
        ('POST', '/resource_providers', {'name': 'leak', 'uuid': rp}, None),
        ('PUT', '/resource_providers/%s/inventories' % rp,
         {'resource_provider_generation': 0,
          'inventories': {'VCPU': {'total': 4}}}, None),
        ('GET', '/resource_providers/%s' % uuid.uuid4(), None, None),
        ('POST', '/resource_providers', b'{not json', None),
        ('POST', '/resource_providers', {'name': 1}, None),
        ('PATCH', '/resource_providers', None, None),
        ('GET', '/resource_providers', None, {'accept': 'text/csv'}),
        ('GET', '/resource_providers?' + 'x=1&' * 20000, None, None),
        ('POST', '/resource_providers', b'{' + b' ' * (9 * 2 ** 20) + b'}',
         None),
        ('GET', '/allocation_candidates?resources=NOPE:1', None, None),
        ('GET', '/allocation_candidates?resources=VCPU:1', None, None),
        ('GET', '/metrics', None, None),
        ('GET', '/capacity', None, None),
        ('GET', '/healthcheck', None, None),
        ('GET', '/openapi.json', None, None),
        ('GET', '/resource_providers', None,
         {'openstack-api-version': 'placement 9.99'}),
    ]
    answers = [_send(app, m, p, body=b, headers=h) for m, p, b, h in sent]
    answers += [
        _send(app, 'GET', '/resource_providers', token=UNKNOWN_TOKEN),
        _send(app, 'GET', '/resource_providers', token=None),
        _send(app, 'GET', '/usages?project_id=p2', token=READER_TOKEN),
        _send(app, 'GET', '/metrics', token=READER_TOKEN),
        _send(app, 'GET', '/healthcheck', token=UNKNOWN_TOKEN),
    ]
    return answers


def test_nothing_secret_while_the_database_works(tmp_path, keystone, logs,
                                                 capsys):
    url, cleanup = _database_url()
    try:
        config = _conf_file(tmp_path, keystone, url)
        conf = placement_conf.build([], config_files=[config])
        app = deploy.loadapp(conf)
        answers = _every_kind_of_answer(app)
        assert any(answer.startswith('GET 200') and 'placement_http_'
                   in answer for answer in answers)
        assert any('"database"' in answer for answer in answers)
        for answer in answers:
            assert_clean(answer, 'a response')
        assert status.main(['--config-file', config, 'upgrade', 'check']) \
            in (0, 1)
        assert status.main(['--config-file', config, 'upgrade', 'check',
                            '--json']) in (0, 1)
        printed = capsys.readouterr()
        assert_clean(printed.out + printed.err, 'placement-status output')
        # The secrets were in use (keystone saw the tokens and the
        # password): finding none of them above means something.
        assert any(h.get('X-Subject-Token') == USER_TOKEN
                   for _m, _p, h, _b in keystone.seen)
        assert any(h.get('X-Subject-Token') == SERVICE_TOKEN
                   for _m, _p, h, _b in keystone.seen)
        assert any(KEYSTONE_PASSWORD.encode() in body
                   for _m, _p, _h, body in keystone.seen)
    finally:
        cleanup()
    assert any(r.levelno == logging.DEBUG for r in logs.records)
    assert 'audit.http.response' in logs.text
    assert_clean(logs.text, 'the logs')


def test_nothing_secret_while_the_database_does_not_answer(
        tmp_path, keystone, logs, capsys):
    port = gunicorn_server.free_port()
    for url in ('postgresql+psycopg2://placement:%s@127.0.0.1:%d/placement'
                % (DB_PASSWORD, port),
                'mysql+pymysql://placement:%s@127.0.0.1:%d/placement'
                % (DB_PASSWORD, port)):
        config = _conf_file(tmp_path, keystone, url)
        conf = placement_conf.build([], config_files=[config])
        with pytest.raises(Exception) as failed:
            deploy.loadapp(conf)
        assert_clean('%s %r' % (failed.value, failed.value),
                     'the start-up failure')
        db = db_api.Database(url)
        app = deploy.build_app(conf, db)
        answers = [_send(app, 'GET', '/resource_providers'),
                   _send(app, 'GET', '/healthcheck'),
                   _send(app, 'GET', '/metrics'),
                   _send(app, 'POST', '/resource_providers',
                         body={'name': 'x'})]
        assert answers[0].startswith('GET 503')
        assert '"reachable": false' in answers[1]
        for answer in answers:
            assert_clean(answer, 'a response')
        assert_clean('%r %s' % (db.engine, db.engine.url), 'the engine')
        assert status.main(['--config-file', config, 'upgrade', 'check']
                           ) != 0
        printed = capsys.readouterr()
        assert_clean(printed.out + printed.err, 'placement-status output')
        db.dispose()
    assert_clean(logs.text, 'the logs')
    assert 'Waiting for the database' in logs.text
