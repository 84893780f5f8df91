"""Taking over a database from upstream Placement 16.0.0, and giving it back.

Upstream creates and fills the database through its own API; our
``placement-manage db sync`` migrates it and our server must answer
every read exactly as upstream did, find candidates in it and write to
it. ``placement-manage db downgrade a082b8bb98d0`` then hands it back:
upstream's ``db sync`` and server must work on it with everything intact,
including what we wrote, and our ``db sync`` must take it over again.

Upstream runs from a virtualenv of its own (``placement.tests.upstream``),
over HTTP only. Without PyPI access the test is skipped, unless
``REQUIRE_DB=1`` (as in CI) makes that a failure.
"""

import json
import os

import pytest

from placement.db import migration
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import upstream

UPSTREAM_HEAD = 'a082b8bb98d0'
PROJECT = '7b2e0d2d-4bd4-4a6e-9c5b-6a9d2b5f1a01'
USER = '5f1c6a8e-2b44-4c9e-8f0a-3d7e6b9c2a02'
CN1 = 'c0000001-0000-4000-8000-000000000001'
NUMA0 = 'c0000001-0000-4000-8000-0000000000a0'
NUMA1 = 'c0000001-0000-4000-8000-0000000000a1'
PF0 = 'c0000001-0000-4000-8000-0000000000f0'
CN2 = 'c0000002-0000-4000-8000-000000000002'
SHARED = 'c0000005-0000-4000-8000-000000000005'
CN3 = 'c0000003-0000-4000-8000-000000000003'
AGG_A = 'a0000000-0000-4000-8000-00000000000a'
AGG_B = 'a0000000-0000-4000-8000-00000000000b'
C1, C2, C3, C4, C5 = ('e000000%d-0000-4000-8000-000000000000' % n
                      for n in range(1, 6))
CONSUMERS = (C1, C2, C3, C4, C5)
CANDIDATE_QUERIES = (
    '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128,DISK_GB:5',
    '/allocation_candidates?resources=VCPU:1&required=CUSTOM_FAST',
    '/allocation_candidates?resources_GOLD=CUSTOM_GOLD:1'
    '&resources_VF=SRIOV_NET_VF:1&same_subtree=_GOLD,_VF'
    '&group_policy=none',
)


@pytest.fixture(scope='session')
def upstream_venv(tmp_path_factory):
    try:
        return upstream.ensure_venv(str(tmp_path_factory.mktemp('upvenv')))
    except upstream.Unavailable as exc:
        reason = 'upstream Placement %s unavailable in %s: %s' % (
            upstream.VERSION, upstream.venv_path(), exc)
        if os.environ.get('REQUIRE_DB') == '1':
            pytest.fail(reason)
        pytest.skip(reason)


def call(server, method, path, body=None, status=200, version=None):
    headers = {'openstack-api-version': 'placement ' + version} if (
        version) else None
    got, _headers, answer = server.request(method, path, body,
                                           headers=headers)
    assert got == status, '%s %s on %s: %d %s' % (
        method, path, server.url, got, answer)
    return answer


def generation(server, rp):
    return call(server, 'GET', '/resource_providers/' + rp)['generation']


def put_rp(server, rp, what, body):
    body['resource_provider_generation'] = generation(server, rp)
    call(server, 'PUT', '/resource_providers/%s/%s' % (rp, what), body)


def allocate(server, consumer, allocations, consumer_generation,
             consumer_type='INSTANCE'):
    call(server, 'PUT', '/allocations/' + consumer, {
        'allocations': {rp: {'resources': resources}
                        for rp, resources in allocations.items()},
        'project_id': PROJECT, 'user_id': USER,
        'consumer_generation': consumer_generation,
        'consumer_type': consumer_type}, status=204)


