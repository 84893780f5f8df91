"""Candidates kept rendered between requests (``memo``): the
bodies are those of a fresh search, byte for byte, at every microversion
the memo serves, and a write between two requests, through the API or
by hand SQL, is seen by the second."""

import random
import uuid

import orjson
import pytest
import sqlalchemy as sa
import webob

from placement.db import tables
from placement.handlers import candidate_rendering as rendering
from placement import microversion
from placement.objects import aggregate as aggregate_obj
from placement.objects.candidates import engine as ac
from placement.objects.candidates import memo
from placement.objects import resource_class as rc_obj
from placement.objects import trait as trait_obj
from placement.tests import fixtures
from placement.tests.functional.objects.candidates import test_engine
from placement.tests.functional.objects.candidates import (
    test_engine_lazy as lazy)

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
        found += _kept_equal_fresh(rng, topo, requests)
        _write(rng, topo, names)
    assert found


def _kept_equal_fresh(rng, topo, requests):
    """Asserts each of ``requests`` gets the same body from the memo as
    from a fresh search, at a random version; the candidates found."""
    found = 0
    for request in requests:
        kept, fresh = _bodies(topo, request, rng.choice(VERSIONS))
        assert kept == fresh
        found += len(orjson.loads(kept)['allocation_requests'])
    return found


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
    topo = test_engine.Topology(ctx)
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
    topo = test_engine.Topology(ctx)
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
                  root_forbidden, rendering, roots, served=None,
                  budget=None):
        searched.append(roots)
        return real(index, request, names, resolved, root_required,
                    root_forbidden, rendering, roots, served, budget)
    monkeypatch.setattr(ac, '_rendered_by_anchor', recording)
    _hosts(app, query)
    assert searched == []
    topo.allocate('cn2-numa0', 'VCPU', 1)
    assert len(_hosts(app, query)) == 6
    assert searched == [{topo.by_name['cn2'].id}]


def test_a_body_is_encoded_once_until_its_trees_change(numa_app,
                                                       monkeypatch):
    topo, app, query = numa_app
    encoded = []
    real = rendering._encoded

    def counting(result, version):
        encoded.append(str(version))
        return real(result, version)
    monkeypatch.setattr(rendering, '_encoded', counting)

    def body(version='1.39', extra=''):
        req = webob.Request.blank(query + extra)
        req.headers['x-auth-token'] = 'admin'
        req.headers['openstack-api-version'] = 'placement ' + version
        response = req.get_response(app)
        assert response.status_int == 200
        return response.body
    first = body()
    assert body() == first and encoded == ['1.39']
    assert body('1.36') == first and encoded == ['1.39', '1.36']
    assert body(extra='&limit=2') != first
    assert encoded == ['1.39', '1.36', '1.39']
    topo.allocate('cn2-numa0', 'VCPU', 1)
    changed = body()
    assert changed != first and len(encoded) == 4
    numa = topo.by_name['cn2-numa0'].uuid
    summaries = orjson.loads(changed)['provider_summaries']
    assert summaries[numa]['resources']['VCPU']['used'] == 1
    assert body() == changed and len(encoded) == 4


def test_the_same_request_is_not_resolved_again_until_a_change(
        numa_app, monkeypatch):
    topo, app, query = numa_app
    request = ac.Request(groups=[
        ac.RequestGroup(suffix='_C', resources={'VCPU': 1}),
        ac.RequestGroup(suffix='_N', resources={'SRIOV_NET_VF': 1})],
        same_subtree=[frozenset(['_C', '_N'])])
    version = VERSIONS[-1]
    resolved = []
    real = ac.resolve

    def counting(ctx, index, req):
        resolved.append(req)
        return real(ctx, index, req)
    monkeypatch.setattr(ac, 'resolve', counting)

    def find(req=request, options=ac.Options()):
        return ac.find(topo.ctx, req, options, random,
                       present=lambda result: rendering.encoded(
                           result, version, set()),
                       rendering=rendering.fragments(version))
    first = find()
    assert find() == first and len(resolved) == 1
    # An equal request that is another object, other options: looked up.
    assert find(ac.Request(**vars(request))) == first
    assert find(options=ac.Options(max_candidates=2)) != first
    assert len(resolved) == 3
    # One result per request object: the last options' are kept.
    assert find() == first and len(resolved) == 4
    assert find() == first and len(resolved) == 4
    topo.allocate('cn1-numa1', 'VCPU', 2)
    changed = find()
    assert len(resolved) == 5 and changed != first
    fresh = ac.find(topo.ctx, request, ac.Options(), random,
                    present=lambda result: rendering.encoded(
                        result, version, set()))
    assert changed == fresh and len(resolved) == 6   # fresh's own
    assert find() == changed and len(resolved) == 6


