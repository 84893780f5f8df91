"""The service under a real gunicorn, configured by environment only."""

import concurrent.futures
from importlib import metadata
import http.client
import json
import os
import re
import time
import uuid

import pytest
import sqlalchemy as sa

from placement.tests import fixtures
from placement.tests.gunicorn_server import GunicornServer


@pytest.mark.parametrize('enforce_new_defaults', [True, False])
def test_policy_and_cors_from_environment(tmp_path, enforce_new_defaults):
    # A JSON override pointing the list rule at service_api: under the new
    # defaults only services pass, under the legacy ones service_api's
    # deprecated "role:admin" lets admins in too.
    policy_file = tmp_path / 'policy.json'
    policy_file.write_text(json.dumps(
        {'placement:resource_providers:list': 'rule:service_api'}))
    environment = {
        'OS_OSLO_POLICY__POLICY_FILE': str(policy_file),
        'OS_OSLO_POLICY__ENFORCE_NEW_DEFAULTS': str(enforce_new_defaults),
        'OS_CORS__ALLOWED_ORIGIN': 'http://ui.example',
    }
    db_url = 'sqlite:///%s' % (tmp_path / 'placement.sqlite')
    with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=1,
                        environment=environment) as server:
        status, _h, _b = server.request(
            'GET', '/resource_providers', headers={'x-roles': 'service'})
        assert status == 200
        status, _h, body = server.request('GET', '/resource_providers')
        if enforce_new_defaults:
            assert status == 403
            assert 'placement:resource_providers:list' in (
                body['errors'][0]['detail'])
        else:
            assert status == 200
        # Rules the file does not name keep their defaults.
        assert server.request('GET', '/traits')[0] == 200
        _s, headers, _b = server.request(
            'GET', '/', token=None, headers={'origin': 'http://ui.example'})
        assert headers['access-control-allow-origin'] == 'http://ui.example'
    # The WSGI application warns at start that noauth2 trusts anyone.
    log = (tmp_path / 'gunicorn.log').read_text(errors='replace')
    assert 'auth_strategy = noauth2: requests are NOT authenticated' in log


def test_many_workers_share_one_database(tmp_path):
    url = fixtures.server_url()
    if url is None:
        pytest.skip('needs PostgreSQL or MySQL (PLACEMENT_TEST_DB_URL)')
    # Four workers start at once on an empty database: the schema
    # migration and the standard-name sync must not trip each other.
    db_url = fixtures.create_server_database(url, purpose='many_workers')
    with GunicornServer(db_url, tmp_path / 'gunicorn.log',
                        workers=4) as server:
        names = ['rp-%02d' % i for i in range(40)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            created = list(pool.map(
                lambda name: server.request(
                    'POST', '/resource_providers', {'name': name}),
                names))
        assert [status for status, _h, _b in created] == [200] * len(names)
        status, _h, body = server.request('GET', '/resource_providers')
        assert status == 200
        assert sorted(rp['name'] for rp in body['resource_providers']) == (
            names)

        # Racing writers with the same generation: exactly one wins, the
        # others get the documented 409, whatever worker served them.
        provider = created[0][2]['uuid']
        inventory = {'resource_provider_generation': 0,
                     'inventories': {'VCPU': {'total': 8}}}
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(
                lambda _i: server.request(
                    'PUT', '/resource_providers/%s/inventories' % provider,
                    inventory),
                range(8)))
        statuses = sorted(status for status, _h, _b in results)
        assert statuses == [200] + [409] * 7
        assert {body['errors'][0]['code'] for status, _h, body in results
                if status == 409} == {'placement.concurrent_update'}
        status, _h, body = server.request(
            'GET', '/resource_providers/%s/inventories' % provider)
        assert body['resource_provider_generation'] == 1
        assert server.request(
            'GET', '/resource_providers/%s' % uuid.uuid4())[0] == 404


def _readme_request_line_option():
    """The ``--limit-request-line`` value of the installation guide's
    gunicorn recipe."""
    readme = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                          'doc', 'source', 'install', 'index.rst')
    with open(readme, encoding='utf-8') as f:
        found = re.findall(r'gunicorn [^\n]*--limit-request-line (\d+)',
                           f.read())
    assert len(found) == 1, found
    return found[0]


def _gunicorn_major():
    # Not ``import gunicorn``: with gunicorn imported, the metrics take
    # this test process for a gunicorn master and export their directory
    # to the servers later tests start.
    return int(metadata.version('gunicorn').split('.')[0])


