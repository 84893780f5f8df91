"""GET /capacity/fit parses its query as GET /allocation_candidates
does at the newest microversion: every bad query earns the same 400."""

import pytest

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

