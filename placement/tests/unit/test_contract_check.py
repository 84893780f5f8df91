"""The response check fails on what the document does not describe."""

import json

import pytest
import webob

from placement import microversion
from placement.tests import contract_check

_LATEST = {'openstack-api-version': 'placement 1.39',
           'content-type': 'application/json'}
_PROVIDER = {'uuid': '9f3c1a4e-2b7d-4c1e-8f5a-0d6b3e2c1a90', 'name': 'rp',
             'generation': 0, 'parent_provider_uuid': None,
             'root_provider_uuid': '9f3c1a4e-2b7d-4c1e-8f5a-0d6b3e2c1a90',
             'links': [{'rel': rel, 'href': '/x'} for rel in (
                 'self', 'inventories', 'usages', 'aggregates', 'traits',
                 'allocations')]}


def _problems(body, status=200, headers=_LATEST,
              path='/resource_providers/x', method='GET'):
    return contract_check.problems(path, method, status, headers,
                                   json.dumps(body).encode())


def test_a_matching_provider_passes():
    assert _problems(_PROVIDER) == []


def test_a_missing_member_fails():
    body = dict(_PROVIDER)
    del body['root_provider_uuid']
    assert "'root_provider_uuid' is a required property" in (
        _problems(body)[0])


def test_an_extra_member_fails():
    assert 'Additional properties' in _problems(
        dict(_PROVIDER, extra=1))[0]


def test_the_microversion_of_the_response_decides():
    # At 1.13 a provider has no parent: the latest shape is wrong there.
    older = dict(_LATEST, **{'openstack-api-version': 'placement 1.13'})
    assert 'Additional properties' in _problems(_PROVIDER,
                                                headers=older)[0]


def test_an_unlisted_status_fails():
    found = _problems(_PROVIDER, status=201)
    assert 'answered 201, which the document does not list' in found[0]


def test_an_unlisted_media_type_fails():
    found = _problems(_PROVIDER, headers=dict(
        _LATEST, **{'content-type': 'text/html'}))
    assert "media type 'text/html'" in found[0]


def test_an_error_without_the_error_document_fails():
    assert "'errors' is a required property" in _problems(
        {'message': 'nope'}, status=404)[0]


def test_a_2xx_from_an_undocumented_operation_fails():
    found = _problems({}, path='/widgets')
    assert 'is not in the document' in found[0]


def test_a_bodiless_status_with_a_body_fails():
    found = _problems({'x': 1}, status=204, method='DELETE')
    assert 'the document lists no body' in found[0]


def test_the_middleware_raises():
    def wrong(environ, start_response):
        start_response('200 OK', list(_LATEST.items()))
        return [json.dumps({'resource_providers': 'no'}).encode()]
    app = contract_check.ContractCheck(wrong)
    with pytest.raises(contract_check.ContractViolation,
                       match="'no' is not of type 'array'"):
        webob.Request.blank('/resource_providers').get_response(app)


def test_every_version_has_its_document():
    for text, _ in microversion.VERSIONS:
        headers = {'openstack-api-version': 'placement ' + text}
        assert contract_check.response_version(headers) == (
            microversion.Version.parse(text))
    assert contract_check.service_document(microversion.MIN_VERSION)['info'][
        'version'] == '1.0'


def test_a_handler_validating_with_an_undeclared_schema_fails():
    from placement.handlers import resource_provider
    version = microversion.Version(1, 20)
    declared = resource_provider.POST_SCHEMAS[-1][1]
    assert contract_check.undeclared_schemas(
        '/resource_providers', 'POST', version, [('body', declared)]) == []
    older = resource_provider.POST_SCHEMAS[0][1]
    found = contract_check.undeclared_schemas(
        '/resource_providers', 'POST', version, [('body', older)])
    assert 'validated its body with a schema its contract does not' in (
        found[0])
