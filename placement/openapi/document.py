"""The OpenAPI 3.1 document of one microversion, generated.

Built from the route table (``placement.web.route_table.ROUTES``, plus the
operations middleware serves) and the ``placement.openapi.contract``
declarations of the handlers serving that version: their query, body and
response schemas, chosen per version exactly as the handlers choose them.
Nothing here restates a schema; see api-ref/openapi.rst.
"""

import http
import re

from placement import microversion
from placement.middleware import healthcheck
from placement.openapi import contract
from placement.schemas import common
from placement.schemas import error as error_schema

OPENAPI_VERSION = '3.1.0'
#: Flag on operations outside the upstream Placement API.
EXTENSION = 'x-placement-extension'
SECURITY_SCHEME = 'keystone'
VERSION_HEADER = 'OpenStack-API-Version'

#: Statuses any operation may answer with the error document: a bad
#: version header or query (400), no or bad token (401), policy (403),
#: unacceptable version or Accept (406), request line too long (414,
#: ``[api] max_request_line``), database unavailable (503).
COMMON_ERRORS = (400, 401, 403, 406, 414, 503)
#: Statuses of operations that read a body: too large, not JSON.
BODY_ERRORS = (413, 415)
#: Statuses of operations that write: a write that keeps losing to
#: concurrent writers (a database conflict re-run until its budget is
#: spent) answers 409 placement.concurrent_update.
WRITE_ERRORS = (409,)
READ_METHODS = ('GET', 'HEAD')
#: Error bodies are JSON unless the client prefers HTML or text.
ERROR_MEDIA_TYPES = ('text/html', 'text/plain')

_PATH_PARAMETER = re.compile(r'{([^}]+)}')

#: What a path parameter names, by its name in the route table: a
#: provider or consumer uuid, a resource class or trait name (custom or
#: standard). Other values are not found (404) or refused (400).
PATH_PARAMETERS = {
    'uuid': common.UUID,
    'consumer_uuid': common.UUID,
    'resource_class': common.RESOURCE_CLASS_NAME,
    'name': common.RESOURCE_CLASS_NAME,
}

#: OpenAPI links, for clients and stateful testing that follow them:
#: (operation, status) -> (path prefix of the operations it leads to,
#: the path parameter they share, where the value comes from).
LINKS = {
    ('POST', '/resource_providers', 200):
        ('/resource_providers/{uuid}', 'uuid', '$response.body#/uuid'),
    ('PUT', '/resource_providers/{uuid}', 200):
        ('/resource_providers/{uuid}', 'uuid', '$response.body#/uuid'),
    ('PUT', '/allocations/{consumer_uuid}', 204):
        ('/allocations/{consumer_uuid}', 'consumer_uuid',
         '$request.path.consumer_uuid'),
    ('PUT', '/traits/{name}', 201):
        ('/traits/{name}', 'name', '$request.path.name'),
    ('PUT', '/resource_classes/{name}', 201):
        ('/resource_classes/{name}', 'name', '$request.path.name'),
}


def _middleware_routes():
    """Operations answered by middleware rather than the dispatcher."""
    return {healthcheck.PATH: healthcheck.OPERATIONS}


def operations(version, routes):
    """``(path, method, operation_id, Contract)`` for every operation of
    ``routes`` (the route table) served at ``version``; a handler
    without a contract is an error."""
    found = []
    for path, methods in list(routes.items()) + list(
            _middleware_routes().items()):
        for method, target in methods.items():
            if isinstance(target, contract.Contract):
                found.append((path, method, _operation_id(method, path),
                              target))
                continue
            handlers = target if isinstance(target, tuple) else (target,)
            chosen = microversion.select(handlers, version)
            if chosen is None:
                continue
            declared = contract.of(chosen)
            if declared is None:
                raise LookupError('%s %s: handler %s declares no contract'
                                  % (method, path, chosen.__name__))
            if declared.since and version < microversion.Version.parse(
                    declared.since):
                continue
            found.append((path, method, chosen.__name__, declared))
    return found


