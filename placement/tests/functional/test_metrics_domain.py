"""Domain metrics: allocation outcomes, retries, candidates, the index,
the pool and build info, counted by the in-process application.

Metrics live for the whole test process, so every check compares a
value before and after.
"""

import time
import uuid

import pytest
from sqlalchemy import exc as sa_exc
import webob

from placement import context
from placement.db import api as db_api
from placement import exception
from placement.objects import allocation as alloc_obj
from placement.objects.candidates import engine as ac_obj
from placement.objects.candidates import provider_index
from placement.objects import claim as claim_obj
from placement.observability import metrics
from placement.tests import fixtures

RP = str(uuid.uuid4())


def value(name, **labels):
    found = metrics.active().registry.get_sample_value(name, labels)
    return found or 0.0


@pytest.fixture
def app():
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(fixtures.new_conf(), db)
    app.db = db
    yield app
    cleanup()


call = fixtures.call_as_admin


def provider(app, total=8):
    assert call(app, 'POST', '/resource_providers',
                {'name': 'cn', 'uuid': RP}).status_int == 200
    assert call(app, 'PUT', '/resource_providers/%s/inventories' % RP,
                {'resource_provider_generation': 0,
                 'inventories': {'VCPU': {'total': total}}}).status_int == 200


def allocate(app, consumer, amount, generation=None):
    return call(app, 'PUT', '/allocations/%s' % consumer,
                {'allocations': {RP: {'resources': {'VCPU': amount}}},
                 'project_id': 'p', 'user_id': 'u',
                 'consumer_generation': generation,
                 'consumer_type': 'INSTANCE'})


def outcome(name):
    return value('placement_allocation_writes_total', outcome=name)


def test_allocation_write_outcomes(app):
    provider(app)
    before = {name: outcome(name) for name in metrics.OUTCOMES}
    consumer = str(uuid.uuid4())
    assert allocate(app, consumer, 2).status_int == 204
    assert allocate(app, str(uuid.uuid4()), 100).status_int == 409
    # The consumer exists now: generation None is a conflict.
    assert allocate(app, consumer, 3, generation=None).status_int == 409
    after = {name: outcome(name) for name in metrics.OUTCOMES}
    assert after['ok'] - before['ok'] == 1
    assert after['capacity_refused'] - before['capacity_refused'] == 1
    assert (after['consumer_generation_conflict']
            - before['consumer_generation_conflict']) == 1


def test_lost_generation_races_are_retried_then_counted(app, monkeypatch):
    provider(app)
    ctx = context.AdminContext(app.db, fixtures.new_conf())
    races = value('placement_retries_total', reason='generation_race')
    conflicts = outcome('provider_generation_conflict')

    # Every attempt loses the race (as under heavy contention).
    def lose(_ctx, _requests):
        raise exception.ResourceProviderConcurrentUpdateDetected()

    monkeypatch.setattr(alloc_obj, '_write_once', lose)
    with pytest.raises(exception.ResourceProviderConcurrentUpdateDetected):
        alloc_obj.write(ctx, [], retries=3)
    assert value('placement_retries_total',
                 reason='generation_race') - races == 3
    assert outcome('provider_generation_conflict') - conflicts == 1


def test_database_retries_are_counted(app):
    retries = value('placement_retries_total', reason='database')
    attempts = []

    @db_api.writer
    def flaky(ctx):
        attempts.append(1)
        if len(attempts) < 3:
            raise sa_exc.OperationalError(
                'UPDATE x', {}, Exception('database is locked'))
        return 'done'

    assert flaky(context.AdminContext(app.db)) == 'done'
    assert value('placement_retries_total', reason='database') - (
        retries) == 2


def test_candidates_figures(app):
    provider(app)
    requests = value('placement_allocation_candidates_requests_total')
    returned = value('placement_allocation_candidates_returned_total')
    searches = value('placement_allocation_candidates_search_seconds_count')
    for query in ('resources=VCPU:1', 'resources=VCPU:100'):
        call(app, 'GET', '/allocation_candidates?' + query)
    assert value('placement_allocation_candidates_requests_total') - (
        requests) == 2
    assert value('placement_allocation_candidates_returned_total') - (
        returned) == 1
    assert value('placement_allocation_candidates_search_seconds_count') - (
        searches) == 2


