"""The fixtures other projects run placement with, used as they use them.

nova's and osc-placement's functional tests add ``PlacementFixture`` to a
test case with ``useFixture`` and talk to ``fixture.endpoint`` through a
keystoneauth1 session; tools use ``PlacementDirect`` as a context manager
giving a keystoneauth1 Adapter. Neither may open a socket, and nothing
may leak from one test's fixture to the next.
"""

import gc
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import unittest
import uuid
import weakref

import fixtures
from keystoneauth1 import adapter
from keystoneauth1 import session
from oslo_config import cfg
from oslo_config import fixture as config_fixture
import requests

from placement import conf as placement_conf
from placement import context
from placement.db import api as db_api
from placement import direct
from placement.objects import provider_listing
from placement.objects import resource_class
from placement.objects import resource_provider
from placement.tests import fixtures as placement_fixtures
from placement.tests.functional.fixtures import placement

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..',
                                        '..', '..'))


class NoNetwork(fixtures.Fixture):
    """Any name lookup or connection attempt fails the test."""

    def _setUp(self):
        def refuse(*args, **kwargs):
            raise AssertionError('network used: %r' % (args,))

        self.useFixture(fixtures.MonkeyPatch('socket.getaddrinfo', refuse))
        self.useFixture(fixtures.MonkeyPatch('socket.socket.connect',
                                             refuse))


def client(token, version='1.39'):
    """A keystoneauth1 adapter as nova builds one (no auth plugin, errors
    returned, not raised), as a function of method and URL."""
    ks = adapter.Adapter(session.Session(auth=None), raise_exc=False)
    headers = {'x-auth-token': token,
               'openstack-api-version': 'placement %s' % version}

    def call(method, url, **kwargs):
        return ks.request(url, method, headers=headers, **kwargs)
    return call


