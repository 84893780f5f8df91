"""Upstream Placement 16.0.0 and ours serving one database at once.

The middle of a rolling upgrade: the database is migrated by our ``db
sync`` and both services serve it, each under its own gunicorn started
outside the checkout. Whatever either writes (or a DBA writes by hand)
must be in the other's very next allocation candidates answer, and
allocation writes sent concurrently through both must never over-commit
a provider: usages equal the acknowledged writes.

Upstream runs as a black box from its own virtualenv
(``placement.tests.upstream``); without it the test is skipped, unless
``REQUIRE_DB=1``. Bounded: a few dozen requests and ``WRITES``
concurrent allocation writes.
"""

import concurrent.futures
import itertools
import uuid

import sqlalchemy as sa

from placement.db import tables
from placement.tests import fixtures
from placement.tests import gunicorn_server
from placement.tests import upstream
from placement.tests.functional.test_upstream_upgrade_rollback import (
    call, put_rp, upstream_venv)  # noqa: F401 (a fixture)

PROJECT = '7b2e0d2d-4bd4-4a6e-9c5b-6a9d2b5f1a01'
USER = '5f1c6a8e-2b44-4c9e-8f0a-3d7e6b9c2a02'
#: Providers written to concurrently, their VCPU each, and the writes
#: (one VCPU each): 4/3 of the capacity, half through each service.
HOSTS, VCPUS, WRITES = 3, 6, 24
QUERY = '/allocation_candidates?resources=VCPU:1'


def candidates(server, query=QUERY):
    """{provider uuid: VCPU used} of the providers ``server`` offers."""
    found = call(server, 'GET', query)
    return {rp: summary['resources']['VCPU']['used']
            for rp, summary in found['provider_summaries'].items()}


def new_provider(server, name, vcpus):
    rp = str(uuid.uuid4())
    call(server, 'POST', '/resource_providers', {'uuid': rp, 'name': name})
    put_rp(server, rp, 'inventories',
           {'inventories': {'VCPU': {'total': vcpus}}})
    return rp


def allocate(server, rp, amount=1):
    """PUT one new consumer's allocation: the status."""
    status, _headers, _body = server.request(
        'PUT', '/allocations/%s' % uuid.uuid4(), {
            'allocations': {rp: {'resources': {'VCPU': amount}}},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return status


def test_upstream_and_ours_serve_one_database_at_once(
        upstream_venv, tmp_path):  # noqa: F811 (the fixture)
    workdir = tmp_path / 'outside-checkout'
    workdir.mkdir()
    db_url = fixtures.fresh_database_url(tmp_path, 'side_by_side')
    conf = upstream.write_config(str(tmp_path / 'placement.conf'), db_url)
    upstream.manage(upstream_venv, conf, str(workdir), 'db', 'sync')
    assert upstream.our_manage(conf, 'db', 'sync')[0] == 0

    theirs = upstream.UpstreamServer(upstream_venv, db_url, str(workdir),
                                     tmp_path / 'upstream.log', workers=2)
    ours = gunicorn_server.GunicornServer(
        db_url, tmp_path / 'ours.log', workers=2, environment={
            'OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP': 'False'})
    ours.cwd = str(workdir)
    with upstream.serving(theirs), upstream.serving(ours):
        # Both workers of ours load their index before anything exists.
        for _ in range(4):
            assert candidates(ours) == {}

        # Upstream writes; our next answer has them, and the reverse.
        up = new_provider(theirs, 'by-upstream', 4)
        assert candidates(ours) == {up: 0}
        assert allocate(theirs, up, 3) == 204
        assert candidates(ours) == {up: 3}
        mine = new_provider(ours, 'by-us', 2)
        assert allocate(ours, mine, 2) == 204
        assert candidates(theirs) == {up: 3}
        assert allocate(theirs, up, 1) == 204
        for _ in range(2):  # whichever worker answers
            assert candidates(ours) == {}
        call(theirs, 'DELETE', '/resource_providers/%s' % mine,
             status=409)  # in use: refused, nothing changes

        # A DBA's hand-written SQL is seen at once too.
        engine = sa.create_engine(db_url)
        try:
            with engine.begin() as conn:
                conn.execute(sa.update(tables.inventories).values(
                    total=tables.inventories.c.total + 1))
        finally:
            engine.dispose()
        for _ in range(2):
            assert candidates(ours) == {up: 4, mine: 2}

        # Concurrent writes through both: never over capacity.
        hosts = [new_provider(server, 'host%d' % n, VCPUS)
                 for n, server in zip(range(HOSTS),
                                      itertools.cycle((theirs, ours)))]
        plan = [((theirs, ours)[n % 2], hosts[n % HOSTS])
                for n in range(WRITES)]
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            statuses = list(pool.map(lambda job: allocate(*job), plan))
        by_server = {'upstream': statuses[0::2], 'ours': statuses[1::2]}
        assert set(by_server['ours']) <= {204, 409}, by_server
        if fixtures.backend_name() == 'sqlite':
            # Upstream on SQLite gives up on the file lock with a 500
            # (its deferred transactions cannot wait for the write
            # lock); such a write did not happen. Not so elsewhere.
            failed = by_server['upstream'].count(500)
            assert theirs.log(10 ** 7).count(
                'database is locked') >= failed, theirs.errors()
            statuses = [status if status != 500 or server is ours else 409
                        for (server, _host), status in zip(plan, statuses)]
        assert set(statuses) <= {204, 409}, by_server
        accepted = {rp: sum(1 for (_server, host), status
                            in zip(plan, statuses)
                            if host == rp and status == 204)
                    for rp in hosts}
        for rp in hosts:
            usages = call(ours, 'GET', '/resource_providers/%s/usages'
                          % rp)['usages']
            assert usages == {'VCPU': accepted[rp]}, (rp, by_server)
            assert accepted[rp] <= VCPUS
        expected = {rp: used for rp, used in accepted.items()
                    if used < VCPUS}
        expected[up] = 4
        expected[mine] = 2
        for _ in range(2):
            assert candidates(ours) == expected
            assert candidates(theirs) == expected
        assert ours.errors() == ''
