"""Several API hosts behind a real load balancer on one PostgreSQL.

Three independent gunicorn masters stand for three hosts; HAProxy
(Debian package ``haproxy``) balances every request over them. Writes
acknowledged through the balancer are seen at once through every host
directly, candidates included, and concurrent allocation writes stay
exact and within capacity. Throughput for 1, 2 and 3 hosts is measured by
``benchmarks/write_hosts.py``.
"""

import io
import uuid

import pytest

from benchmarks.toolkit import allocation_load
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import haproxy
from placement.tests import placement_http

HOSTS = 3
WORKERS = 2

pytestmark = [
    pytest.mark.skipif(fixtures.backend_name() != 'postgresql',
                       reason='runs in the PostgreSQL pass'),
    pytest.mark.skipif(not haproxy.installed(),
                       reason='haproxy is not installed'),
]


@pytest.fixture(scope='module')
def hosts(tmp_path_factory):
    """``(balancer, [host, ...])`` on one fresh database."""
    tmp_path = tmp_path_factory.mktemp('haproxy')
    db_url = fixtures.create_server_database(fixtures.server_url(),
                                             'haproxy')
    servers = []
    try:
        # One after the other: the first creates the schema.
        for index in range(HOSTS):
            server = gunicorn_server.GunicornServer(
                db_url, tmp_path / ('host%d.log' % index), workers=WORKERS)
            server.start()
            servers.append(server)
        with haproxy.HAProxy([s.url for s in servers], tmp_path) as lb:
            yield lb, servers
    finally:
        for server in servers:
            server.stop()


def _requests_served(server):
    with open(server.log_path, encoding='utf-8', errors='replace') as log:
        return sum(1 for line in log if ' status: ' in line)


def test_a_write_through_the_balancer_is_seen_by_every_host_at_once(
        hosts):
    """Each round creates a provider with inventory of its own class and
    asks every host directly for candidates of that class, immediately."""
    balancer, servers = hosts
    client = placement_http.Client(balancer.url)
    directs = [placement_http.Client(s.url) for s in servers]
    try:
        for _round in range(15):
            rc = 'CUSTOM_SEEN_%s' % uuid.uuid4().hex[:12].upper()
            client.checked('PUT', '/resource_classes/%s' % rc,
                           expect=(201,))
            rp = allocation_load.create_provider(
                client, 'seen-%s' % rc, 4)
            client.checked(
                'PUT', '/resource_providers/%s/inventories' % rp,
                {'resource_provider_generation': 1,
                 'inventories': {rc: {'total': 4}}})
            for index, direct in enumerate(directs):
                body = direct.checked(
                    'GET', '/allocation_candidates?resources=%s:1' % rc)
                found = [r['allocations'] for r in
                         body['allocation_requests']]
                assert found == [{rp: {'resources': {rc: 1}}}], (
                    'host %d does not see %s yet' % (index, rp))
                assert direct.checked(
                    'GET', '/resource_providers/%s/inventories' % rp)[
                    'inventories'][rc]['total'] == 4
    finally:
        client.close()
        for direct in directs:
            direct.close()


def test_concurrent_writes_through_the_balancer_are_exact(hosts):
    balancer, servers = hosts
    before = [_requests_served(s) for s in servers]
    load = allocation_load.AllocationLoad(
        balancer.url, mode='mixed', clients=12, attempts=400, seed=5,
        provider_writes=True)
    load.prepare()
    load.run()
    # Read back through every host directly.
    verification = load.verify([s.url for s in servers])

    out = io.StringIO()
    allocation_load.report(load, verification, out)
    summary = out.getvalue() + ''.join(s.errors() for s in servers)
    print(summary)
    tally = load.tally
    assert verification.ok, summary
    assert tally.server_errors == 0, summary
    assert not tally.unanswered and not tally.other_statuses, summary
    assert any('exceed the capacity' in message
               for message in tally.conflict_messages), summary
    # The balancer spread the load: every host served a good share.
    served = [_requests_served(s) - b for s, b in zip(servers, before)]
    assert min(served) > 0.2 * sum(served), served


def test_the_balancer_routes_around_a_stopped_host(hosts):
    """A host that goes away: requests sent to it are redispatched to
    the others until its health check takes it out; none fails. Runs
    last: it stops a host."""
    balancer, servers = hosts
    servers[-1].stop()
    client = placement_http.Client(balancer.url)
    try:
        statuses = [client.request('GET', '/resource_providers').status
                    for _ in range(30)]
        assert statuses == [200] * 30, statuses
    finally:
        client.close()