def test_limits_cut_the_kept_candidates(numa_app):
    topo, app, query = numa_app
    everything = _hosts(app, query)
    for limit in (1, 2, 5, 6, 7):
        assert _hosts(app, query + '&limit=%d' % limit) == everything[:limit]


def test_too_many_candidates_are_not_kept(numa_app, monkeypatch):
    topo, app, query = numa_app
    monkeypatch.setattr(memo, 'MAX_CANDIDATES', 5)
    store = memo.of(topo.ctx.db)
    # Databases may be reused between tests (emptied, not dropped).
    store._kept.clear()
    store._too_large.clear()
    assert len(_hosts(app, query)) == 6
    assert not store._kept and len(store._too_large) == 1
    assert len(_hosts(app, query + '&limit=5')) == 5
    assert not store._kept


# -- clouds with sharing providers --------------------------------------------

SHARES = 'MISC_SHARES_VIA_AGGREGATE'


def _ids(topo, name, trait=None, aggregate=None, rc=None):
    """Ids for hand SQL: provider ``name``'s, and a trait's, an
    aggregate's (created if new) or a class's."""
    found = [topo.by_name[name].id]
    if trait is not None:
        trait_obj.ensure(topo.ctx, trait)
        found.append(trait_obj.ids_by_name(topo.ctx, [trait])[trait])
    if aggregate is not None:
        aggregate_uuid = topo.aggregate(aggregate)
        found.append(aggregate_obj.ensure(
            topo.ctx, [aggregate_uuid])[aggregate_uuid])
    if rc is not None:
        found.append(rc_obj.ids_by_name(topo.ctx, [rc])[rc])
    return found


def _toggle(topo, table, name, column, value_id):
    """Insert the row (``name``'s provider, ``column``=``value_id``) in
    ``table`` by hand SQL, or delete it if there."""
    provider_id = topo.by_name[name].id
    where = sa.and_(table.c.resource_provider_id == provider_id,
                    table.c[column] == value_id)
    with topo.ctx.db.transaction(write=True) as conn:
        if conn.execute(sa.select(table.c[column]).where(where)).first():
            conn.execute(sa.delete(table).where(where))
        else:
            conn.execute(sa.insert(table).values(
                resource_provider_id=provider_id, **{column: value_id}))


def toggle_trait(topo, name, trait):
    _, trait_id = _ids(topo, name, trait=trait)
    _toggle(topo, tables.resource_provider_traits, name, 'trait_id', trait_id)


def toggle_aggregate(topo, name, aggregate):
    _, aggregate_id = _ids(topo, name, aggregate=aggregate)
    _toggle(topo, tables.resource_provider_aggregates, name, 'aggregate_id',
            aggregate_id)


def toggle_inventory(topo, name, rc, total=64):
    """Give ``name`` an inventory of ``rc`` by hand SQL, or take it (and
    its allocations of ``rc``) away."""
    provider_id, rc_id = _ids(topo, name, rc=rc)
    inv, alloc = tables.inventories, tables.allocations
    where = sa.and_(inv.c.resource_provider_id == provider_id,
                    inv.c.resource_class_id == rc_id)
    with topo.ctx.db.transaction(write=True) as conn:
        if conn.execute(sa.select(inv.c.id).where(where)).first():
            conn.execute(sa.delete(alloc).where(sa.and_(
                alloc.c.resource_provider_id == provider_id,
                alloc.c.resource_class_id == rc_id)))
            conn.execute(sa.delete(inv).where(where))
        else:
            conn.execute(sa.insert(inv).values(
                resource_provider_id=provider_id, resource_class_id=rc_id,
                total=total, reserved=0, min_unit=1, max_unit=total,
                step_size=1, allocation_ratio=1.0))


