"""GET /metrics of a real gunicorn with two workers.

Requests spread over both workers must add up in one exposition (read
with prometheus-client's own parser), the capacity gauges must say what
the API says of inventories and usages, and a restarted server must not
add up its predecessor's counters. The shared directory is created under
the server's own TMPDIR, so the test sees exactly what the service made.
"""

import concurrent.futures
import http.client
import os
import uuid

from prometheus_client import multiprocess
from prometheus_client import parser
import pytest

from placement.tests import fixtures
from placement.tests.gunicorn_server import GunicornServer

ROUTE = '/resource_providers'
REQUESTS = 50
#: Batches of REQUESTS sent at most until both workers have answered.
MAX_BATCHES = 20


def scrape(server, path='/metrics', headers=None):
    connection = http.client.HTTPConnection('127.0.0.1', server.port,
                                            timeout=30)
    try:
        connection.request('GET', path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode('utf-8')
    finally:
        connection.close()


def samples(text, name):
    """{frozenset of label items: value} of the samples called ``name``."""
    found = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[frozenset(sample.labels.items())] = sample.value
    return found


def route_count(text, route=ROUTE, method='GET'):
    return sum(value for labels, value in
               samples(text, 'placement_http_requests_total').items()
               if dict(labels)['route'] == route
               and dict(labels)['method'] == method)


@pytest.fixture(scope='module')
def tmpdir_env(tmp_path_factory):
    path = tmp_path_factory.mktemp('server-tmp')
    return str(path)


@pytest.fixture(scope='module')
def server(tmp_path_factory, tmpdir_env):
    tmp_path = tmp_path_factory.mktemp('gunicorn')
    db_url = fixtures.fresh_database_url(tmp_path, 'metrics')
    with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=2,
                        environment={'TMPDIR': tmpdir_env,
                                     'OS_METRICS__CAPACITY_REFRESH_INTERVAL':
                                     '1'}) as server:
        yield server


def _metrics_dirs(tmpdir_env):
    return [os.path.join(tmpdir_env, name) for name in os.listdir(tmpdir_env)
            if name.startswith('placement-metrics-')]


def _route_count_per_worker(server, tmpdir_env):
    """{worker pid: GET ROUTE count in that worker's own counter file}."""
    (directory,) = _metrics_dirs(tmpdir_env)
    counts = {}
    for pid in server.worker_pids():
        path = os.path.join(directory, 'counter_%d.db' % pid)
        counts[pid] = (route_count_from_families(
            multiprocess.MultiProcessCollector.merge([path]))
            if os.path.exists(path) else 0)
    return counts


def test_requests_of_both_workers_add_up(server, tmpdir_env):
    _s, before = scrape(server)
    start = route_count(before)

    def get(_):
        return server.request('GET', ROUTE)[0]

    # Requests this small may all be taken by whichever worker is free
    # first: send batches until both have answered some (bounded).
    sent = 0
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        for _batch in range(MAX_BATCHES):
            statuses = list(pool.map(get, range(REQUESTS)))
            assert statuses == [200] * REQUESTS
            sent += REQUESTS
            per_worker = _route_count_per_worker(server, tmpdir_env)
            if all(count > 0 for count in per_worker.values()):
                break
    assert len(per_worker) == 2
    assert all(count > 0 for count in per_worker.values()), per_worker

    status, text = scrape(server)
    assert status == 200
    assert route_count(text) - start == sent
    assert route_count(text) >= REQUESTS
    assert sum(per_worker.values()) == route_count(text)
    # Bounded labels: an unknown path is counted under one label.
    server.request('GET', '/no/such/%s' % uuid.uuid4())
    _s, text = scrape(server)
    assert route_count(text, 'unmatched') >= 1
    assert not any('/no/such' in dict(labels)['route'] for labels in
                   samples(text, 'placement_http_requests_total'))


def route_count_from_families(families):
    return sum(sample.value for family in families
               for sample in family.samples
               if sample.name == 'placement_http_requests_total'
               and sample.labels['route'] == ROUTE
               and sample.labels['method'] == 'GET')


