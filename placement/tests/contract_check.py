"""Every response the test suite receives must match the OpenAPI document.

``ContractCheck`` wraps an in-process application (``conftest.py`` wraps
every application ``deploy.build_app`` builds during the tests). For each
response it finds the operation in the document of the response's
microversion and raises ``ContractViolation`` when the status is not one
the operation lists, the media type is not one the status lists, or a
JSON body does not validate against the schema. Validators are compiled
once per schema; the compiled check of ``placement.web.fast_validation``
answers first, jsonschema only words a refusal.

``record_validation`` (installed by ``conftest.py`` around
``validation.validate_query`` and ``validation.json_body``) notes the
schema a handler validated with; the check then requires it to be the
very schema the operation's contract declares for that version, so the
document's request schemas are the handlers' own.
"""

import functools
import json
import re
import uuid

import jsonschema

from placement import microversion
from placement.openapi import contract
from placement.openapi import document as openapi
from placement.web import fast_validation
from placement.web import route_table

#: environ key: [(kind, schema), ...] validated while serving a request.
VALIDATED = 'placement.tests.validated'


class ContractViolation(AssertionError):
    pass


_TEMPLATE_PARAMETER = re.compile(r'{[^}]+}')
_VALIDATORS = {}
_MATCHERS = {}


def _matchers(paths):
    """(regex, template) for the document's path templates, literal ones
    first."""
    key = tuple(paths)
    found = _MATCHERS.get(key)
    if found is None:
        found = _MATCHERS[key] = [
            (re.compile('^%s$' % _TEMPLATE_PARAMETER.sub(
                '[^/]+', re.escape(t).replace(r'\{', '{').replace(
                    r'\}', '}'))), t)
            for t in sorted(paths, key=lambda t: ('{' in t, t))]
    return found


def operation(document, path, method):
    """The operation object serving ``method path``, or None."""
    for regex, template in _matchers(document['paths']):
        if regex.match(path):
            return document['paths'][template].get(method.lower())
    return None


def _lookup(document, ref):
    node = document
    for part in ref.lstrip('#/').split('/'):
        node = node[part]
    return node


def _resolve(document, node):
    while isinstance(node, dict) and '$ref' in node:
        node = _lookup(document, node['$ref'])
    return node


def _is_uuid(value):
    """jsonschema's ``uuid`` format, for the compiled check."""
    if not isinstance(value, str):
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(value[i:i + 1] == '-' for i in (8, 13, 18, 23))


_FAST_FORMATS = {'uuid': _is_uuid}


def _validator(schema):
    key = id(schema)
    cached = _VALIDATORS.get(key)
    if cached is None or cached[0] is not schema:
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.
            FORMAT_CHECKER)
        cached = _VALIDATORS[key] = (schema, validator)
    return cached[1]


def record_validation(kind, validate):
    """``validate(req, schema, ...)`` noting ``(kind, schema)`` in the
    request's environ."""
    def recording(req, schema, *args, **kwargs):
        req.environ.setdefault(VALIDATED, []).append((kind, schema))
        return validate(req, schema, *args, **kwargs)
    return recording


_DECLARED = {}


@functools.lru_cache(maxsize=None)
def service_document(version):
    """The service's OpenAPI document at ``version``, built once, without
    the 1.0 answers it lists for requests without the version header."""
    return openapi.build(version, route_table.ROUTES, headerless=False)


def _declared(version):
    found = _DECLARED.get(version)
    if found is None:
        found = _DECLARED[version] = {
            (path, method): declared
            for path, method, _, declared in openapi.operations(
                version, route_table.ROUTES)}
    return found


def undeclared_schemas(path, method, version, validated):
    """Problems with the schemas a handler validated with: each must be
    the one its contract declares for ``version``."""
    document = service_document(version)
    for regex, template in _matchers(document['paths']):
        if regex.match(path):
            break
    else:
        return []
    declared = _declared(version).get((template, method))
    if declared is None:
        return []
    found = []
    for kind, schema in validated:
        expected = contract.pick(getattr(declared, kind), version)
        if schema is not expected:
            found.append('%s %s at %s validated its %s with a schema its '
                         'contract does not declare' % (method, template,
                                                        version, kind))
    return found


def response_version(headers):
    """The microversion a response is for (its header), else the latest."""
    value = headers.get(openapi.VERSION_HEADER.lower())
    if value:
        try:
            return microversion.Version.parse(value.split()[-1])
        except (TypeError, ValueError):
            pass
    return microversion.MAX_VERSION


def problems(path, method, status, headers, body):
    """What is wrong with a response (an empty list when nothing)."""
    # The document of exactly the response's version: a response of a
    # request without the header says 1.0.
    document = service_document(response_version(headers))
    found = operation(document, path, method)
    if found is None:
        if status < 400:
            return ['%s %s answered %s but is not in the document'
                    % (method, path, status)]
        # Unknown paths and methods: the error document, when JSON.
        response = document['components']['responses'][
            'unauthorized' if status == 401 else 'error']
    else:
        response = found['responses'].get(str(status))
        if response is None:
            return ['%s %s answered %s, which the document does not list '
                    '(it lists %s)' % (method, path, status,
                                       ', '.join(found['responses']))]
        response = _resolve(document, response)
    content = response.get('content')
    media_type = (headers.get('content-type') or '').split(';')[0].strip()
    if not content:
        if body and method != 'HEAD':
            return ['%s %s %s: the document lists no body, got %r' % (
                method, path, status, body[:200])]
        return []
    if not body and method == 'HEAD':
        return []
    if media_type not in content:
        return ['%s %s %s: media type %r, the document lists %s' % (
            method, path, status, media_type, ', '.join(content))]
    if media_type != 'application/json':
        return []
    schema = _resolve(document, content[media_type]['schema'])
    try:
        data = json.loads(body)
    except ValueError as exc:
        return ['%s %s %s: body is not JSON: %s' % (method, path, status,
                                                    exc)]
    if fast_validation.surely_valid(schema, _FAST_FORMATS, data):
        return []
    error = jsonschema.exceptions.best_match(
        _validator(schema).iter_errors(data))
    if error is not None:
        return ['%s %s %s: body does not match the document: %s' % (
            method, path, status, error)]
    return []


class ContractCheck:
    """WSGI middleware raising ContractViolation on a response the
    document does not describe."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        captured = {}

        def capture(status, headers, exc_info=None):
            captured['status'] = status
            captured['headers'] = headers
            return start_response(status, headers, exc_info)

        path = environ.get('PATH_INFO') or '/'
        method = environ.get('REQUEST_METHOD', 'GET')
        if method == 'OPTIONS':
            # CORS preflights: the CORS middleware's, not API operations.
            return self.application(environ, start_response)
        result = self.application(environ, capture)
        try:
            body = b''.join(result)
        finally:
            if hasattr(result, 'close'):
                result.close()
        headers = {k.lower(): v for k, v in captured['headers']}
        found = problems(path, method, int(captured['status'].split()[0]),
                         headers, body)
        found += undeclared_schemas(path, method, response_version(headers),
                                    environ.get(VALIDATED, ()))
        if found:
            raise ContractViolation('; '.join(found))
        return [body]
