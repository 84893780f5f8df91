"""POST /claims under contention, seen from outside.

A real gunicorn with several workers (processes, each with its own copy
of provider data, so a worker's search may be behind another's write)
takes concurrent claims, all sent at once. The write transaction must
refuse over-commit and the next-candidate retry must let claims spill
over while room remains (api-ref/claims.rst, 'Concurrency').

Runs on SQLite, and on a fresh server database when
``PLACEMENT_TEST_DB_URL`` is set.
"""

import collections
import threading
import uuid

import jsonschema
import pytest

from placement.schemas import claim as schema
from placement.tests import gunicorn_server
from placement.tests import placement_http

WORKERS = 3
CLAIMS = 30


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    """One server for the module: every test uses its own providers,
    and names them in its queries."""
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'claims', WORKERS) as server:
        yield server


@pytest.fixture
def client(server):
    client = placement_http.Client(server.url)
    yield client
    client.close()


def _provider(client, vcpu, aggregate=None):
    rp = client.checked('POST', '/resource_providers',
                        {'name': 'claims-%s' % uuid.uuid4().hex[:12]})
    generation = client.checked(
        'PUT', '/resource_providers/%s/inventories' % rp['uuid'],
        {'resource_provider_generation': rp['generation'],
         'inventories': {'VCPU': {'total': vcpu}}}
    )['resource_provider_generation']
    if aggregate:
        client.checked(
            'PUT', '/resource_providers/%s/aggregates' % rp['uuid'],
            {'aggregates': [aggregate],
             'resource_provider_generation': generation})
    return rp['uuid']


def _claim(query, consumer=None, strategy='pack'):
    return {'consumer_uuid': consumer or str(uuid.uuid4()),
            'project_id': 'claims', 'user_id': 'claims',
            'consumer_type': 'INSTANCE', 'consumer_generation': None,
            'query': query, 'strategy': strategy}


def _race(url, bodies):
    """POST /claims with each body from its own thread, all released at
    once; the responses in the same order."""
    barrier = threading.Barrier(len(bodies))
    responses = [None] * len(bodies)

    def send(index):
        client = placement_http.Client(url)
        client.checked('GET', '/')  # connect before the start line
        barrier.wait()
        responses[index] = client.request('POST', '/claims', bodies[index])
        client.close()

    threads = [threading.Thread(target=send, args=(i,))
               for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def _statuses(responses):
    return collections.Counter(
        (r.status, r.error_code if r.status != 200 else None)
        for r in responses)


def _vcpu_used(client, provider):
    return client.checked(
        'GET', '/resource_providers/%s/usages' % provider)['usages']['VCPU']


def _check_winners(client, responses, bodies, expected_providers):
    """Every 200 is the consumer's allocations, read back, on one of
    ``expected_providers`` (whose generations later claims moved on)."""
    for response, body in zip(responses, bodies):
        if response.status != 200:
            continue
        jsonschema.validate(response.body, schema.RESPONSE_V1_38)
        [provider] = response.body['allocations']
        assert provider in expected_providers
        assert response.body['mappings'] == {'': [provider]}
        stored = client.checked(
            'GET', '/allocations/%s' % body['consumer_uuid'])
        assert stored['allocations'][provider]['resources'] == {'VCPU': 1}
        assert list(stored['allocations']) == [provider]
        assert stored['consumer_generation'] == 1


def _assert_ten_won(server, responses):
    """Exactly the 10 units were claimed; every other claim was told
    nothing fits."""
    assert _statuses(responses) == {
        (200, None): 10,
        (409, 'placement.claim.no_candidates'): CLAIMS - 10,
    }, (responses, server.errors())


def test_concurrent_claims_fill_one_provider_exactly(server, client):
    provider = _provider(client, 10)
    bodies = [_claim('resources=VCPU:1&in_tree=%s' % provider)
              for _ in range(CLAIMS)]

    responses = _race(server.url, bodies)

    _assert_ten_won(server, responses)
    assert _vcpu_used(client, provider) == 10
    _check_winners(client, responses, bodies, {provider})
    assert server.errors() == ''


def test_concurrent_claims_spill_over_to_the_next_provider(server, client):
    """pack sends every claim to the same provider first; those whose
    search saw it with room after it filled must write the other."""
    aggregate = str(uuid.uuid4())
    providers = [_provider(client, 5, aggregate) for _ in range(2)]
    bodies = [_claim('resources=VCPU:1&member_of=%s' % aggregate)
              for _ in range(CLAIMS)]

    responses = _race(server.url, bodies)

    _assert_ten_won(server, responses)
    assert [_vcpu_used(client, p) for p in providers] == [5, 5]
    _check_winners(client, responses, bodies, set(providers))
    assert server.errors() == ''


@pytest.mark.parametrize('totals', [(5, 5), (1,) * 10],
                         ids=['two-providers', 'ten-small-providers'])
def test_claims_as_many_as_the_units_all_succeed(server, client, totals):
    """As many claims as units: every claim finds room somewhere, so
    none may fail. Racing searches see the same provider with room and
    all but one of their writes are refused there (with ten providers of
    one unit, on nearly every run): only the next-candidate retry makes
    them all succeed."""
    aggregate = str(uuid.uuid4())
    providers = [_provider(client, total, aggregate) for total in totals]
    bodies = [_claim('resources=VCPU:1&member_of=%s' % aggregate)
              for _ in range(sum(totals))]

    responses = _race(server.url, bodies)

    assert _statuses(responses) == {(200, None): sum(totals)}, (
        responses, server.errors())
    assert [_vcpu_used(client, p) for p in providers] == list(totals)
    _check_winners(client, responses, bodies, set(providers))
    assert server.errors() == ''


def test_concurrent_claims_of_one_consumer_one_wins(server, client):
    provider = _provider(client, 20)
    consumer = str(uuid.uuid4())
    bodies = [_claim('resources=VCPU:1&in_tree=%s' % provider, consumer)
              for _ in range(10)]

    responses = _race(server.url, bodies)

    assert _statuses(responses) == {
        (200, None): 1, (409, 'placement.concurrent_update'): 9,
    }, (responses, server.errors())
    assert _vcpu_used(client, provider) == 1
    assert server.errors() == ''
