"""Fixtures named by ``fixtures:`` in the gabbi YAML files.

Each YAML file gets a fresh database and application. Values a file can
substitute with ``$ENVIRON['NAME']`` are set by the fixture. Topologies
several files share are built here, through the API itself (``api``), so
they exercise the same code paths as clients.
"""

import json
import os
import uuid

from gabbi import fixture
import webob

from placement.tests import fixtures

# The application the running YAML file talks to (see ``setup_app``).
_APP = None

#: Names every fixture exports as fresh uuids for the YAML files.
UUID_NAMES = (
    'RP_UUID', 'RP_UUID1', 'RP_UUID2', 'RP_UUID3', 'PARENT_PROVIDER_UUID',
    'ALT_PARENT_PROVIDER_UUID', 'CONSUMER_UUID', 'CONSUMER_UUID1',
    'CONSUMER_UUID2', 'ALT_CONSUMER_UUID', 'PROJECT_ID', 'USER_ID',
    'ALT_PROJECT_ID', 'ALT_USER_ID', 'AGGREGATE_UUID', 'AGGREGATE_UUID1',
    'AGGREGATE_UUID2', 'AGGREGATE_UUID3', 'MISSING_UUID')


def _current_app(environ, start_response):
    return _APP(environ, start_response)


def setup_app():
    """gabbi's intercept factory.

    gabbi builds its HTTP clients before any fixture starts, so hand it a
    proxy that calls whichever fixture's app is running at request time.
    """
    return _current_app


class APIFixture(fixture.GabbiFixture):
    """A fresh database and the full application with noauth2.

    Subclasses change ``conf_overrides`` (``group__option: value``) or
    add data in ``populate``.
    """

    conf_overrides = {}

    def start_fixture(self):
        global _APP
        self.db, self._cleanup = fixtures.new_database()
        self.conf = fixtures.new_conf(**self.conf_overrides)
        self.app = fixtures.new_app(self.conf, self.db)
        _APP = self.app
        self._saved_env = {}
        for name in UUID_NAMES:
            self.set_env(name, str(uuid.uuid4()))
        rp_uuid = os.environ['RP_UUID']
        self.set_env('RP_NAME', 'rp-' + rp_uuid[:8])
        # Other spellings of RP_UUID, for normalisation tests.
        self.set_env('RP_UUID_HEX', rp_uuid.replace('-', ''))
        self.set_env('RP_UUID_UPPER', rp_uuid.upper())
        self.populate()

    def stop_fixture(self):
        global _APP
        _APP = None
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._cleanup()

    def set_env(self, name, value):
        self._saved_env.setdefault(name, os.environ.get(name))
        os.environ[name] = value

    def populate(self):
        """Add data for the YAML file; nothing by default."""

    def api(self, method, path, body=None, version='latest',
            headers=None, expect=(200, 201, 204)):
        """Call the application in-process as an admin client."""
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = 'admin'
        req.headers['x-roles'] = 'admin,service'
        req.headers['openstack-api-version'] = 'placement %s' % version
        if body is not None:
            req.body = json.dumps(body).encode('utf-8')
            req.content_type = 'application/json'
        req.headers.update(headers or {})
        resp = req.get_response(self.app)
        if resp.status_int not in expect:
            raise AssertionError('%s %s -> %s: %s' % (
                method, path, resp.status, resp.text))
        return resp.json if resp.body else None