def fill_through_upstream(server):
    """A nested tree, a second root, a sharing provider, custom names,
    aggregates and allocations of three consumers of two types."""
    call(server, 'PUT', '/resource_classes/CUSTOM_GOLD', status=201)
    call(server, 'PUT', '/traits/CUSTOM_FAST', status=201)
    for rp, name, parent in ((CN1, 'cn1', None), (NUMA0, 'cn1-numa0', CN1),
                             (NUMA1, 'cn1-numa1', CN1),
                             (PF0, 'cn1-numa0-pf0', NUMA0),
                             (CN2, 'cn2', None), (SHARED, 'nfs', None)):
        call(server, 'POST', '/resource_providers',
             {'uuid': rp, 'name': name, 'parent_provider_uuid': parent})
    inventories = {
        CN1: {'MEMORY_MB': {'total': 4096, 'reserved': 512}},
        NUMA0: {'VCPU': {'total': 4}, 'CUSTOM_GOLD': {'total': 2}},
        NUMA1: {'VCPU': {'total': 4, 'allocation_ratio': 2.0}},
        PF0: {'SRIOV_NET_VF': {'total': 8, 'max_unit': 4}},
        CN2: {'VCPU': {'total': 16, 'allocation_ratio': 4.0},
              'MEMORY_MB': {'total': 8192, 'step_size': 256}},
        SHARED: {'DISK_GB': {'total': 1000, 'min_unit': 5}},
    }
    for rp, inventory in inventories.items():
        put_rp(server, rp, 'inventories', {'inventories': inventory})
    put_rp(server, CN1, 'traits', {'traits': ['HW_CPU_X86_AVX2']})
    put_rp(server, NUMA0, 'traits', {'traits': ['CUSTOM_FAST']})
    put_rp(server, SHARED, 'traits', {'traits': [
        'MISC_SHARES_VIA_AGGREGATE']})
    for rp, aggregates in ((CN1, [AGG_A]), (CN2, [AGG_A, AGG_B]),
                           (SHARED, [AGG_A])):
        put_rp(server, rp, 'aggregates', {'aggregates': aggregates})
    allocate(server, C1, {NUMA0: {'VCPU': 1}, CN1: {'MEMORY_MB': 512},
                          SHARED: {'DISK_GB': 10}}, None)
    allocate(server, C1, {NUMA0: {'VCPU': 2}, CN1: {'MEMORY_MB': 1024},
                          SHARED: {'DISK_GB': 20}}, 1)
    call(server, 'POST', '/allocations', {
        C2: {'allocations': {CN2: {'resources': {'VCPU': 4,
                                                 'MEMORY_MB': 2048}}},
             'project_id': PROJECT, 'user_id': USER,
             'consumer_generation': None, 'consumer_type': 'MIGRATION'},
        C3: {'allocations': {NUMA0: {'resources': {'CUSTOM_GOLD': 1}},
                             PF0: {'resources': {'SRIOV_NET_VF': 2}}},
             'project_id': PROJECT, 'user_id': USER,
             'consumer_generation': None, 'consumer_type': 'INSTANCE'},
    }, status=204)


def write_through_us(server):
    """A new provider, a new consumer, a changed and a deleted one."""
    call(server, 'POST', '/resource_providers',
         {'uuid': CN3, 'name': 'cn3'})
    put_rp(server, CN3, 'inventories',
           {'inventories': {'VCPU': {'total': 4}}})
    put_rp(server, CN3, 'traits', {'traits': ['CUSTOM_FAST']})
    put_rp(server, CN3, 'aggregates', {'aggregates': [AGG_B]})
    allocate(server, C4, {CN3: {'VCPU': 1}}, None)
    allocate(server, C2, {CN2: {'VCPU': 2, 'MEMORY_MB': 1024}}, 1,
             consumer_type='MIGRATION')
    call(server, 'DELETE', '/allocations/' + C3, status=204)


def _normal(value):
    """``value`` with every list sorted: list order is not a contract."""
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((_normal(item) for item in value),
                      key=lambda item: json.dumps(item, sort_keys=True))
    return value


def snapshot(server):
    """Every read a client makes of the data, path -> normalised body."""
    found = {}

    def get(path, version=None):
        key = '%s at %s' % (path, version) if version else path
        found[key] = _normal(call(server, 'GET', path, version=version))
        return found[key]

    providers = get('/resource_providers')['resource_providers']
    for rp in sorted(p['uuid'] for p in providers):
        for tail in ('', '/inventories', '/usages', '/traits',
                     '/aggregates', '/allocations'):
            get('/resource_providers/%s%s' % (rp, tail))
    for consumer in CONSUMERS:
        get('/allocations/' + consumer)
    for query in ('/usages?project_id=' + PROJECT,
                  '/usages?project_id=%s&user_id=%s' % (PROJECT, USER)):
        get(query, version='1.37')
        # Upstream 16.0.0 answers these with a 500 on PostgreSQL from
        # 1.38 (usages by consumer type).
        if fixtures.backend_name() != 'postgresql':
            get(query)
    get('/resource_classes')
    get('/traits')
    for query in CANDIDATE_QUERIES:
        get(query)
    return found