def _operation_id(method, path):
    words = re.sub(r'[^a-z0-9]+', '_', path.lower()).strip('_')
    return '%s_%s' % (method.lower(), words or 'root')


def build(version, routes, headerless=True):
    """The document of ``routes`` (the route table) at ``version`` (a
    ``microversion.Version``). With ``headerless``, each operation also
    lists what a request without the version header gets, which is
    served at 1.0 (``_add_headerless``); without, only what a request
    sending ``placement X.Y`` gets (the test suite checks each response
    against that)."""
    at_min = {}
    if headerless and version != microversion.MIN_VERSION:
        at_min = {(path, method): declared for path, method, _, declared
                  in operations(microversion.MIN_VERSION, routes)}
    paths = {}
    for path, method, operation_id, declared in operations(version, routes):
        operation = _operation(version, path, method, operation_id,
                               declared)
        if at_min:
            _add_headerless(operation['responses'],
                            at_min.get((path, method)))
        paths.setdefault(path, {})[method.lower()] = operation
    return {
        'openapi': OPENAPI_VERSION,
        'info': {
            'title': 'Placement API',
            'version': str(version),
            'description': (
                'OpenStack Placement at microversion %s (send "%s: '
                'placement %s"; a request without the header is served at '
                '%s). Operations flagged %s are extensions of this '
                'implementation.' % (version, VERSION_HEADER, version,
                                     microversion.MIN_VERSION, EXTENSION)),
        },
        'paths': _with_links(paths),
        'components': {
            'securitySchemes': {SECURITY_SCHEME: {
                'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
                'description': 'A Keystone token.'}},
            'schemas': {
                'error': microversion.choose(version,
                                             error_schema.DOCUMENTS),
                'unauthorized': error_schema.UNAUTHORIZED},
            'responses': {'error': _error_response('error'),
                          'unauthorized': _error_response('unauthorized')},
            'headers': {VERSION_HEADER: {
                'description': 'The microversion the response is for.',
                'schema': {'type': 'string'}}},
        },
        'security': [{SECURITY_SCHEME: []}],
    }


def _with_links(paths):
    """Add the ``LINKS`` whose source and targets this version serves."""
    for (method, source, status), (prefix, name, value) in LINKS.items():
        response = paths.get(source, {}).get(method.lower(), {}).get(
            'responses', {}).get(str(status))
        if response is None:
            continue
        links = {
            operation['operationId']: {
                'operationId': operation['operationId'],
                'parameters': {name: value}}
            for path, operations in sorted(paths.items())
            if path.startswith(prefix)
            for operation in operations.values()}
        if links:
            response['links'] = links
    return paths


def _operation(version, path, method, operation_id, declared):
    operation = {
        'operationId': operation_id,
        'parameters': (_path_parameters(path)
                       + _query_parameters(contract.pick(declared.query,
                                                         version))
                       + [_version_parameter(version)]),
        'responses': _responses(version, path, method, declared),
    }
    if declared.summary:
        operation['summary'] = declared.summary
    body = contract.pick(declared.body, version)
    if body is not None:
        operation['requestBody'] = {
            'required': True,
            'content': {contract.JSON: {'schema': body}}}
    if declared.public:
        operation['security'] = []
    elif declared.token_optional:
        operation['security'] = [{}, {SECURITY_SCHEME: []}]
    if declared.extension:
        operation[EXTENSION] = True
    return operation


def _path_parameters(path):
    return [{'name': name, 'in': 'path', 'required': True,
             'schema': PATH_PARAMETERS.get(name, {'type': 'string'})}
            for name in _PATH_PARAMETER.findall(path)]


def _query_parameters(schema):
    """One parameter per named key of a query schema; keys matched by
    pattern (request groups such as ``resources1``) as one exploded
    form object."""
    if schema is None:
        return []
    required = set(schema.get('required', ()))
    parameters = [{'name': name, 'in': 'query',
                   'required': name in required, 'schema': value}
                  for name, value in schema.get('properties', {}).items()]
    if schema.get('patternProperties'):
        parameters.append({
            'name': 'groups', 'in': 'query', 'style': 'form',
            'explode': True,
            'description': 'Request-group keys, named by the patterns.',
            'schema': {'type': 'object',
                       'patternProperties': schema['patternProperties']}})
    return parameters