def _put_by_api(app, topo, name, what, body):
    """``PUT /resource_providers/<name>/<what>`` with the provider's
    generation, as a client does."""
    path = '/resource_providers/%s' % topo.by_name[name].uuid
    generation = fixtures.call_as_admin(app, 'GET', path).json[
        'generation']
    body = dict(body, resource_provider_generation=generation)
    response = fixtures.call_as_admin(app, 'PUT', path + '/' + what, body)
    assert response.status_int == 200, response.body


def _sharing_cloud(ctx, rng, nested):
    """A random cloud (see test_allocation_candidate_lazy) with three
    sharing providers: of IPV4_ADDRESS (no class requests ask for),
    of nothing, and of IPV4_ADDRESS and DISK_GB (which they do)."""
    topo, names = lazy._cloud(ctx, rng, nested)
    shares = []
    for i, inventory in enumerate(({'IPV4_ADDRESS': 32}, {},
                                   {'IPV4_ADDRESS': 32, 'DISK_GB': 100})):
        name = 'share%d' % i
        topo.add(name, inventory=inventory, traits=[SHARES],
                 aggs=rng.sample(lazy.AGGREGATES, rng.randint(1, 2)))
        shares.append(name)
    return topo, names, shares


def _sharing_write(rng, app, topo, names, shares):
    """One random change, by the API or by hand SQL, of those that can
    make a sharing provider count for a query or stop counting, or
    change which trees one serves, or of a tree."""
    everyone = names + shares
    choice = rng.randrange(8)
    if choice == 0:
        toggle_inventory(topo, rng.choice(shares), 'DISK_GB')
    elif choice == 1:
        toggle_trait(topo, rng.choice(everyone), SHARES)
    elif choice == 2:
        toggle_aggregate(topo, rng.choice(everyone),
                         rng.choice(lazy.AGGREGATES))
    elif choice == 3:
        _put_by_api(app, topo, rng.choice(everyone), 'aggregates', {
            'aggregates': [topo.aggregate(a) for a in rng.sample(
                lazy.AGGREGATES, rng.randint(0, 2))]})
    elif choice == 4:
        traits = rng.sample(lazy.TRAITS, rng.randint(0, 2))
        if rng.random() < 0.5:
            traits.append(SHARES)
        for trait in traits:
            _ids(topo, names[0], trait=trait)
        _put_by_api(app, topo, rng.choice(everyone), 'traits',
                    {'traits': traits})
    elif choice == 5:
        inventories = {rc: {'total': rng.randint(8, 64)} for rc in
                       rng.sample(lazy.CLASSES + ('IPV4_ADDRESS',),
                                  rng.randint(0, 2))}
        name = rng.choice(shares)
        path = '/resource_providers/%s/inventories' % topo.by_name[
            name].uuid
        generation = fixtures.call_as_admin(app, 'GET', path).json[
            'resource_provider_generation']
        response = fixtures.call_as_admin(app, 'PUT', path, {
            'resource_provider_generation': generation,
            'inventories': inventories})
        # 409 when allocations would be lost: fine, nothing changed.
        assert response.status_int in (200, 409), response.body
    else:
        _write(rng, topo, names)


def _counting_memo_hits(monkeypatch):
    """A list growing by one per request answered through the memo."""
    hits = []
    real = ac._remembered

    def counted(*args):
        hits.append(True)
        return real(*args)
    monkeypatch.setattr(ac, '_remembered', counted)
    return hits