class FixtureTestCase(fixtures.TestWithFixtures, unittest.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(NoNetwork())

    def client(self, token, version='1.39'):
        return client(token, version)


class TestPlacementFixture(FixtureTestCase):

    def test_serves_the_api_at_its_endpoint(self):
        fixture = self.useFixture(placement.PlacementFixture())
        call = self.client(fixture.token)
        rp = str(uuid.uuid4())
        resp = call('POST', fixture.endpoint + '/resource_providers',
                    json={'name': 'cn1', 'uuid': rp})
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertEqual('%s/resource_providers/%s' % (fixture.endpoint, rp),
                         resp.headers['location'])
        self.assertEqual('/placement/resource_providers/%s' % rp,
                         resp.json()['links'][0]['href'])
        resp = call('PUT', '%s/resource_providers/%s/inventories'
                    % (fixture.endpoint, rp),
                    json={'resource_provider_generation': 0,
                          'inventories': {'VCPU': {'total': 8}}})
        self.assertEqual(200, resp.status_code, resp.text)
        consumer = str(uuid.uuid4())
        resp = call('PUT', '%s/allocations/%s' % (fixture.endpoint, consumer),
                    json={'allocations': {rp: {'resources': {'VCPU': 2}}},
                          'project_id': 'p', 'user_id': 'u',
                          'consumer_generation': None,
                          'consumer_type': 'INSTANCE'})
        self.assertEqual(204, resp.status_code, resp.text)
        resp = call('GET', fixture.endpoint
                    + '/allocation_candidates?resources=VCPU:6')
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertEqual({'VCPU': {'capacity': 8, 'used': 2}},
                         resp.json()['provider_summaries'][rp]['resources'])

    def test_standard_names_and_version_document(self):
        fixture = self.useFixture(placement.PlacementFixture())
        call = self.client(fixture.token)
        resp = call('GET', fixture.endpoint + '/resource_classes/VCPU')
        self.assertEqual(200, resp.status_code, resp.text)
        resp = call('GET', fixture.endpoint + '/traits/HW_CPU_X86_AVX')
        self.assertEqual(204, resp.status_code, resp.text)
        resp = call('GET', fixture.endpoint + '/')
        self.assertEqual('1.39', resp.json()['versions'][0]['max_version'])

    def test_noauth2_and_legacy_policy(self):
        fixture = self.useFixture(placement.PlacementFixture())
        self.assertEqual('admin', fixture.token)
        conf = fixture.conf_fixture.conf
        self.assertEqual('noauth2', conf.api.auth_strategy)
        self.assertFalse(conf.oslo_policy.enforce_new_defaults)
        url = fixture.endpoint + '/resource_providers'
        self.assertEqual(401, self.client('')('GET', url).status_code)
        # Legacy rules: a non-admin user is refused, the admin is not.
        self.assertEqual(403, self.client('alice')('GET', url).status_code)
        self.assertEqual(200, self.client('admin')('GET', url).status_code)

    def test_each_fixture_starts_empty_and_cleans_up(self):
        first = placement.PlacementFixture()
        first.setUp()
        call = self.client(first.token)
        resp = call('POST', first.endpoint + '/resource_providers',
                    json={'name': 'only-in-first'})
        self.assertEqual(200, resp.status_code, resp.text)
        first.cleanUp()
        # No intercept left: the request would need the network.
        self.assertRaises(AssertionError, requests.get,
                          first.endpoint + '/resource_providers')
        second = self.useFixture(placement.PlacementFixture())
        self.assertNotEqual(first.endpoint, second.endpoint)
        resp = self.client(second.token)(
            'GET', second.endpoint + '/resource_providers')
        self.assertEqual([], resp.json()['resource_providers'])

    def test_two_fixtures_at_once_are_apart(self):
        one = self.useFixture(placement.PlacementFixture())
        two = self.useFixture(placement.PlacementFixture())
        call = self.client('admin')
        call('POST', one.endpoint + '/resource_providers',
             json={'name': 'in-one'})
        resp = call('GET', two.endpoint + '/resource_providers')
        self.assertEqual([], resp.json()['resource_providers'])

    def test_concurrent_requests_share_the_in_memory_database(self):
        fixture = self.useFixture(placement.PlacementFixture())
        call = self.client(fixture.token)
        statuses = []

        def create(worker):
            for n in range(10):
                resp = call('POST', fixture.endpoint + '/resource_providers',
                            json={'name': 'rp-%d-%d' % (worker, n)})
                statuses.append(resp.status_code)

        threads = [threading.Thread(target=create, args=(w,))
                   for w in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([200] * 60, statuses)
        resp = call('GET', fixture.endpoint + '/resource_providers')
        self.assertEqual(60, len(resp.json()['resource_providers']))

    def test_subclass_hook_sets_a_file_database(self):
        path = self.useFixture(fixtures.TempDir()).join('placement.sqlite')

        class FileFixture(placement.PlacementFixture):
            calls = []

            def _configure_placement(self, conf_fixture):
                # Options exist, the database does not yet.
                self.calls.append(
                    conf_fixture.conf.placement_database.connection)
                conf_fixture.config(group='placement_database',
                                    connection='sqlite:///' + path)

        fixture = self.useFixture(FileFixture())
        self.assertEqual([None], FileFixture.calls)
        self.assertEqual('sqlite:///' + path,
                         fixture.conf_fixture.conf.placement_database
                         .connection)
        resp = self.client(fixture.token)(
            'POST', fixture.endpoint + '/resource_providers',
            json={'name': 'on-file'})
        self.assertEqual(200, resp.status_code, resp.text)
        with sqlite3.connect(path) as conn:
            names = conn.execute(
                'SELECT name FROM resource_providers').fetchall()
        self.assertEqual([('on-file',)], names)

    def test_callers_configuration_without_registering(self):
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        conf([], default_config_files=[])
        conf_fixture = self.useFixture(config_fixture.Config(conf))
        fixture = self.useFixture(placement.PlacementFixture(
            conf_fixture=conf_fixture, register_opts=False))
        self.assertIs(conf_fixture, fixture.conf_fixture)
        resp = self.client(fixture.token)(
            'GET', fixture.endpoint + '/resource_providers')
        self.assertEqual(200, resp.status_code, resp.text)

    def test_without_db_uses_the_configured_one(self):
        conf_fixture = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        placement_conf.register_opts(conf_fixture.conf)
        database = self.useFixture(placement_fixtures.Database(
            conf_fixture, set_config=True))
        fixture = self.useFixture(placement.PlacementFixture(
            conf_fixture=conf_fixture, register_opts=False, db=False))
        self.assertFalse(fixture.db)
        resp = self.client(fixture.token)(
            'POST', fixture.endpoint + '/resource_providers',
            json={'name': 'seen-by-the-fixture'})
        self.assertEqual(200, resp.status_code, resp.text)
        found = provider_listing.list_providers(
            context.AdminContext(database.db))
        self.assertEqual(['seen-by-the-fixture'], [p.name for p in found])

    def test_without_intercept_only_configuration_and_database(self):
        fixture = self.useFixture(placement.PlacementFixture(
            use_intercept=False))
        self.assertIsNone(fixture.endpoint)
        self.assertIsNone(fixture.app)
        self.assertTrue(fixture.conf_fixture.conf.placement_database
                        .connection.startswith('sqlite:///file:placement-'))
        # Nothing to serve from, nothing built: no database needed.
        bare = self.useFixture(placement.PlacementFixture(
            db=False, use_intercept=False))
        self.assertIsNone(bare.conf_fixture.conf.placement_database
                          .connection)


class TestUnderEventlet(unittest.TestCase):
    """nova's functional tests run monkey-patched by eventlet: green
    threads calling the fixture at once must all be served."""

    SCRIPT = textwrap.dedent("""
        import eventlet
        eventlet.monkey_patch()
        import requests
        from placement.tests.functional.fixtures import placement

        fixture = placement.PlacementFixture()
        fixture.setUp()
        headers = {'x-auth-token': fixture.token,
                   'openstack-api-version': 'placement 1.39'}

        def work(worker):
            statuses = []
            for n in range(3):
                statuses.append(requests.post(
                    fixture.endpoint + '/resource_providers',
                    json={'name': 'g-%d-%d' % (worker, n)},
                    headers=headers).status_code)
                statuses.append(requests.get(
                    fixture.endpoint + '/allocation_candidates'
                    '?resources=VCPU:1', headers=headers).status_code)
            return statuses

        with eventlet.Timeout(60):
            results = list(eventlet.GreenPool(6).imap(work, range(6)))
        listed = requests.get(fixture.endpoint + '/resource_providers',
                              headers=headers).json()
        fixture.cleanUp()
        print(sorted({s for r in results for s in r}),
              len(listed['resource_providers']))
        """)

    def test_green_threads_share_a_fixture(self):
        env = dict(os.environ, PYTHONPATH=CHECKOUT)
        result = subprocess.run(
            [sys.executable, '-W', 'ignore', '-c', self.SCRIPT], env=env,
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        self.assertEqual('[200] 18', result.stdout.strip())


class TestDatabaseFixture(FixtureTestCase):

    def conf_fixture(self):
        conf_fixture = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        placement_conf.register_opts(conf_fixture.conf)
        return conf_fixture

    def test_in_memory_with_standard_names(self):
        conf_fixture = self.conf_fixture()
        database = self.useFixture(placement_fixtures.Database(conf_fixture))
        self.assertTrue(database.db.in_memory)
        self.assertIsNone(conf_fixture.conf.placement_database.connection)
        classes = resource_class.list_classes(
            context.AdminContext(database.db))
        self.assertIn('VCPU', [rc.name for rc in classes])

    def test_set_config_writes_the_connection(self):
        conf_fixture = self.conf_fixture()
        database = self.useFixture(placement_fixtures.Database(
            conf_fixture, set_config=True))
        self.assertEqual(database.url,
                         conf_fixture.conf.placement_database.connection)

    def test_configured_connection_is_kept(self):
        conf_fixture = self.conf_fixture()
        url = 'sqlite:///' + self.useFixture(fixtures.TempDir()).join('p.db')
        conf_fixture.config(group='placement_database', connection=url)
        database = self.useFixture(placement_fixtures.Database(
            conf_fixture, set_config=True))
        self.assertEqual(url, database.url)
        self.assertFalse(database.db.in_memory)

    def test_each_in_memory_database_is_new(self):
        conf_fixture = self.conf_fixture()
        one = self.useFixture(placement_fixtures.Database(conf_fixture))
        resource_provider.create(context.AdminContext(one.db),
                                 str(uuid.uuid4()), 'in-one')
        two = self.useFixture(placement_fixtures.Database(conf_fixture))
        self.assertEqual([], provider_listing.list_providers(
            context.AdminContext(two.db)))

    def test_a_disposed_database_can_be_freed(self):
        # A test process makes one per test: nothing may keep them all.
        db = db_api.Database('sqlite://')
        db.dispose()
        ref = weakref.ref(db)
        del db
        gc.collect()
        self.assertIsNone(ref())


class TestOnDatabaseServer(fixtures.TestWithFixtures, unittest.TestCase):
    """A subclass pointing the fixture at a server database (whose
    driver may well use sockets)."""

    def test_on_a_database_server(self):
        server = placement_fixtures.server_url()
        if server is None:
            self.skipTest('needs PostgreSQL or MySQL (PLACEMENT_TEST_DB_URL)')
        url = placement_fixtures.create_server_database(server, 'fixture')

        class ServerFixture(placement.PlacementFixture):
            def _configure_placement(self, conf_fixture):
                conf_fixture.config(group='placement_database',
                                    connection=url)

        fixture = self.useFixture(ServerFixture())
        call = client(fixture.token)
        resp = call('POST', fixture.endpoint + '/resource_providers',
                    json={'name': 'on-a-server'})
        self.assertEqual(200, resp.status_code, resp.text)
        resp = call('GET', fixture.endpoint + '/resource_classes/VCPU')
        self.assertEqual(200, resp.status_code, resp.text)


class TestPlacementDirect(FixtureTestCase):

    def conf(self):
        conf_fixture = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        placement_conf.register_opts(conf_fixture.conf)
        conf_fixture.conf([], default_config_files=[])
        conf_fixture.config(group='api', auth_strategy='noauth2')
        self.useFixture(placement_fixtures.Database(conf_fixture,
                                                    set_config=True))
        return conf_fixture.conf

    def test_adapter_reaches_the_app(self):
        conf = self.conf()
        with direct.PlacementDirect(conf) as client:
            resp = client.post('/resource_providers', json={'name': 'direct'},
                               headers={'x-auth-token': 'admin'})
            self.assertEqual(201, resp.status_code, resp.text)
            resp = client.get('/resource_providers',
                              headers={'x-auth-token': 'admin'})
            self.assertEqual('placement 1.0',
                             resp.headers['openstack-api-version'])
            self.assertEqual(['direct'], [
                rp['name'] for rp in resp.json()['resource_providers']])
            url = client.get_endpoint()
        self.assertTrue(url.endswith('/placement'), url)
        # The interceptor is gone with the block.
        self.assertRaises(AssertionError, requests.get,
                          url + '/resource_providers')

    def test_latest_microversion(self):
        conf = self.conf()
        with direct.PlacementDirect(conf, latest_microversion=True) as client:
            resp = client.get('/resource_providers',
                              headers={'x-auth-token': 'admin'})
            self.assertEqual('placement 1.39',
                             resp.headers['openstack-api-version'])
            resp = client.get('/resource_providers', microversion='1.14',
                              headers={'x-auth-token': 'admin'})
            self.assertEqual('placement 1.14',
                             resp.headers['openstack-api-version'])

    def test_needs_a_token_under_noauth2(self):
        with direct.PlacementDirect(self.conf()) as client:
            self.assertEqual(401, client.get('/resource_providers')
                             .status_code)