def _version_parameter(version):
    """The version header, as a request must send it to get what the
    document describes: ``placement X.Y`` of the document's version. A
    request without it is served at 1.0 (1.0 shapes, and a 404 for an
    operation that comes later), so it is required from 1.1 and optional
    only in the 1.0 document (api-ref/openapi.rst)."""
    value = '%s %s' % (microversion.SERVICE_TYPE, version)
    absent = version == microversion.MIN_VERSION
    return {'name': VERSION_HEADER, 'in': 'header', 'required': not absent,
            'description': (
                'Send "%s" for what this document describes. A request '
                'without the header is served at microversion %s: it '
                'gets the responses of the document at ?microversion=%s.'
                % (value, microversion.MIN_VERSION,
                   microversion.MIN_VERSION)),
            'schema': {'type': 'string', 'enum': [value]}}


def _responses(version, path, method, declared):
    responses = {}
    for status, body in declared.responses.items():
        if contract.pick(body, version) is not contract.ABSENT:
            responses[str(status)] = _response(status, body, version)
    statuses = set(COMMON_ERRORS) | set(declared.errors)
    if declared.body is not None:
        statuses |= set(BODY_ERRORS)
    if method not in READ_METHODS:
        statuses |= set(WRITE_ERRORS)
    if _PATH_PARAMETER.search(path):
        statuses.add(404)
    for status in sorted(statuses - set(declared.responses)):
        responses[str(status)] = {'$ref': '#/components/responses/%s' % (
            'unauthorized' if status == 401 else 'error')}
    return responses


def _add_headerless(responses, declared):
    """Add to an operation's ``responses`` (of a version above 1.0) what
    a request without the version header gets: the answers of
    ``declared``, the operation at 1.0, or a 404 where it is not served
    at 1.0. A status answered at both versions with different bodies
    lists either (``anyOf``)."""
    error = {'$ref': '#/components/responses/error'}
    if declared is None:
        responses.setdefault('404', error)
        return
    for status in declared.errors:
        responses.setdefault(str(status), error)
    for status, body in declared.responses.items():
        if contract.pick(body, microversion.MIN_VERSION) is contract.ABSENT:
            continue
        old = _response(status, body, microversion.MIN_VERSION)
        new = responses.get(str(status))
        if new is None:
            old['description'] += ' (at 1.0: without the version header)'
            responses[str(status)] = old
            continue
        for media_type, media in old.get('content', {}).items():
            content = new.setdefault('content', {})
            if media_type not in content:
                content[media_type] = media
            elif content[media_type]['schema'] != media['schema']:
                content[media_type] = {'schema': {'anyOf': [
                    content[media_type]['schema'], media['schema']]}}


def _response(status, body, version):
    response = {'description': http.HTTPStatus(status).phrase,
                'headers': _version_header()}
    if isinstance(body, (contract.Media, list)):
        response['content'] = {
            media.media_type: {'schema': media.schema or {'type': 'string'}}
            for media in (body if isinstance(body, list) else [body])}
    else:
        schema = contract.pick(body, version)
        if schema is not None:
            response['content'] = {contract.JSON: {'schema': schema}}
    return response


def _version_header():
    return {VERSION_HEADER: {'$ref': '#/components/headers/' + VERSION_HEADER}}


def _error_response(name):
    """An error document (api-ref/general.rst, 'Errors'): JSON, or HTML
    or text when the client prefers those."""
    content = {contract.JSON: {'schema': {
        '$ref': '#/components/schemas/' + name}}}
    content.update({media: {'schema': {'type': 'string'}}
                    for media in ERROR_MEDIA_TYPES})
    return {'description': 'An error (the status line names it).',
            'headers': _version_header(), 'content': content}
