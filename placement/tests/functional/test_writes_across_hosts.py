"""Concurrent writes through several API hosts, each on its own database
node: none answered 5xx, none lost, none over capacity, and every
acknowledged write visible through every host.

Three independent gunicorn masters stand for three API hosts. On a
3-node MariaDB Galera cluster (``tools/with-galera.sh`` exports
``PLACEMENT_TEST_GALERA_URLS``) each host is attached to a different
node; the writes go either to all three hosts (multi-writer: Galera
certification conflicts surface at COMMIT) or to the first only
(single-writer), and are read back through all three. On PostgreSQL
(``PLACEMENT_TEST_DB_URL``) the three hosts share the one server. Other
backends skip: a single SQLite file or MariaDB server is already covered
by ``test_allocation_concurrency.py``.

Each run is ``benchmarks.toolkit.allocation_load`` with demand a third above
capacity; its report is printed (``pytest -s``) and is the assertion
message.
"""

import collections
import io
import os
import uuid

import pytest
import sqlalchemy as sa

from benchmarks.toolkit import allocation_load
from placement.db import api as db_api
from placement.db import triggers
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import placement_http

GALERA_ENV = 'PLACEMENT_TEST_GALERA_URLS'
HOSTS = 3
WORKERS = 2
CLIENTS = 12
ATTEMPTS = 400
#: Write-then-read rounds of the read-your-writes test.
ROUNDS = 40


def _node_urls():
    """One database URL per host, or None to skip the module."""
    galera = os.environ.get(GALERA_ENV, '').split()
    if galera:
        return galera
    url = fixtures.server_url()
    if url and sa.engine.make_url(url).get_backend_name() == 'postgresql':
        return [url] * HOSTS
    return None


NODE_URLS = _node_urls()
pytestmark = pytest.mark.skipif(
    NODE_URLS is None,
    reason='needs %s (tools/with-galera.sh) or PostgreSQL' % GALERA_ENV)
WRITERS = (('multi', 'single') if os.environ.get(GALERA_ENV)
           else ('multi',))


@pytest.fixture(scope='module')
def hosts(tmp_path_factory):
    """Three API hosts on one fresh database, host i on node i."""
    database = sa.engine.make_url(fixtures.create_server_database(
        NODE_URLS[0], 'hosts')).database
    tmp_path = tmp_path_factory.mktemp('hosts')
    servers = []
    try:
        # One after the other: the first creates the schema.
        for index, node in enumerate(NODE_URLS):
            url = sa.engine.make_url(node).set(database=database)
            server = gunicorn_server.GunicornServer(
                url.render_as_string(hide_password=False),
                tmp_path / ('host%d.log' % index), workers=WORKERS)
            server.start()
            servers.append(server)
        yield servers
    finally:
        for server in servers:
            server.stop()


def _failures(servers):
    """Distinct causes of failed requests in the hosts' logs so far."""
    causes = collections.Counter()
    for server in servers:
        with open(server.log_path, encoding='utf-8',
                  errors='replace') as log:
            for line in log:
                if ' failure: ' in line:
                    status = line.partition(' status: ')[2].split()[0]
                    causes[status + ' ' + line.partition(
                        ' failure: ')[2].strip()] += 1
    return ''.join('  %d x %s\n' % (count, cause)
                   for cause, count in causes.most_common())


def _galera_conflicts():
    """Certification failures and brute-force aborts so far, summed over
    the nodes (empty off Galera)."""
    counts = collections.Counter()
    if not os.environ.get(GALERA_ENV):
        return counts
    for node in NODE_URLS:
        engine = sa.create_engine(node)
        try:
            with engine.connect() as conn:
                for name, value in conn.exec_driver_sql(
                        "SHOW GLOBAL STATUS WHERE Variable_name IN "
                        "('wsrep_local_cert_failures', "
                        "'wsrep_local_bf_aborts')"):
                    counts[name] += int(value)
        finally:
            engine.dispose()
    return counts


def _report(load, verification, servers):
    out = io.StringIO()
    print('writes through %d host(s), read back through %d'
          % (len(load.urls), len(servers)), file=out)
    allocation_load.report(load, verification, out)
    failures = _failures(servers)
    if failures:
        print('failed requests in the hosts\' logs since they started:\n'
              + failures, file=out, end='')
    return out.getvalue() + ''.join(server.errors() for server in servers)