@pytest.mark.parametrize('nested', [False, True])
@pytest.mark.parametrize('seed', range(3))
def test_kept_bodies_are_fresh_bodies_with_sharing_providers(
        ctx, monkeypatch, seed, nested):
    rng = random.Random(seed)
    topo, names, shares = _sharing_cloud(ctx, rng, nested)
    app = fixtures.new_app(fixtures.new_conf(), ctx.db)
    requests = [lazy._request(rng, topo, names) for _ in range(8)]
    for request in requests:
        request.isolate = request.isolate and len(request.groups) > 1
    # One that finds something on most clouds, and a resourceless group,
    # which matches a sharing provider on traits alone.
    requests.append(ac.Request(groups=[
        ac.RequestGroup(resources={'VCPU': 1, 'DISK_GB': 1})]))
    requests.append(ac.Request(groups=[
        ac.RequestGroup(resources={'VCPU': 1, 'MEMORY_MB': 1})]))
    requests.append(ac.Request(groups=[
        ac.RequestGroup(resources={'VCPU': 1}),
        ac.RequestGroup(suffix='1', required=[frozenset(['CUSTOM_A'])])]))
    hits = _counting_memo_hits(monkeypatch)
    found = 0
    for step in range(12):
        found += _kept_equal_fresh(rng, topo, requests)
        # Before any write, no sharing provider holds VCPU or MEMORY_MB.
        assert hits or step
        _sharing_write(rng, app, topo, names, shares)
    assert found


def _lone_host_and_share(ctx):
    topo = test_engine.Topology(ctx)
    topo.add('cn', inventory={'VCPU': 8, 'DISK_GB': 100}, aggs=['X'],
             traits=['CUSTOM_A'])
    topo.add('cn2', inventory={'VCPU': 8, 'DISK_GB': 100})
    topo.add('share', inventory={'IPV4_ADDRESS': 32}, traits=[SHARES])
    # Classes not in id order: how a host's allocations list them
    # depends on whether a sharing provider serves its tree.
    request = ac.Request(groups=[ac.RequestGroup(
        resources={'DISK_GB': 1, 'VCPU': 1})])
    return topo, request


@pytest.mark.parametrize('change', ['share joins', 'host joins',
                                    'trait given'])
def test_trees_a_sharing_provider_starts_serving_are_searched_again(
        ctx, monkeypatch, change):
    topo, request = _lone_host_and_share(ctx)
    version = VERSIONS[-1]
    hits = _counting_memo_hits(monkeypatch)
    kept, fresh = _bodies(topo, request, version)
    assert kept == fresh
    if change == 'share joins':
        toggle_aggregate(topo, 'share', 'X')  # serves cn (not changed)
    elif change == 'host joins':
        toggle_aggregate(topo, 'share', 'Y')
        assert _bodies(topo, request, version)[0] == kept
        toggle_aggregate(topo, 'cn2', 'Y')  # cn2 changed, served anew
    else:
        toggle_trait(topo, 'share', SHARES)  # sharing no more
        assert _bodies(topo, request, version)[0] == kept
        toggle_aggregate(topo, 'share', 'X')
        toggle_trait(topo, 'share', SHARES)  # sharing again, serving cn
    after, fresh = _bodies(topo, request, version)
    assert after == fresh
    assert after != kept  # the same candidates, classes in another order
    assert len(hits) == (2 if change == 'share joins' else 3)


@pytest.mark.parametrize('change', ['inventory', 'trait'])
def test_a_sharing_provider_starting_to_take_part_is_seen(
        ctx, monkeypatch, change):
    """The sharing provider, already serving the host's tree, starts to
    hold a requested class, or a trait a resourceless group requires;
    only its own tree changes."""
    topo, request = _lone_host_and_share(ctx)
    toggle_aggregate(topo, 'share', 'X')
    toggle_trait(topo, 'cn', 'CUSTOM_B')
    if change == 'trait':
        request.groups.append(ac.RequestGroup(
            suffix='1', required=[frozenset(['CUSTOM_B'])]))
    version = VERSIONS[-1]
    hits = _counting_memo_hits(monkeypatch)
    kept, fresh = _bodies(topo, request, version)
    assert kept == fresh and len(orjson.loads(kept)[
        'allocation_requests']) == (2 if change == 'inventory' else 1)
    share = topo.by_name['share'].uuid.encode()
    assert share not in kept
    if change == 'inventory':
        assert hits
        toggle_inventory(topo, 'share', 'DISK_GB')
    else:
        assert not hits  # any sharing provider may match on traits
        toggle_trait(topo, 'share', 'CUSTOM_B')
    after, fresh = _bodies(topo, request, version)
    assert after == fresh and share in after