def test_capacity_gauges_match_the_api(server):
    rp = str(uuid.uuid4())
    name = 'metrics-cn-%s' % rp[:8]
    assert server.request('POST', '/resource_providers',
                          {'name': name, 'uuid': rp})[0] == 200
    assert server.request(
        'PUT', '/resource_providers/%s/inventories' % rp,
        {'resource_provider_generation': 0,
         'inventories': {'VCPU': {'total': 24, 'reserved': 2,
                                  'allocation_ratio': 4.0},
                         'MEMORY_MB': {'total': 4096}}})[0] == 200
    consumer = str(uuid.uuid4())
    assert server.request(
        'PUT', '/allocations/%s' % consumer,
        {'allocations': {rp: {'resources': {'VCPU': 7}}},
         'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
         'consumer_type': 'INSTANCE'})[0] == 204
    _s, _h, inventories = server.request(
        'GET', '/resource_providers/%s/inventories' % rp)
    _s, _h, usages = server.request(
        'GET', '/resource_providers/%s/usages' % rp)
    # The snapshot is shared for capacity_refresh_interval (1 s here).
    status, text = _scrape_until(server, rp)
    assert status == 200
    key = frozenset({'resource_provider': name, 'provider_uuid': rp,
                     'resource_class': 'VCPU'}.items())
    vcpu = inventories['inventories']['VCPU']
    assert samples(text, 'placement_resource_total')[key] == vcpu['total']
    assert samples(text, 'placement_resource_reserved')[key] == (
        vcpu['reserved'])
    assert samples(text, 'placement_resource_allocation_ratio')[key] == (
        vcpu['allocation_ratio'])
    assert samples(text, 'placement_resource_usage')[key] == (
        usages['usages']['VCPU'])
    assert usages['usages']['VCPU'] == 7
    fleet = samples(text, 'placement_fleet_capacity')
    assert fleet[frozenset({'resource_class': 'VCPU'}.items())] >= 88
    # The allocation write was counted by whichever worker took it.
    ok = samples(text, 'placement_allocation_writes_total')
    assert ok[frozenset({'outcome': 'ok'}.items())] >= 1


def _scrape_until(server, rp, timeout=40):
    import time
    deadline = time.monotonic() + timeout
    while True:
        status, text = scrape(server)
        if rp in text or time.monotonic() > deadline:
            return status, text
        time.sleep(1)


def test_restarted_server_starts_from_zero(tmp_path):
    db_url = fixtures.fresh_database_url(tmp_path, 'metrics_restart')
    tmpdir = tmp_path / 'tmp'
    tmpdir.mkdir()
    counts = []
    for _run in range(2):
        with GunicornServer(db_url, tmp_path / 'gunicorn.log', workers=2,
                            environment={'TMPDIR': str(tmpdir)}) as server:
            for _ in range(3):
                server.request('GET', ROUTE)
            counts.append(route_count(scrape(server)[1]))
            live = _metrics_dirs(str(tmpdir))
            # The previous server's directory was removed at start.
            assert len(live) == 1, live
    assert counts == [3, 3]


def test_a_dead_workers_counts_stay_and_its_live_gauges_go(server,
                                                           tmpdir_env):
    import signal
    import time
    for _ in range(10):
        server.request('GET', ROUTE)
    _s, text = scrape(server)
    before = route_count(text)
    (directory,) = _metrics_dirs(tmpdir_env)
    victim = server.worker_pids()[0]
    assert os.path.exists(
        os.path.join(directory, 'gauge_livesum_%d.db' % victim))
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while victim in server.worker_pids() or len(server.worker_pids()) < 2:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.2)
    _s, text = scrape(server)
    # Its requests are still counted; its in-flight and pool gauges are
    # gone with it.
    assert route_count(text) >= before
    assert os.path.exists(os.path.join(directory, 'counter_%d.db' % victim))
    assert not os.path.exists(
        os.path.join(directory, 'gauge_livesum_%d.db' % victim))
    in_flight = samples(text, 'placement_http_requests_in_flight')
    assert list(in_flight.values()) == [1.0]  # the scrape itself
