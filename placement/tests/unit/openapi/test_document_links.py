"""Links and path-parameter schemas of the OpenAPI document: what a
client (and schemathesis's stateful mode) follows from one operation to
the next."""

import pytest

from placement import microversion
from placement.openapi import document as openapi
from placement.web import route_table

LATEST = microversion.Version.parse('1.39')


def _operations(document):
    return {operation['operationId']: (path, operation)
            for path, methods in document['paths'].items()
            for operation in methods.values()}


@pytest.mark.parametrize('minor', range(0, 40))
def test_every_link_names_an_operation_and_its_path_parameter(minor):
    document = openapi.build(microversion.Version.parse('1.%d' % minor),
                             route_table.ROUTES)
    operations = _operations(document)
    for path, methods in document['paths'].items():
        for operation in methods.values():
            for response in operation['responses'].values():
                for link in response.get('links', {}).values():
                    target_path, _target = operations[link['operationId']]
                    for name in link['parameters']:
                        assert '{%s}' % name in target_path


def test_a_created_provider_leads_to_every_operation_on_it():
    document = openapi.build(LATEST, route_table.ROUTES)
    links = document['paths']['/resource_providers']['post'][
        'responses']['200']['links']
    expected = {operation['operationId']
                for path, methods in document['paths'].items()
                if path.startswith('/resource_providers/{uuid}')
                for operation in methods.values()}
    assert set(links) == expected
    assert {str(link['parameters']) for link in links.values()} == {
        str({'uuid': '$response.body#/uuid'})}


def test_no_link_from_a_status_the_version_does_not_answer():
    # Before 1.20 creating a provider answers 201 without a body.
    document = openapi.build(microversion.Version.parse('1.19'),
                             route_table.ROUTES)
    responses = document['paths']['/resource_providers']['post'][
        'responses']
    assert '200' not in responses
    assert all('links' not in r for r in responses.values())


def test_path_parameters_say_what_they_name():
    document = openapi.build(LATEST, route_table.ROUTES)
    schemas = {}
    for methods in document['paths'].values():
        for operation in methods.values():
            for parameter in operation['parameters']:
                if parameter['in'] == 'path':
                    schemas.setdefault(parameter['name'], []).append(
                        parameter['schema'])
    assert set(schemas) == set(openapi.PATH_PARAMETERS)
    assert all(s == {'type': 'string', 'format': 'uuid'}
               for s in schemas['uuid'] + schemas['consumer_uuid'])
    assert all(s['pattern'] == '^[A-Z0-9_]+$'
               for s in schemas['name'] + schemas['resource_class'])