def assert_same(served, expected, what):
    differing = sorted(path for path in expected.keys() | served.keys()
                       if served.get(path) != expected.get(path))
    assert not differing, '%s differs at %d paths; first %s:\n%s\n%s' % (
        what, len(differing), differing[0],
        json.dumps(expected.get(differing[0]), sort_keys=True),
        json.dumps(served.get(differing[0]), sort_keys=True))


def candidates(view, query):
    return view[query]['allocation_requests']


def test_upstream_database_taken_over_and_handed_back(
        upstream_venv, tmp_path):
    workdir = tmp_path / 'outside-checkout'
    workdir.mkdir()
    db_url = fixtures.fresh_database_url(tmp_path, 'upstream_roundtrip')
    conf = upstream.write_config(str(tmp_path / 'placement.conf'), db_url)

    def upstream_server(log):
        return upstream.UpstreamServer(upstream_venv, db_url, str(workdir),
                                       tmp_path / log)

    def our_server(log):
        return gunicorn_server.GunicornServer(
            db_url, tmp_path / log, workers=1, environment={
                'OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP': 'False'})

    # Upstream creates the schema and fills it.
    upstream.manage(upstream_venv, conf, str(workdir), 'db', 'sync')
    assert upstream.manage(upstream_venv, conf, str(workdir),
                           'db', 'version').strip() == UPSTREAM_HEAD
    with upstream.serving(upstream_server('upstream-1.log')) as server:
        fill_through_upstream(server)
        before = snapshot(server)
    assert len(before['/resource_providers']['resource_providers']) == 6
    assert [query for query in CANDIDATE_QUERIES
            if not candidates(before, query)] == []

    # Ours takes it over: same answers, candidates included, and writes.
    assert upstream.our_manage(conf, 'db', 'sync')[0] == 0
    assert upstream.our_manage(conf, 'db', 'version')[1] == (
        migration.head() + '\n')
    status = upstream.our_command('status', conf, 'upgrade', 'check')
    assert status[0] == 0, status
    with upstream.serving(our_server('ours-1.log')) as server:
        assert_same(snapshot(server), before, 'ours after db sync')
        write_through_us(server)
        written = snapshot(server)
        by_type = call(server, 'GET', '/usages?project_id=' + PROJECT)
        assert server.errors() == ''
    fast = candidates(written, CANDIDATE_QUERIES[1])
    assert {NUMA0, CN3} <= {rp for request in fast
                          for rp in request['allocations']}
    assert written['/allocations/' + C3]['allocations'] == {}
    assert by_type['usages'] == {
        'INSTANCE': {'consumer_count': 2, 'VCPU': 3, 'MEMORY_MB': 1024,
                     'DISK_GB': 20},
        'MIGRATION': {'consumer_count': 1, 'VCPU': 2, 'MEMORY_MB': 1024}}
    assert written['/allocations/' + C4]['consumer_generation'] == 1

    # Handed back: upstream serves everything, ours included, and writes.
    assert upstream.our_manage(conf, 'db', 'downgrade', UPSTREAM_HEAD) == (
        0, UPSTREAM_HEAD + '\n', '')
    upstream.manage(upstream_venv, conf, str(workdir), 'db', 'sync')
    assert upstream.manage(upstream_venv, conf, str(workdir),
                           'db', 'version').strip() == UPSTREAM_HEAD
    with upstream.serving(upstream_server('upstream-2.log')) as server:
        assert_same(snapshot(server), written, 'upstream after downgrade')
        allocate(server, C5, {CN3: {'VCPU': 2}}, None)
        put_rp(server, CN3, 'inventories',
               {'inventories': {'VCPU': {'total': 6}}})
        returned = snapshot(server)
    assert returned['/resource_providers/%s/usages' % CN3]['usages'] == {
        'VCPU': 3}

    # And taken over again: upstream's writes are seen by our candidates.
    assert upstream.our_manage(conf, 'db', 'sync')[0] == 0
    with upstream.serving(our_server('ours-2.log')) as server:
        assert_same(snapshot(server), returned, 'ours after the round trip')
