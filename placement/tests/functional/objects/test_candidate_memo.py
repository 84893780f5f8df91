"""Candidates kept rendered between requests (``candidate_memo``): the
bodies are those of a fresh search, byte for byte, at every microversion
the memo serves, and a write between two requests, through the API or
by hand SQL, is seen by the second."""

import random
import uuid

import orjson
import pytest
import sqlalchemy as sa

from placement.db import tables
from placement.handlers import candidate_rendering as rendering
from placement import microversion
from placement.objects import allocation_candidate as ac
from placement.objects import candidate_memo
from placement.tests import fixtures
from placement.tests.functional.objects import test_allocation_candidate
from placement.tests.functional.objects import (
    test_allocation_candidate_lazy as lazy)

VERSIONS = [microversion.Version.parse(v)
            for v in ('1.29', '1.33', '1.34', '1.36', '1.39')]


def _bodies(topo, request, version):
    """(body from the memo, body of a fresh search) of ``request``."""
    requested = {rc for g in request.groups for rc in g.resources}

    def present(result):
        return rendering.encoded(result, version, requested)
    kept = ac.find(topo.ctx, request, ac.Options(), random, present=present,
                   rendering=rendering.fragments(version))
    fresh = ac.find(topo.ctx, request, ac.Options(), random, present=present)
    return kept, fresh


def _write(rng, topo, names):
    """One change by hand SQL to a random provider: an allocation, or
    a new total for one of its inventories."""
    provider = topo.by_name[rng.choice(names)]
    if rng.random() < 0.5:
        topo.allocate(topo.name(provider.uuid), 'VCPU', rng.randint(1, 4))
        return
    with topo.ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id == provider.id
        ).values(total=rng.randint(1, 16)))


@pytest.mark.parametrize('nested', [False, True])
@pytest.mark.parametrize('seed', range(2))
def test_kept_bodies_are_fresh_bodies_across_writes(ctx, seed, nested):
    rng = random.Random(seed)
    topo, names = lazy._cloud(ctx, rng, nested)
    requests = [lazy._request(rng, topo, names) for _ in range(8)]
    for request in requests:
        request.isolate = request.isolate and len(request.groups) > 1
    found = 0
    for _ in range(6):
        for request in requests:
            version = rng.choice(VERSIONS)
            kept, fresh = _bodies(topo, request, version)
            assert kept == fresh
            found += len(orjson.loads(kept)['allocation_requests'])
        _write(rng, topo, names)
    assert found


def _numa_cloud(topo, hosts=3):
    for i in range(hosts):
        topo.add('cn%d' % i)
        for n in range(2):
            topo.add('cn%d-numa%d' % (i, n), 'cn%d' % i,
                     inventory={'VCPU': 2})
            topo.add('cn%d-numa%d-pf' % (i, n), 'cn%d-numa%d' % (i, n),
                     inventory={'SRIOV_NET_VF': 2})
    return ac.Request(groups=[
        ac.RequestGroup(suffix='_C', resources={'VCPU': 1}),
        ac.RequestGroup(suffix='_N', resources={'SRIOV_NET_VF': 1})],
        same_subtree=[frozenset(['_C', '_N'])])


def test_same_subtree_kept_bodies_across_writes(ctx):
    topo = test_allocation_candidate.Topology(ctx)
    request = _numa_cloud(topo)
    rng = random.Random(3)
    names = list(topo.by_name)
    for _ in range(10):
        for version in VERSIONS:
            kept, fresh = _bodies(topo, request, version)
            assert kept == fresh
        _write(rng, topo, names)
    topo.add('cn9')
    topo.add('cn9-numa0', 'cn9', inventory={'VCPU': 2})
    topo.add('cn9-numa0-pf', 'cn9-numa0', inventory={'SRIOV_NET_VF': 2})
    kept, fresh = _bodies(topo, request, VERSIONS[-1])
    assert kept == fresh and b'"cn9' not in kept  # uuids, not names
    assert len(orjson.loads(kept)['provider_summaries']) > 0