@pytest.mark.parametrize('writers', WRITERS)
@pytest.mark.parametrize('mode', ('put', 'post', 'mixed'))
def test_writes_through_every_host_are_exact_and_never_5xx(
        hosts, mode, writers):
    urls = [server.url for server in hosts]
    load = allocation_load.AllocationLoad(
        urls if writers == 'multi' else urls[:1], mode=mode,
        clients=CLIENTS, attempts=ATTEMPTS, seed=len(mode),
        provider_writes=True)
    load.prepare()
    conflicts = _galera_conflicts()
    load.run()
    conflicts = _galera_conflicts() - conflicts
    # Read back through every host, the writing ones and the others.
    verification = load.verify(urls)

    summary = _report(load, verification, hosts)
    if conflicts:
        summary = 'Galera during the load: %s\n%s' % (
            dict(conflicts), summary)
    print(summary)
    tally = load.tally
    assert tally.server_errors == 0, summary
    assert not tally.unanswered and not tally.other_statuses, summary
    assert verification.ok, summary
    assert any('exceed the capacity' in message
               for message in tally.conflict_messages), (
        'no write was refused for capacity; the load proves nothing')
    if mode == 'mixed':
        assert set(tally.successes_by_kind) == set(
            allocation_load.mixed_kinds(True)), summary
        for url in urls:
            client = placement_http.Client(url)
            try:
                for rp in load.created_providers:
                    client.checked('GET', '/resource_providers/%s' % rp)
            finally:
                client.close()


@pytest.mark.skipif(not os.environ.get(GALERA_ENV), reason='Galera only')
@pytest.mark.parametrize('setting', (1, 3))
def test_sessions_on_a_galera_node_wait_as_configured(setting):
    """[placement_database] mysql_wsrep_sync_wait reaches the session
    (the option's default, 1, is what the hosts of this module run)."""
    db = db_api.Database(NODE_URLS[1], mysql_wsrep_sync_wait=setting)
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql(
                'SELECT @@SESSION.wsrep_sync_wait').scalar() == setting
    finally:
        db.dispose()


def test_a_write_through_one_host_is_seen_through_the_others_at_once(
        hosts):
    """Each round creates a provider with inventory of a class of its own
    through the first host and asks the others for candidates of that
    class, and for the inventory, immediately. On Galera this holds
    because sessions wait for the cluster before reading
    (mysql_wsrep_sync_wait=1); with 0, a loaded machine failed it."""
    writer = placement_http.Client(hosts[0].url)
    readers = [placement_http.Client(s.url) for s in hosts[1:]]
    stale = []
    try:
        for _round in range(ROUNDS):
            rc = 'CUSTOM_SEEN_%s' % uuid.uuid4().hex[:12].upper()
            writer.checked('PUT', '/resource_classes/%s' % rc,
                           expect=(201,))
            rp = writer.checked('POST', '/resource_providers',
                                {'name': rc})['uuid']
            writer.checked(
                'PUT', '/resource_providers/%s/inventories' % rp,
                {'resource_provider_generation': 0,
                 'inventories': {rc: {'total': 4}}})
            for index, reader in enumerate(readers, 1):
                body = reader.checked(
                    'GET', '/allocation_candidates?resources=%s:1' % rc)
                if [r['allocations'] for r in body[
                        'allocation_requests']] != [
                            {rp: {'resources': {rc: 1}}}]:
                    stale.append('host %d: candidates of %s' % (index, rc))
    finally:
        writer.close()
        for reader in readers:
            reader.close()
    assert not stale, '%d of %d reads stale: %s' % (
        len(stale), ROUNDS * len(readers), stale[:5])


def test_a_write_through_any_host_reaches_every_host_s_index(hosts):
    """A provider's inventory, changed through each host in turn, shows
    at once in the candidates every host answers: their provider
    indexes learn it from the change log, so every node must log the
    writes it takes. (On a test cluster started without grant tables the
    log's triggers, created through the first node, replicated without a
    definer, the other nodes failed to create them and went on, and the
    writes through them were missed until the next whole reload.)"""
    clients = [placement_http.Client(s.url) for s in hosts]
    stale = []
    try:
        rc = 'CUSTOM_LOGGED_%s' % uuid.uuid4().hex[:12].upper()
        clients[0].checked('PUT', '/resource_classes/%s' % rc,
                           expect=(201,))
        rp = clients[0].checked('POST', '/resource_providers',
                                {'name': rc})['uuid']
        generation = 0
        for writer in [0, 1, 2] * 2:
            reserved = generation + 1
            body = clients[writer % len(clients)].checked(
                'PUT', '/resource_providers/%s/inventories' % rp,
                {'resource_provider_generation': generation,
                 'inventories': {rc: {'total': 100,
                                      'reserved': reserved}}})
            generation = body['resource_provider_generation']
            for index, reader in enumerate(clients):
                body = reader.checked(
                    'GET', '/allocation_candidates?resources=%s:1' % rc)
                got = body['provider_summaries'].get(rp, {}).get(
                    'resources', {}).get(rc, {}).get('capacity')
                if got != 100 - reserved:
                    stale.append('written through host %d, host %d shows '
                                 'capacity %s, not %d' % (
                                     writer, index, got, 100 - reserved))
    finally:
        for client in clients:
            client.close()
    assert not stale, stale


def test_every_node_holds_the_change_log_triggers(hosts):
    """What ``placement-status upgrade check`` checks per node: each
    node created the triggers the first host's schema replicated."""
    for server in hosts:
        db = db_api.Database(server.db_url)
        try:
            with db.transaction(write=False) as conn:
                assert triggers.missing(conn) == [], server.db_url
        finally:
            db.dispose()
