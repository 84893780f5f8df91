"""Every worker's candidates see every write acknowledged before.

Each gunicorn worker keeps its own provider index for
``GET /allocation_candidates`` and refreshes it from the change log at
the start of each request. Here writes of every kind go to whichever
worker takes them, and each is followed by candidate requests on fresh
connections, which the workers share out between them: all must already
reflect the write, including the writes that bump no provider
generation (DELETE /allocations, aggregates below 1.19, re-parenting).

Runs on SQLite, and on a fresh server database when
``PLACEMENT_TEST_DB_URL`` is set.
"""

import uuid

import pytest

from placement.tests import gunicorn_server

WORKERS = 3
#: Candidate requests after each write (spread over the workers).
READS = 9


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'index', WORKERS) as server:
        yield server


class Cloud:
    """Writes through the server, checking each one succeeded."""

    def __init__(self, server):
        self.server = server

    def call(self, method, path, body=None, expect=(200, 201, 204),
             version='latest'):
        status, _, data = self.server.request(
            method, path, body,
            headers={'openstack-api-version': 'placement %s' % version})
        assert status in expect, (method, path, status, data,
                                  self.server.errors())
        return data

    def provider(self, name, parent=None):
        rp = str(uuid.uuid4())
        body = {'name': name, 'uuid': rp}
        if parent:
            body['parent_provider_uuid'] = parent
        self.call('POST', '/resource_providers', body)
        return rp

    def generation(self, rp):
        return self.call('GET', '/resource_providers/' + rp)['generation']

    def inventory(self, rp, **totals):
        self.call('PUT', '/resource_providers/%s/inventories' % rp, {
            'resource_provider_generation': self.generation(rp),
            'inventories': {rc: {'total': total}
                            for rc, total in totals.items()}})

    def candidates(self, query):
        """Every worker's answer to ``query``, as sets of allocations."""
        answers = set()
        for _ in range(READS):
            data = self.call('GET', '/allocation_candidates?' + query)
            answers.add(frozenset(
                (rp, rc, amount)
                for candidate in data['allocation_requests']
                for rp, placed in candidate['allocations'].items()
                for rc, amount in placed['resources'].items()))
        return answers

    def summaries(self, query):
        """Every worker's provider summaries for ``query``."""
        return [self.call('GET', '/allocation_candidates?' + query)
                ['provider_summaries'] for _ in range(READS)]


def _one(answers):
    assert len(answers) == 1, 'workers disagree: %s' % answers
    return next(iter(answers))


def test_every_write_is_seen_by_every_worker(server):
    cloud = Cloud(server)
    cn = cloud.provider('cn-' + str(uuid.uuid4()))
    cloud.inventory(cn, VCPU=4)
    query = 'resources=VCPU:2&in_tree=' + cn
    assert _one(cloud.candidates(query)) == {(cn, 'VCPU', 2)}

    # Allocations: a PUT fills the provider, a DELETE (which bumps no
    # generation) frees it.
    consumer = str(uuid.uuid4())
    cloud.call('PUT', '/allocations/' + consumer, {
        'allocations': {cn: {'resources': {'VCPU': 3}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_type': 'INSTANCE', 'consumer_generation': None})
    assert cloud.candidates(query) == {frozenset()}
    cloud.call('DELETE', '/allocations/' + consumer)
    assert _one(cloud.candidates(query)) == {(cn, 'VCPU', 2)}

    # A consumer moved to another provider frees the first one without
    # bumping its generation.
    other = cloud.provider('other-' + str(uuid.uuid4()))
    cloud.inventory(other, VCPU=4)
    owner = {'project_id': str(uuid.uuid4()),
             'user_id': str(uuid.uuid4()), 'consumer_type': 'INSTANCE'}
    cloud.call('PUT', '/allocations/' + consumer, dict(
        owner, allocations={cn: {'resources': {'VCPU': 3}}},
        consumer_generation=None))
    assert cloud.candidates(query) == {frozenset()}
    cloud.call('PUT', '/allocations/' + consumer, dict(
        owner, allocations={other: {'resources': {'VCPU': 3}}},
        consumer_generation=1))
    assert _one(cloud.candidates(query)) == {(cn, 'VCPU', 2)}
    cloud.call('DELETE', '/allocations/' + consumer)

    # Inventory changes.
    cloud.inventory(cn, VCPU=1)
    assert cloud.candidates(query) == {frozenset()}
    cloud.inventory(cn, VCPU=8)
    assert _one(cloud.candidates(query)) == {(cn, 'VCPU', 2)}

    # Traits.
    trait = 'CUSTOM_T_' + uuid.uuid4().hex.upper()
    cloud.call('PUT', '/traits/' + trait)
    traited = query + '&required=' + trait
    assert cloud.candidates(traited) == {frozenset()}
    cloud.call('PUT', '/resource_providers/%s/traits' % cn, {
        'resource_provider_generation': cloud.generation(cn),
        'traits': [trait]})
    assert _one(cloud.candidates(traited)) == {(cn, 'VCPU', 2)}
    assert all(s[cn]['traits'] == [trait] for s in cloud.summaries(query))

    # Aggregates, also through the pre-1.19 PUT that bumps nothing.
    aggregate = str(uuid.uuid4())
    grouped = query + '&member_of=' + aggregate
    assert cloud.candidates(grouped) == {frozenset()}
    cloud.call('PUT', '/resource_providers/%s/aggregates' % cn,
               [aggregate], version='1.18')
    assert _one(cloud.candidates(grouped)) == {(cn, 'VCPU', 2)}
    cloud.call('PUT', '/resource_providers/%s/aggregates' % cn, [],
               version='1.18')
    assert cloud.candidates(grouped) == {frozenset()}

    # Tree changes: a child appears, moves to another tree (1.37,
    # no generation bump), and is deleted.
    child = cloud.provider('child-' + str(uuid.uuid4()), parent=cn)
    cloud.inventory(child, SRIOV_NET_VF=2)
    nested = 'resources=VCPU:2,SRIOV_NET_VF:1&in_tree=' + cn
    assert _one(cloud.candidates(nested)) == {(cn, 'VCPU', 2),
                                              (child, 'SRIOV_NET_VF', 1)}
    cloud.call('PUT', '/resource_providers/' + child,
               {'name': 'moved-' + child, 'parent_provider_uuid': other})
    assert cloud.candidates(nested) == {frozenset()}
    moved = 'resources=VCPU:2,SRIOV_NET_VF:1&in_tree=' + other
    assert _one(cloud.candidates(moved)) == {(other, 'VCPU', 2),
                                             (child, 'SRIOV_NET_VF', 1)}
    assert all(s[child]['root_provider_uuid'] == other
               for s in cloud.summaries(moved))
    cloud.call('DELETE', '/resource_providers/%s/inventories' % child)
    cloud.call('DELETE', '/resource_providers/' + child)
    assert cloud.candidates(moved) == {frozenset()}
    assert server.errors() == ''
