"""GET /capacity/fit parses its query as GET /allocation_candidates
does at the newest microversion: every bad query earns the same 400.
Named flavors: checked at start, exported on /metrics with the
providers over capacity."""

import pytest

from placement import deploy
from placement.tests import fixtures

RP = '0f2d8c3e-5b1a-4e7c-9d6f-3a2b1c0d9e8f'

BAD = [
    '',
    'resources=',
    'resources=VCPU',
    'resources=VCPU:0',
    'resources=VCPU:x',
    'resources=CUSTOM_NOPE:1',
    'resources=VCPU:1&required=CUSTOM_NOPE',
    'resources=VCPU:1&required=',
    'resources=VCPU:1&required=!',
    'resources=VCPU:1&required=in:A,!B',
    'resources=VCPU:1&required=HW_CPU_X86_AVX&required=!HW_CPU_X86_AVX',
    'resources=VCPU:1&member_of=not-a-uuid',
    'resources=VCPU:1&member_of=a,b',
    'resources=VCPU:1&in_tree=nope',
    'resources=VCPU:1&root_required=HW_CPU_X86_AVX,!HW_CPU_X86_AVX',
    'resources=VCPU:1&root_required=A&root_required=B',
    'resources=VCPU:1&limit=0',
    'resources=VCPU:1&group_policy=sometimes',
    'resources1=VCPU:1&resources2=VCPU:1',
    'resources=VCPU:1&same_subtree=,_A',
    'resources=VCPU:1&same_subtree=_A',
    'resources=VCPU:1&required_A=HW_CPU_X86_AVX',
    'resources=VCPU:1&bogus=1',
    'resources%s=VCPU:1' % ('x' * 65),
]


@pytest.fixture(scope='module')
def app():
    db, cleanup = fixtures.new_database()
    yield fixtures.new_app(fixtures.new_conf(), db)
    cleanup()


def _detail(resp):
    # The text after the generic preamble, without the request id.
    error = resp.json['errors'][0]
    return error['detail'], error.get('code')


@pytest.mark.parametrize('query', BAD)
def test_same_400_as_allocation_candidates(app, query):
    candidates = fixtures.call_as_admin(
        app, 'GET', '/allocation_candidates?' + query)
    fit = fixtures.call_as_admin(app, 'GET', '/capacity/fit?' + query)
    assert candidates.status_int == 400, candidates.text
    assert (fit.status_int, _detail(fit)) == (400, _detail(candidates))


def test_limit_counts_nothing(app):
    fixtures.call_as_admin(app, 'POST', '/resource_providers',
                           {'name': 'cn', 'uuid': RP})
    fixtures.call_as_admin(app, 'PUT', '/resource_providers/%s/inventories'
                           % RP, {'resource_provider_generation': 0,
                                  'inventories': {'VCPU': {'total': 4}}})
    fit = fixtures.call_as_admin(app, 'GET',
                                 '/capacity/fit?resources=VCPU:1&limit=1')
    assert fit.json['fit']['total'] == 4



@pytest.mark.parametrize('line, reason', [
    ('m1.small', 'expected "NAME = QUERY"'),
    ('= resources=VCPU:1', 'expected "NAME = QUERY"'),
    ('m1.small = ', 'expected "NAME = QUERY"'),
    ('m1.small = resources=VCPU:0', 'requires amount >= 1'),
    ('m1.small = resources1=VCPU:1&resources2=VCPU:1',
     'parameter is required when specifying more than one'),
])
def test_a_malformed_flavor_stops_the_service(line, reason):
    db, cleanup = fixtures.new_database()
    try:
        with pytest.raises(deploy.ConfigurationError, match=reason):
            fixtures.new_app(fixtures.new_conf(capacity__flavors=[line]), db)
        with pytest.raises(deploy.ConfigurationError, match='named twice'):
            fixtures.new_app(fixtures.new_conf(capacity__flavors=[
                'a = resources=VCPU:1', 'a = resources=VCPU:2']), db)
    finally:
        cleanup()


def test_flavor_fit_and_over_capacity_metrics(caplog):
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(fixtures.new_conf(
            metrics__capacity_refresh_interval=0,
            capacity__flavors=['small = resources=VCPU:1,MEMORY_MB:512',
                               'big = resources=VCPU:6',
                               'odd = resources=CUSTOM_NOPE:1']), db)
        aggregate = '8c3f5b2a-1d4e-4f6a-9b7c-2e1d0a9f8b7c'
        for method, path, body in (
                ('POST', '/resource_providers', {'name': 'cn', 'uuid': RP}),
                ('PUT', '/resource_providers/%s/inventories' % RP,
                 {'resource_provider_generation': 0, 'inventories': {
                     'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 1024}}}),
                ('PUT', '/resource_providers/%s/aggregates' % RP,
                 {'resource_provider_generation': 1,
                  'aggregates': [aggregate]})):
            assert fixtures.call_as_admin(app, method, path,
                                          body).status_int == 200
        text = fixtures.call_as_admin(app, 'GET', '/metrics').text
        assert 'placement_flavor_fit{flavor="small"} 2.0' in text
        assert ('placement_flavor_fit{aggregate="%s",flavor="small"} 2.0'
                % aggregate) in text
        assert 'placement_flavor_fit{flavor="big"} 1.0' in text
        assert 'flavor="odd"' not in text
        assert 'odd not counted: No such resource class' in caplog.text
        assert 'placement_provider_over_capacity{' not in text
        # Reserve more than is free: over capacity by 2, and nothing of
        # "big" fits any more.
        assert fixtures.call_as_admin(
            app, 'PUT', '/allocations/%s' % RP,
            {'allocations': {RP: {'resources': {'VCPU': 6}}},
             'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
             'consumer_type': 'INSTANCE'}).status_int == 204
        assert fixtures.call_as_admin(
            app, 'PUT', '/resource_providers/%s/inventories/VCPU' % RP,
            {'resource_provider_generation': 3, 'total': 8,
             'reserved': 4}).status_int == 200
        text = fixtures.call_as_admin(app, 'GET', '/metrics').text
        assert ('placement_provider_over_capacity{provider_uuid="%s",'
                'resource_class="VCPU",resource_provider="cn"} 2.0'
                % RP) in text
        assert 'placement_flavor_fit{flavor="big"} 0.0' in text
        page = fixtures.call_as_admin(app, 'GET', '/capacity').text
        assert '<td>cn</td><td>%s</td><td>VCPU</td>' % RP in page
    finally:
        cleanup()