def test_index_refresh_figures(app):
    # A private index, refreshed without the suite's consistency check
    # (which refreshes a second index of its own).
    provider(app)
    index = provider_index.ProviderIndex()
    refreshes = value('placement_provider_index_refresh_seconds_count')
    full = value('placement_provider_index_full_reloads_total')
    reloaded = value('placement_provider_index_providers_reloaded_total')
    with app.db.transaction(write=False) as conn:
        index._refresh(conn, time.monotonic)
    # A change to the provider makes the next refresh reload it alone.
    assert call(app, 'PUT', '/resource_providers/%s/inventories' % RP,
                {'resource_provider_generation': 1,
                 'inventories': {'VCPU': {'total': 4}}}).status_int == 200
    with app.db.transaction(write=False) as conn:
        index._refresh(conn, time.monotonic)
    with app.db.transaction(write=False) as conn:
        index._refresh(conn, time.monotonic)
    assert value('placement_provider_index_refresh_seconds_count') - (
        refreshes) == 3
    assert value('placement_provider_index_full_reloads_total') - full == 1
    assert value('placement_provider_index_providers_reloaded_total') - (
        reloaded) == 2


def test_pool_and_build_info(app):
    # A request that reads the database: its pooled connection is
    # counted when first lent, although opened before the app watched.
    assert call(app, 'GET', '/resource_providers').status_int == 200
    provider(app)
    assert call(app, 'GET', '/resource_providers/%s/inventories'
                % RP).status_int == 200
    # The reader's connection, kept by its thread for the next read, is
    # no longer in use.
    assert value('placement_db_pool_connections', state='in_use') == 0
    resp = call(app, 'GET', '/metrics')
    assert resp.status_int == 200
    assert value('placement_db_pool_connections', state='open') >= 1
    assert 'placement_build_info{' in resp.text
    assert 'database_dialect="%s"' % app.db.dialect in resp.text


def test_every_request_is_counted_even_when_refused(app):
    def count(route, status):
        return sum(value('placement_http_requests_total', route=route,
                         method='GET', status=status, microversion=mv)
                   for mv in ('none', '1.39', '1.0'))

    unauthenticated = count('/resource_providers', '401')
    bad_version = count('/resource_providers', '400')
    unmatched = count(metrics.UNMATCHED_ROUTE, '404')
    req = webob.Request.blank('/resource_providers')
    assert req.get_response(app).status_int == 401
    req = webob.Request.blank('/resource_providers')
    req.headers.update({'x-auth-token': 'admin',
                        'openstack-api-version': 'placement 1.x'})
    assert req.get_response(app).status_int == 400
    assert call(app, 'GET', '/nothing/here').status_int == 404
    health = value('placement_http_requests_total', route='/healthcheck',
                   method='GET', status='200', microversion='none')
    assert webob.Request.blank('/healthcheck').get_response(
        app).status_int == 200
    assert value('placement_http_requests_total', route='/healthcheck',
                 method='GET', status='200', microversion='none') == (
                     health + 1)
    assert count('/resource_providers', '401') - unauthenticated == 1
    assert count('/resource_providers', '400') - bad_version == 1
    assert count(metrics.UNMATCHED_ROUTE, '404') - unmatched == 1


def test_claim_outcomes_count_each_candidate_written(app):
    """A claim whose first candidate was taken after its search counts
    one refused write and one accepted; a consumer conflict counts as
    one."""
    provider(app, total=1)
    other = str(uuid.uuid4())
    assert call(app, 'POST', '/resource_providers',
                {'name': 'cn2', 'uuid': other}).status_int == 200
    assert call(app, 'PUT', '/resource_providers/%s/inventories' % other,
                {'resource_provider_generation': 0,
                 'inventories': {'VCPU': {'total': 1}}}).status_int == 200
    ctx = context.AdminContext(app.db, fixtures.new_conf())
    request = ac_obj.Request(
        groups=[ac_obj.RequestGroup(resources={'VCPU': 1})])
    stale = claim_obj.candidates(ctx, request, ac_obj.Options())
    assert [list(c.allocations) for c in stale] == [[RP], [other]]
    assert allocate(app, str(uuid.uuid4()), 1).status_int == 204
    # Behind the write above, then up to date.
    answers = iter([stale, stale[1:]])
    before = {name: outcome(name) for name in metrics.OUTCOMES}
    consumer = {'uuid': str(uuid.uuid4()), 'project': 'p', 'user': 'u',
                'generation': None, 'consumer_type': 'INSTANCE'}
    assert claim_obj.write_one(
        ctx, consumer, lambda _refused: next(answers)).tries == 2
    with pytest.raises(exception.ConsumerGenerationMismatch):
        claim_obj.write_one(ctx, consumer, lambda _refused: stale)
    after = {name: outcome(name) for name in metrics.OUTCOMES}
    assert after['ok'] - before['ok'] == 1
    assert after['capacity_refused'] - before['capacity_refused'] == 1
    assert (after['consumer_generation_conflict']
            - before['consumer_generation_conflict']) == 1
