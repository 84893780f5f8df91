"""Bounds on the work one candidates query may cause (``[placement]
max_request_groups``, ``max_request_terms``, ``max_candidate_search_steps``).

Beyond each, GET /allocation_candidates, its explain and POST /claims
answer 400 ``placement.query.too_large`` naming the option, rather than
spending minutes of CPU.
"""

import time
import uuid

import pytest
import webob

from placement.conf import placement as placement_conf
from placement.tests import fixtures

TOO_LARGE = 'placement.query.too_large'


def _call(app, method, path, body=None):
    req = webob.Request.blank(path, method=method, headers={
        'x-auth-token': 'admin', 'accept': 'application/json',
        'openstack-api-version': 'placement latest'})
    if body is not None:
        req.json_body = body
        req.content_type = 'application/json'
    return req.get_response(app)


def _ok(resp):
    assert resp.status_int in (200, 201, 204), resp.body
    return resp


@pytest.fixture(scope='module')
def db():
    """A tree of ten children with one CUSTOM_SLOT each, and 30 flat
    providers with VCPU."""
    db, cleanup = fixtures.new_database()
    app = fixtures.new_app(fixtures.new_conf(), db)
    _ok(_call(app, 'PUT', '/resource_classes/CUSTOM_SLOT'))
    root = str(uuid.uuid4())
    _ok(_call(app, 'POST', '/resource_providers',
              {'name': 'root', 'uuid': root}))
    for i in range(10):
        child = str(uuid.uuid4())
        _ok(_call(app, 'POST', '/resource_providers',
                  {'name': 'slot%d' % i, 'uuid': child,
                   'parent_provider_uuid': root}))
        _ok(_call(app, 'PUT', '/resource_providers/%s/inventories' % child,
                  {'resource_provider_generation': 0,
                   'inventories': {'CUSTOM_SLOT': {'total': 1}}}))
    for i in range(30):
        flat = str(uuid.uuid4())
        _ok(_call(app, 'POST', '/resource_providers',
                  {'name': 'flat%d' % i, 'uuid': flat}))
        _ok(_call(app, 'PUT', '/resource_providers/%s/inventories' % flat,
                  {'resource_provider_generation': 0,
                   'inventories': {'VCPU': {'total': 8}}}))
    yield db
    cleanup()


def _app(db, **overrides):
    return fixtures.new_app(fixtures.new_conf(**{
        'placement__' + name: value for name, value in overrides.items()}),
        db)


def _slots(groups):
    """``groups`` granular groups of one CUSTOM_SLOT each: more than
    the ten slots make the search try every arrangement."""
    return '&'.join('resources%d=CUSTOM_SLOT:1' % i
                    for i in range(1, groups + 1)) + '&group_policy=none'


def _assert_too_large(resp, option):
    assert resp.status_int == 400, resp.body
    error = resp.json['errors'][0]
    assert error['code'] == TOO_LARGE
    assert '[placement] %s' % option in error['detail']


def _claim(app, query):
    return _call(app, 'POST', '/claims', {
        'consumer_uuid': str(uuid.uuid4()), 'project_id': 'p',
        'user_id': 'u', 'consumer_type': 'INSTANCE',
        'consumer_generation': None, 'query': query})


def _every_entry_point(app, query):
    return [_call(app, 'GET', '/allocation_candidates?' + query),
            _call(app, 'GET', '/allocation_candidates/explain?' + query),
            _claim(app, query)]


def test_defaults_are_documented_values():
    assert placement_conf.DEFAULT_MAX_REQUEST_GROUPS >= 300
    assert placement_conf.DEFAULT_MAX_CANDIDATE_SEARCH_STEPS == 2000000


def test_too_many_groups(db):
    app = _app(db, max_request_groups=3)
    query = 'resources=VCPU:1&' + _slots(3)
    for resp in _every_entry_point(app, query):
        _assert_too_large(resp, 'max_request_groups')
        assert 'names 4 request groups' in resp.json['errors'][0]['detail']
    resp = _call(app, 'GET', '/allocation_candidates?' + _slots(3))
    assert resp.status_int == 200


def test_too_many_terms(db):
    app = _app(db, max_request_terms=4)
    query = ('resources=VCPU:1&required=HW_CPU_X86_AVX,!HW_CPU_X86_SSE&'
             'member_of=in:%s,%s' % (uuid.uuid4(), uuid.uuid4()))
    for resp in _every_entry_point(app, query):
        _assert_too_large(resp, 'max_request_terms')
        assert 'names 5 terms' in resp.json['errors'][0]['detail']
    resp = _call(app, 'GET', '/allocation_candidates?' + query.rpartition(
        ',')[0])
    assert resp.status_int == 200


def test_a_search_that_cannot_end_soon_is_refused(db):
    app = _app(db, max_candidate_search_steps=10000)
    # One candidate of eight groups is found within the bound (lazily:
    # keeping all 10!/2 of them for later requests would pass it).
    resp = _call(app, 'GET', '/allocation_candidates?limit=1&' + _slots(8))
    assert len(resp.json['allocation_requests']) == 1
    # All of them are too many.
    _assert_too_large(_call(app, 'GET', '/allocation_candidates?' +
                            _slots(8)), 'max_candidate_search_steps')
    for resp in _every_entry_point(app, _slots(11)):
        _assert_too_large(resp, 'max_candidate_search_steps')


def test_the_default_bound_ends_a_factorial_search_in_seconds(db):
    # Eleven groups over ten slots: some 10**8 arrangements unbounded.
    app = _app(db)
    started = time.monotonic()
    resp = _call(app, 'GET', '/allocation_candidates?' + _slots(11))
    _assert_too_large(resp, 'max_candidate_search_steps')
    assert time.monotonic() - started < 60


def test_a_limit_is_served_where_every_candidate_is_too_many(db):
    # Two groups at 30 trees: keeping every candidate (the memo) takes
    # 60 steps to build and 60 to walk, finding the first one lazily 62.
    app = _app(db, max_candidate_search_steps=100)
    query = ('/allocation_candidates?resources=VCPU:1&resources1=VCPU:1&'
             'group_policy=none')
    _assert_too_large(_call(app, 'GET', query), 'max_candidate_search_steps')
    resp = _call(app, 'GET', query + '&limit=1')
    assert len(resp.json['allocation_requests']) == 1


def test_unbounded_when_asked(db):
    app = _app(db, max_candidate_search_steps=-1)
    resp = _call(app, 'GET', '/allocation_candidates?' + _slots(4))
    # 10 * 9 * 8 * 7 arrangements of four groups over ten slots.
    assert len(resp.json['allocation_requests']) == 5040
