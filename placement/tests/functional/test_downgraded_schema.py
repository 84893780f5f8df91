"""A worker left running after ``placement-manage db downgrade`` answers
503, never 500, to the requests that need the provider change log, and
keeps serving the others (see api-ref/behaviour-choices.rst, 'What db
downgrade removes')."""

import webob

from placement.db import api as db_api
from placement.db import migration
from placement import deploy
from placement.tests import fixtures

ADMIN = {'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39'}


def _call(app, method, path, body=None):
    req = webob.Request.blank(path, method=method)
    req.headers.update(ADMIN)
    if body is not None:
        req.content_type = 'application/json'
        req.json_body = body
    return req.get_response(app)


def test_change_log_gone_under_a_running_app_is_503(tmp_path):
    db = db_api.Database(fixtures.fresh_database_url(tmp_path, 'downgraded'))
    try:
        conf = fixtures.new_conf(placement_database__sync_on_startup=True)
        deploy.prepare_database(conf, db)  # as a worker starts
        app = fixtures.new_app(conf, db)
        created = _call(app, 'POST', '/resource_providers', {'name': 'rp'})
        assert created.status_int == 200, created.text
        rp = created.json_body['uuid']
        assert _call(app, 'GET', '/allocation_candidates?resources=VCPU:1'
                     ).status_int == 200

        migration.downgrade(db, 'a082b8bb98d0')
        for path in ('/allocation_candidates?resources=VCPU:1',
                     '/allocation_candidates/explain?resources=VCPU:1',
                     '/resource_providers',
                     '/resource_providers?resources=VCPU:1'):
            resp = _call(app, 'GET', path)
            assert resp.status_int == 503, (path, resp.text)
            assert resp.json_body['errors'][0]['code'] == (
                'placement.database_unavailable')
            assert resp.headers['retry-after'] == '5'
        # Writes and reads that do not need the change log still work.
        assert _call(app, 'POST', '/resource_providers',
                     {'name': 'after'}).status_int == 200
        assert _call(app, 'PUT', '/resource_providers/%s/inventories' % rp,
                     {'resource_provider_generation': 0,
                      'inventories': {'VCPU': {'total': 2}}}
                     ).status_int == 200
        # Listings the kept provider rows do not serve read the table.
        listed = _call(app, 'GET', '/resource_providers?name=after')
        assert listed.status_int == 200
        assert [p['name'] for p in listed.json_body[
            'resource_providers']] == ['after']
        listed = _call(app, 'GET', '/resource_providers?in_tree=%s' % rp)
        assert listed.status_int == 200
        assert [p['name'] for p in listed.json_body[
            'resource_providers']] == ['rp']
    finally:
        db.dispose()
