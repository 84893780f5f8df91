"""The generated OpenAPI document: valid for every microversion, built
from the route table and the handlers' declarations."""

import os

from openapi_spec_validator import validate
import pytest

from placement import microversion
from placement.openapi import contract
from placement.openapi import document as openapi
from placement.tests import contract_check
from placement.web import route_table

VERSIONS = [microversion.Version.parse(v) for v, _ in microversion.VERSIONS]


def _skip_on_database_passes():
    # The document does not depend on the database: validating it (some
    # seconds per version) once, in the SQLite pass, is enough.
    if os.environ.get('PLACEMENT_TEST_DB_URL'):
        pytest.skip('validated in the SQLite pass')


@pytest.mark.parametrize('version', VERSIONS, ids=str)
def test_document_is_valid_openapi_3_1(version):
    _skip_on_database_passes()
    validate(openapi.build(version, route_table.ROUTES))


def test_every_routed_handler_declares_a_contract():
    for path, methods in route_table.ROUTES.items():
        for method, target in methods.items():
            for one in target if isinstance(target, tuple) else (target,):
                assert contract.of(one) is not None, (method, path)


@pytest.mark.parametrize('version', VERSIONS, ids=str)
def test_operations_are_those_the_dispatcher_serves(version):
    listed = {(path, method.upper())
              for path, item in contract_check.service_document(
                  version)['paths'].items()
              for method in item}
    served = set()
    for path, methods in route_table.ROUTES.items():
        for method, target in methods.items():
            chosen = microversion.select(
                target if isinstance(target, tuple) else (target,), version)
            if chosen is None:
                continue
            since = contract.of(chosen).since
            if since and version < microversion.Version.parse(since):
                continue
            served.add((path, method))
    served |= {('/healthcheck', 'GET'), ('/healthcheck', 'HEAD')}
    assert listed == served


def test_query_and_body_schemas_are_the_handlers_own():
    from placement.handlers import allocation
    from placement.handlers import resource_provider
    latest = contract_check.service_document(microversion.MAX_VERSION)
    put = latest['paths']['/allocations/{consumer_uuid}']['put']
    assert (put['requestBody']['content']['application/json']['schema']
            is allocation.DICT_SCHEMAS[-1][1])
    older = contract_check.service_document(microversion.Version(1, 3))
    params = older['paths']['/resource_providers']['get']['parameters']
    assert [p['name'] for p in params if p['in'] == 'query'] == list(
        resource_provider.LIST_SCHEMAS[1][1]['properties'])


def test_request_group_keys_are_one_exploded_parameter():
    latest = contract_check.service_document(microversion.MAX_VERSION)
    params = latest['paths']['/allocation_candidates']['get']['parameters']
    groups = [p for p in params if p['name'] == 'groups']
    assert groups[0]['style'] == 'form' and groups[0]['explode'] is True
    assert '^resources([a-zA-Z0-9_-]{1,64})?$' in (
        groups[0]['schema']['patternProperties'])


def test_extensions_are_flagged_and_upstream_operations_are_not():
    latest = contract_check.service_document(microversion.MAX_VERSION)
    flagged = {path for path, item in latest['paths'].items()
               for operation in item.values()
               if operation.get(openapi.EXTENSION)}
    assert flagged == {'/allocation_candidates/explain', '/healthcheck',
                       '/metrics', '/capacity', '/capacity/fit',
                       '/openapi.json', '/claims'}


def test_public_and_token_optional_operations():
    paths = contract_check.service_document(microversion.MAX_VERSION)['paths']
    assert paths['/']['get']['security'] == []
    assert paths['/openapi.json']['get']['security'] == []
    assert paths['/healthcheck']['get']['security'] == [
        {}, {openapi.SECURITY_SCHEME: []}]
    assert 'security' not in paths['/resource_providers']['get']


def test_statuses_per_operation():
    paths = contract_check.service_document(microversion.MAX_VERSION)['paths']
    delete = paths['/resource_providers/{uuid}']['delete']['responses']
    assert sorted(delete) == ['204', '400', '401', '403', '404', '406',
                              '409', '414', '503']
    assert delete['409'] == {'$ref': '#/components/responses/error'}
    old = contract_check.service_document(microversion.Version(1, 19))['paths']
    assert '201' in old['/resource_providers']['post']['responses']
    assert '200' not in old['/resource_providers']['post']['responses']


def test_every_write_may_answer_a_lost_conflict():
    # A write re-run on database conflicts until its budget is spent
    # answers 409, whatever the operation; reads never do.
    paths = contract_check.service_document(microversion.MAX_VERSION)['paths']
    assert '409' in paths['/traits/{name}']['put']['responses']
    assert '409' not in paths['/traits/{name}']['get']['responses']


def test_a_handler_without_contract_is_refused():
    def undeclared(req):
        pass
    with pytest.raises(LookupError, match='undeclared declares no contract'):
        openapi.build(microversion.MAX_VERSION,
                      {'/widgets': {'GET': undeclared}})