def _status_of_get(server, path, timeout=60):
    # gunicorn's own 414 page and the health check's answer are not JSON:
    # read the status line only.
    connection = http.client.HTTPConnection('127.0.0.1', server.port,
                                            timeout=timeout)
    try:
        connection.request('GET', path, headers={
            'x-auth-token': 'admin',
            'openstack-api-version': 'placement latest'})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_readme_request_line_limit_fits_300_granular_groups(tmp_path):
    # 300 groups of the bandwidth a neutron port asks for: ~23 KB.
    query = '&'.join(
        'resources%d=NET_BW_EGR_KILOBIT_PER_SEC:1000,'
        'NET_BW_IGR_KILOBIT_PER_SEC:1000' % group
        for group in range(1, 301))
    path = '/allocation_candidates?%s&group_policy=none' % query
    assert len(path) > 8190  # beyond any finite gunicorn limit
    db_url = 'sqlite:///%s' % (tmp_path / 'placement.sqlite')
    with GunicornServer(db_url, tmp_path / 'default.log', workers=1) as server:
        status, body = _status_of_get(server, path)
    # gunicorn's own refusal: 414 since gunicorn 26, 400 before.
    assert status in (400, 414), body[:300]
    assert b'Request Line is too large' in body
    option = ['--limit-request-line', _readme_request_line_option()]
    with GunicornServer(db_url, tmp_path / 'readme.log', workers=1,
                        gunicorn_args=option) as server:
        status, body = _status_of_get(server, path)
    if _gunicorn_major() < 26:
        # As the installation guide says: earlier gunicorn reads 0 as
        # 8,190 bytes.
        assert status == 400, body[:300]
        return
    assert status == 200, body[:300]
    assert json.loads(body)['allocation_requests'] == []


def test_gevent_worker_serves_idle_keep_alive_clients_on_a_small_pool(
        tmp_path):
    """gunicorn's gevent worker serves each open client connection in a
    green thread of its own. Clients that keep their connections open
    between requests (as keystoneauth sessions do) must not each hold a
    database connection: with room for two in the pool, the third
    client's read would wait for one and answer 503."""
    url = fixtures.server_url()
    if url is None:
        pytest.skip('needs PostgreSQL or MySQL (PLACEMENT_TEST_DB_URL): '
                    'the pool size applies to database servers')
    db_url = fixtures.create_server_database(url, purpose='gevent_worker')
    environment = {'OS_PLACEMENT_DATABASE__MAX_POOL_SIZE': '2',
                   'OS_PLACEMENT_DATABASE__MAX_OVERFLOW': '0',
                   'OS_PLACEMENT_DATABASE__POOL_TIMEOUT': '3'}
    with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=1,
                        environment=environment, gunicorn_args=(
                            '--worker-class', 'gevent',
                            '--keep-alive', '60')) as server:
        clients = [http.client.HTTPConnection('127.0.0.1', server.port,
                                              timeout=30)
                   for _ in range(6)]
        statuses = []
        for _round in range(3):
            for client in clients:
                client.request('GET', '/resource_providers',
                               headers={'x-auth-token': 'admin'})
                answer = client.getresponse()
                answer.read()
                assert answer.getheader('connection', '').lower() != (
                    'close')
                statuses.append(answer.status)
        for client in clients:
            client.close()
        assert statuses == [200] * 18, server.log()


_LOCK_AGAINST_WRITES = {
    # Reads go on; a new provider waits for the lock.
    'postgresql': 'LOCK TABLE resource_providers IN EXCLUSIVE MODE',
    'mysql': 'LOCK TABLES resource_providers READ',
}


def test_gevent_worker_serves_others_while_a_request_waits_for_a_lock(
        tmp_path):
    """Under the gevent worker, a request waiting for the database (here
    for a table lock) must not hold the worker's other clients, nor the
    health check: psycopg2 waits in libpq unless given gevent's wait
    (placement.db.green); PyMySQL is pure Python and green already."""
    url = fixtures.server_url()
    if url is None:
        pytest.skip('needs PostgreSQL or MySQL (PLACEMENT_TEST_DB_URL)')
    db_url = fixtures.create_server_database(url, purpose='gevent_lock')
    with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=1,
                        environment={'OS_API__HEALTHCHECK_CACHE_TIME': '0'},
                        gunicorn_args=('--worker-class', 'gevent')
                        ) as server, concurrent.futures.ThreadPoolExecutor(
                            1) as pool:
        assert _status_of_get(server, '/resource_providers', 10)[0] == 200
        engine = sa.create_engine(db_url)
        try:
            with engine.connect() as locker:
                locker.exec_driver_sql(
                    _LOCK_AGAINST_WRITES[fixtures.backend_name()])
                waiting = pool.submit(server.request, 'POST',
                                      '/resource_providers', {'name': 'x'})
                time.sleep(0.5)
                for path in ('/', '/healthcheck', '/resource_providers'):
                    assert _status_of_get(server, path, 3)[0] == 200, path
                assert not waiting.done()
                if fixtures.backend_name() == 'mysql':
                    locker.exec_driver_sql('UNLOCK TABLES')
                locker.rollback()
                status, _h, body = waiting.result(timeout=30)
        finally:
            engine.dispose()
        assert status == 200, body
        assert server.request('GET', '/resource_providers?name=x')[2][
            'resource_providers'][0]['uuid'] == body['uuid']
        assert server.errors() == ''
