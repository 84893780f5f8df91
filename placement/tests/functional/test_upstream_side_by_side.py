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
import threading
import time
import uuid

import pytest
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


def retry_locked_writes(server, tries=3):
    """Make ``server`` (upstream on SQLite) send a request again when it
    answered 500 and logged ``database is locked``.

    Upstream's transactions start as readers; on SQLite one that then
    writes fails at once if another connection wrote meanwhile, without
    waiting for the lock. Our readers prune the change log in short
    write transactions of their own, so on a loaded machine one of
    upstream's sequential writes here sometimes met one. Such a write
    did not happen, and a client would send it again.
    """
    plain = server.request

    def locked_count():
        return server.log(10 ** 7).count('database is locked')

    def request(*args, **kwargs):
        for _ in range(tries):
            before = locked_count()
            answer = plain(*args, **kwargs)
            if answer[0] != 500 or locked_count() == before:
                break
        return answer
    server.request = request


def test_upstream_and_ours_serve_one_database_at_once(
        upstream_venv, tmp_path):  # noqa: F811 (the fixture)
    workdir = tmp_path / 'outside-checkout'
    workdir.mkdir()
    db_url = fixtures.fresh_database_url(tmp_path, 'side_by_side')
    conf = upstream.write_config(str(tmp_path / 'placement.conf'), db_url)
    upstream.manage(upstream_venv, conf, str(workdir), 'db', 'sync')
    assert upstream.our_manage(conf, 'db', 'sync')[0] == 0

    # Upstream's workers write the standard traits as they boot, and on
    # SQLite a worker that meets a locked file then fails to boot, which
    # stops its gunicorn: there, one upstream worker, booted before ours.
    theirs = upstream.UpstreamServer(
        upstream_venv, db_url, str(workdir), tmp_path / 'upstream.log',
        workers=1 if fixtures.backend_name() == 'sqlite' else 2)
    ours = gunicorn_server.GunicornServer(
        db_url, tmp_path / 'ours.log', workers=2, environment={
            'OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP': 'False'})
    ours.cwd = str(workdir)
    if fixtures.backend_name() == 'sqlite':
        retry_locked_writes(theirs)
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
        by_upstream = {rp for (server, rp), status in zip(plan, statuses)
                       if server is theirs and status == 204}
        for rp in hosts:
            usages = call(ours, 'GET', '/resource_providers/%s/usages'
                          % rp)['usages']
            assert usages == {'VCPU': accepted[rp]}, (rp, by_server)
            if fixtures.backend_name() == 'sqlite' or rp not in by_upstream:
                assert accepted[rp] <= VCPUS, (rp, by_server)
            # Elsewhere upstream itself may over-commit: see
            # test_a_write_racing_a_concurrent_writer below.
        expected = {rp: used for rp, used in accepted.items()
                    if used < VCPUS}
        expected[up] = 4
        expected[mine] = 2
        for _ in range(2):
            assert candidates(ours) == expected
            assert candidates(theirs) == expected
        assert ours.errors() == ''


def _lock_waiters(engine):
    with engine.connect() as conn:
        return conn.execute(sa.text(
            'SELECT count(*) FROM pg_locks WHERE NOT granted')).scalar()


def _race_one_write(server, engine, rp, rp_id):
    """Hold provider ``rp`` (capacity 1) locked while a transaction of
    another writer uses its capacity and bumps its generation, send
    ``server`` a write of 1 meanwhile, commit once it waits: its answer
    and the usage after."""
    answer = {}
    with engine.connect() as conn:
        with conn.begin():
            conn.execute(sa.text(
                'SELECT generation FROM resource_providers WHERE id = :i '
                'FOR UPDATE'), {'i': rp_id})
            conn.execute(sa.insert(tables.allocations).values(
                resource_provider_id=rp_id, consumer_id=str(uuid.uuid4()),
                resource_class_id=0, used=1))
            conn.execute(sa.text(
                'UPDATE resource_providers SET generation = generation + 1 '
                'WHERE id = :i'), {'i': rp_id})
            writer = threading.Thread(
                target=lambda: answer.update(status=allocate(server, rp)))
            writer.start()
            for _ in range(200):  # until it waits for our lock (<= 20 s)
                if _lock_waiters(engine):
                    break
                time.sleep(0.1)
        writer.join(60)
    with engine.connect() as conn:
        used = conn.execute(sa.select(sa.func.sum(tables.allocations.c.used))
                            .where(tables.allocations.c.resource_provider_id
                                   == rp_id)).scalar()
    return answer.get('status'), used


def test_a_write_racing_a_concurrent_writer(upstream_venv, tmp_path):  # noqa: F811
    """The interleaving behind the over-commits of concurrent writes on
    PostgreSQL, made deterministic: another writer takes a provider's
    last unit and commits while a write is under way. Ours waits for the
    provider lock and refuses (409); upstream 16.0.0 reads usage before
    any lock and accepts (204), going over capacity, against any
    concurrent writer, its own workers included (see
    doc/source/admin/index.rst, 'Moving from upstream Placement, and
    back')."""
    if fixtures.backend_name() != 'postgresql':
        pytest.skip('the lock probe reads PostgreSQL pg_locks')
    workdir = tmp_path / 'outside-checkout'
    workdir.mkdir()
    db_url = fixtures.fresh_database_url(tmp_path, 'race')
    conf = upstream.write_config(str(tmp_path / 'placement.conf'), db_url)
    upstream.manage(upstream_venv, conf, str(workdir), 'db', 'sync')
    assert upstream.our_manage(conf, 'db', 'sync')[0] == 0
    theirs = upstream.UpstreamServer(upstream_venv, db_url, str(workdir),
                                     tmp_path / 'upstream.log')
    ours = gunicorn_server.GunicornServer(
        db_url, tmp_path / 'ours.log', workers=1, environment={
            'OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP': 'False'})
    ours.cwd = str(workdir)
    engine = sa.create_engine(db_url)
    try:
        with upstream.serving(theirs), upstream.serving(ours):
            found = {}
            for name, server in (('ours', ours), ('upstream', theirs)):
                rp = new_provider(server, name, 1)
                with engine.connect() as conn:
                    rp_id = conn.execute(sa.select(
                        tables.resource_providers.c.id).where(
                            tables.resource_providers.c.uuid == rp)).scalar()
                found[name] = _race_one_write(server, engine, rp, rp_id)
    finally:
        engine.dispose()
    assert found['ours'] == (409, 1)
    assert found['upstream'] == (204, 2)