class SharedStorageFixture(APIFixture):
    """Topology T1: two flat compute nodes and a sharing disk.

    Fixed uuids (the candidate files compare whole JSON objects keyed by
    provider uuid, which ``$ENVIRON`` cannot template)::

        CN1 c1000000-0000-4000-8000-000000000000  VCPU 8, MEMORY_MB 4096
        CN2 c2000000-0000-4000-8000-000000000000  VCPU 8, MEMORY_MB 4096,
                                                  DISK_GB 100
        SS  55000000-0000-4000-8000-000000000000  DISK_GB 1000,
                                                  MISC_SHARES_VIA_AGGREGATE
        all three in aggregate A a0000000-0000-4000-8000-000000000000
    """

    AGG_A = 'a0000000-0000-4000-8000-000000000000'

    def populate(self):
        self.provider('CN1', 'c1000000-0000-4000-8000-000000000000',
                      {'VCPU': 8, 'MEMORY_MB': 4096}, aggregates=[self.AGG_A])
        self.provider('CN2', 'c2000000-0000-4000-8000-000000000000',
                      {'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 100},
                      aggregates=[self.AGG_A])
        self.provider('SS', '55000000-0000-4000-8000-000000000000',
                      {'DISK_GB': 1000}, traits=['MISC_SHARES_VIA_AGGREGATE'],
                      aggregates=[self.AGG_A])

    def provider(self, name, uuid, totals, parent=None, traits=(),
                 aggregates=()):
        """Create a provider with inventory totals, traits, aggregates."""
        body = {'name': name, 'uuid': uuid}
        if parent:
            body['parent_provider_uuid'] = parent
        self.api('POST', '/resource_providers', body)
        path = '/resource_providers/%s' % uuid
        gen = self.api('PUT', path + '/inventories', {
            'resource_provider_generation': 0,
            'inventories': {rc: {'total': total}
                            for rc, total in totals.items()},
        })['resource_provider_generation']
        if traits:
            for trait in traits:
                if trait.startswith('CUSTOM_'):
                    self.api('PUT', '/traits/' + trait)
            gen = self.api('PUT', path + '/traits', {
                'traits': list(traits), 'resource_provider_generation': gen,
            })['resource_provider_generation']
        if aggregates:
            self.api('PUT', path + '/aggregates', {
                'aggregates': list(aggregates),
                'resource_provider_generation': gen})


class NUMAFixture(SharedStorageFixture):
    """T1 plus topology T2, a compute node with NUMA nodes
    and physical functions::

        CN    cc000000-0000-4000-8000-000000000000  VCPU 4,
                                                    COMPUTE_VOLUME_MULTI_ATTACH
        NUMA0 d0000000-0000-4000-8000-000000000000  (child of CN) VCPU 4,
                                                    MEMORY_MB 2048,
                                                    HW_NUMA_ROOT
        NUMA1 d1000000-0000-4000-8000-000000000000  as NUMA0
        PF0   f0000000-0000-4000-8000-000000000000  (child of NUMA0)
                                                    SRIOV_NET_VF 8,
                                                    CUSTOM_PHYSNET_A
        PF1   f1000000-0000-4000-8000-000000000000  (child of NUMA1)
                                                    SRIOV_NET_VF 8,
                                                    CUSTOM_PHYSNET_B
    """

    def populate(self):
        super().populate()
        cn = 'cc000000-0000-4000-8000-000000000000'
        numa0 = 'd0000000-0000-4000-8000-000000000000'
        numa1 = 'd1000000-0000-4000-8000-000000000000'
        self.provider('CN', cn, {'VCPU': 4},
                      traits=['COMPUTE_VOLUME_MULTI_ATTACH'])
        for name, numa in (('NUMA0', numa0), ('NUMA1', numa1)):
            self.provider(name, numa, {'VCPU': 4, 'MEMORY_MB': 2048},
                          parent=cn, traits=['HW_NUMA_ROOT'])
        self.provider('PF0', 'f0000000-0000-4000-8000-000000000000',
                      {'SRIOV_NET_VF': 8}, parent=numa0,
                      traits=['CUSTOM_PHYSNET_A'])
        self.provider('PF1', 'f1000000-0000-4000-8000-000000000000',
                      {'SRIOV_NET_VF': 8}, parent=numa1,
                      traits=['CUSTOM_PHYSNET_B'])


class LegacyPolicyFixture(APIFixture):
    """APIFixture with the legacy policy defaults."""

    conf_overrides = {'oslo_policy__enforce_new_defaults': False}


class CORSFixture(APIFixture):
    """APIFixture with CORS allowing one origin."""

    conf_overrides = {'cors__allowed_origin': ['http://ui.example']}