def _hosts(app, query):
    response = fixtures.call_as_admin(app, 'GET', query)
    assert response.status_int == 200
    return [set(c['allocations']) for c in
            response.json['allocation_requests']]


@pytest.fixture
def numa_app(ctx):
    topo = test_allocation_candidate.Topology(ctx)
    _numa_cloud(topo)
    app = fixtures.new_app(fixtures.new_conf(), ctx.db)
    query = ('/allocation_candidates?resources_C=VCPU:1'
             '&resources_N=SRIOV_NET_VF:1&same_subtree=_C,_N'
             '&group_policy=none')
    return topo, app, query


def test_a_claim_through_the_api_is_seen(numa_app):
    topo, app, query = numa_app
    before = _hosts(app, query)
    assert len(before) == 6
    _hosts(app, query)  # now from the memo
    numa = topo.by_name['cn0-numa0'].uuid
    pf = topo.by_name['cn0-numa0-pf'].uuid
    response = fixtures.call_as_admin(
        app, 'PUT', '/allocations/%s' % uuid.uuid4(), {
            'allocations': {numa: {'resources': {'VCPU': 2}},
                            pf: {'resources': {'SRIOV_NET_VF': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
    assert response.status_int == 204, response.body
    after = _hosts(app, query)
    assert len(after) == 5
    assert not any(numa in candidate for candidate in after)
    # A second claim, with the memo kept in between.
    response = fixtures.call_as_admin(
        app, 'PUT', '/allocations/%s' % uuid.uuid4(), {
            'allocations': {pf: {'resources': {'SRIOV_NET_VF': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
    assert response.status_int == 204, response.body
    assert _hosts(app, query) == after
    summaries = fixtures.call_as_admin(app, 'GET', query).json[
        'provider_summaries']
    assert summaries[pf]['resources']['SRIOV_NET_VF']['used'] == 2


def test_a_write_by_hand_sql_is_seen(numa_app):
    topo, app, query = numa_app
    assert len(_hosts(app, query)) == 6
    assert len(_hosts(app, query)) == 6
    numa = topo.by_name['cn1-numa1']
    with topo.ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id == numa.id
        ).values(reserved=2))
    after = _hosts(app, query)
    assert len(after) == 5
    assert not any(numa.uuid in candidate for candidate in after)
    with topo.ctx.db.transaction(write=True) as conn:
        conn.execute(sa.update(tables.inventories).where(
            tables.inventories.c.resource_provider_id == numa.id
        ).values(reserved=0))
    assert len(_hosts(app, query)) == 6


def test_only_changed_trees_are_searched_again(numa_app, monkeypatch):
    topo, app, query = numa_app
    _hosts(app, query)
    searched = []
    real = ac._rendered_by_anchor

    def recording(index, request, names, resolved, root_required,
                  root_forbidden, render, roots):
        searched.append(roots)
        return real(index, request, names, resolved, root_required,
                    root_forbidden, render, roots)
    monkeypatch.setattr(ac, '_rendered_by_anchor', recording)
    _hosts(app, query)
    assert searched == []
    topo.allocate('cn2-numa0', 'VCPU', 1)
    assert len(_hosts(app, query)) == 6
    assert searched == [{topo.by_name['cn2'].id}]


def test_limits_cut_the_kept_candidates(numa_app):
    topo, app, query = numa_app
    everything = _hosts(app, query)
    for limit in (1, 2, 5, 6, 7):
        assert _hosts(app, query + '&limit=%d' % limit) == everything[:limit]


def test_too_many_candidates_are_not_kept(numa_app, monkeypatch):
    topo, app, query = numa_app
    monkeypatch.setattr(candidate_memo, 'MAX_CANDIDATES', 5)
    memo = candidate_memo.of(topo.ctx.db)
    # Databases may be reused between tests (emptied, not dropped).
    memo._kept.clear()
    memo._too_large.clear()
    assert len(_hosts(app, query)) == 6
    assert not memo._kept and len(memo._too_large) == 1
    assert len(_hosts(app, query + '&limit=5')) == 5
    assert not memo._kept
