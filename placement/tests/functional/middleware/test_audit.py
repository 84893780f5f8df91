"""CADF audit events (``[audit] enabled``), with the log notifier that
needs no message bus: a write produces an event naming its initiator
and target; reads are not audited by default; no part of the token is
in the event; off by default.
"""

import json
import logging
import os
import uuid

import pytest
import webob

from placement.middleware import audit
from placement import conf as placement_conf
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import keystone_server

SHIPPED_MAP = os.path.join(gunicorn_server.CHECKOUT, 'etc', 'placement',
                           'api_audit_map.conf')
TOKEN = 'audit-token-%s' % uuid.uuid4().hex


@pytest.fixture
def events(caplog):
    """(event type, CADF payload) of each event logged so far."""
    caplog.set_level(logging.INFO, logger=audit.LOG_NAME)

    def payloads():
        return [(r.args['event_type'], r.args['payload'])
                for r in caplog.records if r.name == audit.LOG_NAME
                and isinstance(r.args, dict) and 'payload' in r.args]
    return payloads


@pytest.fixture(scope='module')
def keystone():
    with keystone_server.KeystoneServer('audit-password') as server:
        server.add(TOKEN, 'nova', 'p-services', ['service', 'admin'])
        yield server


def _app(tmp_path, keystone, **audit_options):
    options = dict({'enabled': 'True', 'audit_map_file': SHIPPED_MAP},
                   **audit_options)
    lines = ['[api]', 'auth_strategy = keystone', '[audit]']
    lines += ['%s = %s' % item for item in options.items()]
    lines += ['[keystone_authtoken]']
    lines += ['%s = %s' % item for item in
              keystone.authtoken_options().items()]
    path = tmp_path / 'placement.conf'
    path.write_text('\n'.join(lines) + '\n')
    conf = placement_conf.build([], config_files=[str(path)])
    db, cleanup = fixtures.new_database()
    return fixtures.new_app(conf, db), cleanup


def _send(app, method, path, body=None):
    req = webob.Request.blank(path, method=method, remote_addr='192.0.2.44')
    req.headers['x-auth-token'] = TOKEN
    req.headers['openstack-api-version'] = 'placement latest'
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    return req.get_response(app)


def test_a_write_is_audited_with_initiator_and_target(tmp_path, keystone,
                                                     events):
    app, cleanup = _app(tmp_path, keystone)
    try:
        rp = str(uuid.uuid4())
        assert _send(app, 'POST', '/resource_providers',
                     {'name': 'audited', 'uuid': rp}).status_int == 200
        assert _send(app, 'PUT', '/resource_providers/%s/inventories' % rp,
                     {'resource_provider_generation': 0,
                      'inventories': {'VCPU': {'total': 4}}}
                     ).status_int == 200
        assert _send(app, 'GET', '/resource_providers').status_int == 200
    finally:
        cleanup()
    found = events()
    assert [kind for kind, _ in found] == [
        'audit.http.request', 'audit.http.response'] * 2
    created = found[1][1]
    assert created['action'] == 'create'
    assert created['outcome'] == 'success'
    assert created['reason']['reasonCode'] == '200'
    initiator = created['initiator']
    assert initiator['id'] == 'u-nova'
    assert initiator['name'] == 'nova'
    assert initiator['project_id'] == 'p-services'
    assert initiator['host']['address'] == '192.0.2.44'
    assert created['target']['typeURI'] == (
        'service/placement/resource_providers')
    assert created['requestPath'] == '/resource_providers'
    updated = found[3][1]
    assert updated['action'] == 'update'
    assert updated['target']['typeURI'] == (
        'service/placement/resource_providers/uuid/inventories')
    assert updated['requestPath'] == '/resource_providers/%s/inventories' % rp
    # pycadf would show an eighth of the token at each end.
    text = json.dumps(found)
    assert TOKEN[:6] not in text and TOKEN[-6:] not in text


def test_reads_are_audited_when_asked(tmp_path, keystone, events):
    app, cleanup = _app(tmp_path, keystone, ignore_req_list='')
    try:
        assert _send(app, 'GET', '/resource_providers').status_int == 200
    finally:
        cleanup()
    (_, request), (_, response) = events()
    assert response['action'] == 'read/list'
    assert response['initiator']['id'] == 'u-nova'


def test_off_by_default(events):
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(fixtures.new_conf(), db)
        assert fixtures.call_as_admin(app, 'POST', '/resource_providers', {
            'name': 'quiet'}).status_int == 200
    finally:
        cleanup()
    assert events() == []


def test_the_map_is_found_beside_the_configuration(tmp_path):
    conf = placement_conf.build([], config_files=[])
    conf.set_override('enabled', True, group='audit')
    with pytest.raises(audit.ConfigurationError):
        audit.map_file(conf)
    (tmp_path / 'api_audit_map.conf').write_text(
        open(SHIPPED_MAP).read())
    (tmp_path / 'placement.conf').write_text('[audit]\nenabled = True\n')
    conf = placement_conf.build(
        [], config_files=[str(tmp_path / 'placement.conf')])
    assert audit.map_file(conf) == str(tmp_path / 'api_audit_map.conf')
