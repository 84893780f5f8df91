"""Generate the os-api-ref tables and samples of the API reference.

Writes ``api-ref/parameters.yaml`` (every parameter, with the microversion
that added or removed it), one ``api-ref/<page>.inc`` per reference page
(an os-api-ref section per operation: method, path, statuses, parameter
tables, samples; each page includes its own) and
``api-ref/samples/*.json``, real requests and responses of the in-process
application at the latest microversion.

Parameters come from the generated OpenAPI documents of every
microversion (``GET /openapi.json``), so the tables follow the schemas
the handlers validate with; only the descriptions are written here.

    python tools/gen-api-ref.py          # rewrite the files
    python tools/gen-api-ref.py --check  # exit 1 if they are out of date

Run it after changing a route, a schema or a description below;
placement/tests/functional/test_api_ref.py runs ``--check``.
"""

import argparse
import difflib
import json
import os
import re
import sys

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..'))
API_REF = os.path.join(ROOT, 'api-ref')
sys.path.insert(0, ROOT)

from placement import microversion  # noqa: E402
from placement.openapi import contract  # noqa: E402
from placement.openapi import document  # noqa: E402
from placement.web import route_table  # noqa: E402

LATEST = microversion.MAX_VERSION
VERSIONS = [microversion.Version.parse(v) for v, _ in microversion.VERSIONS]
SECTION_ORDER = {'header': 0, 'path': 1, 'query': 2, 'body': 3}

#: The page whose .inc documents an operation: the first path prefix
#: that matches, longest first.
PAGES = {
    '/': 'root',
    '/healthcheck': 'healthcheck',
    '/resource_providers': 'resource-providers',
    '/resource_providers/{uuid}/inventories': 'inventories',
    '/resource_providers/{uuid}/aggregates': 'aggregates',
    '/resource_providers/{uuid}/traits': 'traits',
    '/resource_providers/{uuid}/usages': 'usages',
    '/resource_providers/{uuid}/allocations': 'allocations',
    '/traits': 'traits',
    '/resource_classes': 'resource-classes',
    '/allocations': 'allocations',
    '/usages': 'usages',
    '/reshaper': 'reshaper',
    '/allocation_candidates': 'allocation-candidates',
    '/allocation_candidates/explain': 'allocation-candidates-explain',
    '/claims': 'claims',
    '/openapi.json': 'openapi',
    '/metrics': 'metrics',
    '/capacity': 'metrics',
    '/capacity/fit': 'capacity-fit',
}

#: The name shown for a key matched by pattern, by the pattern (or, for
#: ``additionalProperties``, by the name of the object holding it).
UUID_PATTERN = '^[0-9a-fA-F-]{36}$'
PATTERN_NAMES = {
    '^[A-Z0-9_]+$': '{resource_class}',
    '[a-zA-Z0-9_-]': '{request_group_suffix}',
}
HOLDER_NAMES = {
    'allocations': '{resource_provider_uuid}',
    'provider_summaries': '{resource_provider_uuid}',
    'inventories': '{resource_class}',
    'resources': '{resource_class}',
    'mappings': '{request_group_suffix}',
    'usages': '{consumer_type}',
    '{consumer_type}': '{resource_class}',
}
GROUP_KEY = re.compile(r'^\^(\w+)\(.*\)\?\$$')

#: Descriptions, by the dotted location of a parameter; the longest
#: matching suffix wins (``a.b.c`` is looked up as ``a.b.c``, ``b.c``,
#: ``c``), under the operation's path first, then anywhere.
DESCRIPTIONS = {
    # GET /capacity/fit (api-ref/capacity-fit.rst).
    '/capacity/fit body:fit': (
        'How many more instances of the request fit, given current '
        'usage.'),
    '/capacity/fit body:fit.total': (
        'The largest number of further instances the whole fleet holds '
        'at once (a sharing provider counted once).'),
    '/capacity/fit body:fit.by_root': (
        'Per tree that holds at least one, by its root provider uuid.'),
    '/capacity/fit body:fit.by_root.{key}': (
        'The largest number of further instances this tree holds at '
        'once.'),
    '/capacity/fit body:fit.by_aggregate': (
        'Per aggregate, by its uuid: the instances the trees of its '
        'member roots hold together.'),
    '/capacity/fit body:fit.by_aggregate.{key}': (
        'The instances the trees of this aggregate hold at once.'),
    '/capacity/fit body:fit.limited_by': (
        'Per resource class: in how many trees it is the first to run '
        'out, full trees included.'),
    '/capacity/fit body:fit.limited_by.{key}': (
        'The number of trees this class limits.'),
    '/capacity/fit body:fit.exact': (
        'Whether every count is the most that fits; false when a '
        'packing was cut short and the counts are packings that fit, '
        'lower bounds.'),
    # Headers and paths.
    'OpenStack-API-Version': (
        'The microversion, ``placement X.Y`` or ``placement latest``; '
        '1.0 when absent.'),
    'path:uuid': 'The uuid of the resource provider.',
    'path:consumer_uuid': 'The uuid of the consumer.',
    'path:resource_class': 'The name of a resource class.',
    '/resource_classes/{name} path:name': 'The name of a resource class.',
    '/traits/{name} path:name': 'The name of a trait.',
    # Queries.
    '/resource_providers query:name': 'Only the provider of this name.',
    '/resource_providers query:uuid': 'Only the provider of this uuid.',
    'query:member_of': (
        'Only providers in this aggregate; ``in:A,B`` means in any of '
        'them. Repeatable from 1.24 (all must match); a leading ``!`` '
        'excludes the aggregates, from 1.32.'),
    '/resource_providers query:resources': (
        'A comma-separated list of ``CLASS:AMOUNT``: only providers with '
        'capacity for all of them.'),
    'query:in_tree': 'Only providers in the tree of this provider.',
    'query:required': (
        'A comma-separated list of traits the provider must have; a '
        'leading ``!`` (from 1.22) means it must not; ``in:A,B`` (from '
        '1.39) means any one of them, and the parameter may be repeated.'),
    '/traits query:name': (
        '``startswith:PREFIX`` or ``in:A,B,C``: only these traits.'),
    'query:associated': (
        '``true``: only traits some provider has; ``false``: only those '
        'no provider has.'),
    'query:limit': 'At most this many allocation requests.',
    'query:group_policy': (
        '``none`` or ``isolate``: whether numbered request groups may be '
        'satisfied by the same provider. Required when more than one '
        'numbered group is given.'),
    'query:root_required': (
        'Traits the root provider of each candidate must have (or, with '
        '``!``, lack).'),
    'query:same_subtree': (
        'A comma-separated list of request group suffixes whose providers '
        'must share one subtree. Repeatable.'),
    'query:resources': (
        'The unsuffixed request group: ``CLASS:AMOUNT,...`` that one or '
        'more providers of a tree must supply.'),
    'query:resources{suffix}': (
        'A request group: ``CLASS:AMOUNT,...`` that one provider must '
        'supply (numbered or, from 1.33, named suffix).'),
    'query:required{suffix}': (
        'Traits the providers of the group of this suffix must have or '
        'lack (``!``); ``in:A,B`` any of them.'),
    'query:member_of{suffix}': (
        'Aggregates the providers of the group of this suffix must be in.'),
    'query:in_tree{suffix}': (
        'The tree the providers of the group of this suffix must be in.'),
    'query:project_id': 'The project whose usages are counted.',
    'query:user_id': 'Only usages of consumers of this user.',
    'query:consumer_type': (
        'Only usages of consumers of this type; ``all`` or '
        '``unknown``.'),
    'query:microversion': (
        'The microversion the document describes; default: the one the '
        'request asks for.'),
    # Bodies.
    'versions': 'The versions of the API this service offers (one).',
    'id': 'The version identifier, ``v1.0``.',
    'min_version': 'The lowest microversion served.',
    'max_version': 'The highest microversion served.',
    'status': 'The state of the version, ``CURRENT``.',
    'links': 'Links to this resource and its sub-resources.',
    'href': 'The link target.',
    'rel': 'What the link leads to (``self``, ``inventories``, ...).',
    'resource_providers': 'The resource providers.',
    'uuid': 'The uuid of the resource provider.',
    'name': 'The name of the resource provider, unique in the service.',
    'generation': (
        'The generation of the resource provider, incremented by every '
        'change to it.'),
    'parent_provider_uuid': (
        'The uuid of the parent provider, or null for a root provider.'),
    'root_provider_uuid': 'The uuid of the root provider of the tree.',
    'resource_provider_generation': (
        'The generation of the resource provider: a write must send the '
        'current one (409 when it changed).'),
    'inventories': 'The inventories of the provider, by resource class.',
    'inventories.{resource_class}': 'The inventory of a resource class.',
    'resource_class': 'The resource class of the inventory.',
    'total': 'The amount of the resource the provider has.',
    'reserved': 'The amount set aside, not allocatable.',
    'min_unit': 'The smallest amount a single allocation may take.',
    'max_unit': 'The largest amount a single allocation may take.',
    'step_size': 'Allocations must be a multiple of this amount.',
    'allocation_ratio': (
        'The overcommit ratio: capacity is (total - reserved) * ratio.'),
    'aggregates': 'The uuids of the aggregates the provider is in.',
    'traits': 'Trait names.',
    'resource_classes': 'The resource classes.',
    '/resource_classes name': 'The name of the resource class.',
    '/resource_classes/{name} name': 'The name of the resource class.',
    'usages': 'Amounts allocated, by resource class.',
    'usages.{resource_class}': 'The amount allocated of the class.',
    '/usages usages': (
        'Amounts allocated to the project, by resource class; from 1.38 '
        'by consumer type first.'),
    '/usages usages.{consumer_type}': 'Usages of the consumers of a type.',
    'consumer_count': 'How many consumers these usages belong to.',
    'allocations': 'The allocations, by resource provider.',
    'allocations.{resource_provider_uuid}': (
        'What the consumer holds from one provider.'),
    'allocations.{resource_provider_uuid}.generation': (
        'The generation of the provider.'),
    'resources': 'Amounts, by resource class.',
    'resource_provider': (
        'The provider, ``{"uuid": ...}`` (allocations as a list, before '
        'the dict format of 1.12).'),
    '{consumer_type}.{resource_class}': 'The amount allocated of the class.',
    'resources.{resource_class}': 'The amount of the resource class.',
    '/resource_providers/{uuid}/allocations allocations': (
        'The allocations against the provider, by consumer.'),
    '/resource_providers/{uuid}/allocations '
    'allocations.{resource_provider_uuid}': (
        'What one consumer (by uuid) holds from this provider.'),
    'consumer_generation': (
        'The generation of the consumer: null for a new consumer, '
        'otherwise the current one (409 when it changed).'),
    'project_id': 'The project of the consumer.',
    'user_id': 'The user of the consumer.',
    'consumer_type': (
        'The type of the consumer, such as ``INSTANCE`` or '
        '``MIGRATION``.'),
    'mappings': (
        'Which resource providers satisfied each request group, by '
        'group suffix.'),
    'mappings.{request_group_suffix}': 'Provider uuids.',
    '/allocations {consumer_uuid}': 'The allocations of one consumer.',
    '/reshaper inventories': (
        'The complete new inventories, by resource provider.'),
    '/reshaper inventories.{resource_provider_uuid}': (
        'The inventories of one provider.'),
    '/reshaper inventories.{resource_provider_uuid}.inventories': (
        'The inventories, by resource class.'),
    '/reshaper allocations': (
        'The complete new allocations, by consumer (as for POST '
        '/allocations).'),
    '/reshaper allocations.{consumer_uuid}': (
        'The allocations of one consumer.'),
    'allocation_requests': (
        'The candidates: each a body for PUT /allocations/{consumer_uuid}.'),
    'provider_summaries': (
        'Every provider in the candidates, by uuid, with its capacity, '
        'usage and traits.'),
    'provider_summaries.{resource_provider_uuid}': 'One provider.',
    'provider_summaries.{resource_provider_uuid}.resources': (
        'Capacity and usage by resource class.'),
    'capacity': 'The capacity of the resource class.',
    'used': 'The amount in use.',
    '/claims consumer_uuid': 'The consumer the claim allocates for.',
    'query': (
        'The query string of GET /allocation_candidates that chooses the '
        'candidates.'),
    'strategy': 'How the one candidate is chosen among those found.',
    'candidates': 'How many candidates the query finds.',
    'candidates_at_least': (
        'True when the count stopped early and is a lower bound.'),
    'combined': 'How the groups combined narrow the candidates.',
    'count': 'How many remain after this filter.',
    'filter': 'The filter applied.',
    'subject': 'What the filter was asked for.',
    'emptied_by': (
        'The first filter that left no candidate, or null when some '
        'remain.'),
    'group': 'The request group suffix, or null for the unsuffixed one.',
    'groups': 'One funnel per request group.',
    'funnel': 'The filters of the group in order, with what each leaves.',
    'suffix': 'The request group suffix.',
    'reason': 'Why nothing was found, in words, or null.',
    'database': 'The database check.',
    'age_s': 'Seconds since the check ran.',
    'dialect': 'The database dialect.',
    'error': 'Why the database is unreachable, or null.',
    'latency_ms': 'The round-trip time of the check, or null.',
    'reachable': 'Whether the database answered.',
    '/healthcheck status': '``OK`` or ``FAILED``.',
    'openapi': 'The OpenAPI version, 3.1.0.',
    'info': 'The title and the microversion of the document.',
    'paths': 'The operations, by path.',
    'components': 'Schemas, responses and headers operations refer to.',
}

#: Bodies that are the same for every operation of a group: shown once
#: in prose rather than as a table.
ERROR_NAMES = {
    400: 'badRequest', 401: 'unauthorized', 403: 'forbidden',
    404: 'itemNotFound', 405: 'badMethod', 406: 'notAcceptable',
    409: 'conflict', 413: 'requestEntityTooLarge',
    414: 'requestUriTooLong', 415: 'unsupportedMediaType',
    503: 'serviceUnavailable'}


def _type(schema):
    """The os-api-ref type name of a JSON schema."""
    if 'anyOf' in schema or 'oneOf' in schema:
        types = [_type(s) for s in schema.get('anyOf', schema.get('oneOf'))]
        types = [t for t in types if t != 'null']
        return types[0] if len(set(types)) == 1 else 'string'
    kind = schema.get('type', 'object' if 'properties' in schema else
                      'string')
    if isinstance(kind, list):
        kind = [k for k in kind if k != 'null'][0]
    return {'number': 'float'}.get(kind, kind)


def _key_name(pattern, holder, depth):
    if pattern == UUID_PATTERN:
        return ('{consumer_uuid}' if depth == 0
                else '{resource_provider_uuid}')
    return PATTERN_NAMES.get(pattern) or HOLDER_NAMES.get(
        holder, '{key}')


def _body_fields(schema, prefix=(), out=None):
    """(dotted location, schema, required) of every field of a body."""
    out = [] if out is None else out
    if not isinstance(schema, dict):
        return out
    for choice in list(schema.get('anyOf', ())) + list(
            schema.get('oneOf', ())):
        _body_fields(choice, prefix, out)
    holder = prefix[-1] if prefix else ''
    required = set(schema.get('required', ()))
    children = [(name, sub, name in required)
                for name, sub in schema.get('properties', {}).items()]
    children += [(_key_name(pattern, holder, len(prefix)), sub, False)
                 for pattern, sub in schema.get(
                     'patternProperties', {}).items()]
    extra = schema.get('additionalProperties')
    if isinstance(extra, dict):
        children.append((_key_name(None, holder, len(prefix)), extra, False))
    for name, sub, is_required in children:
        location = prefix + (name,)
        out.append(('.'.join(location), sub, is_required))
        while sub.get('type') == 'array' and isinstance(
                sub.get('items'), dict):
            sub = sub['items']
        _body_fields(sub, location, out)
    return out


def _query_fields(parameter):
    if parameter['name'] != 'groups':
        return [(parameter['name'], parameter['schema'],
                 parameter.get('required', False))]
    return [(GROUP_KEY.match(pattern).group(1) + '{suffix}', sub, False)
            for pattern, sub in parameter['schema'][
                'patternProperties'].items()]


def fields(operation):
    """{(in, location): (schema, required)} of one operation at one
    version: request header, path, query and body, and response body."""
    found = {}
    for parameter in operation['parameters']:
        for name, schema, required in _query_fields(parameter):
            found[(parameter['in'], name)] = (schema, required)
    body = operation.get('requestBody')
    if body:
        schema = body['content'].get(contract.JSON, {}).get('schema')
        for location, sub, required in _body_fields(schema):
            found[('body', location)] = (sub, required)
    for location, sub, required in _body_fields(_success_schema(operation)):
        found[('response', location)] = (sub, required)
    return found


def _success_schema(operation):
    for status, response in sorted(operation['responses'].items()):
        if status < '300':
            content = response.get('content', {})
            if contract.JSON in content:
                return content[contract.JSON]['schema']
    return None


def collect():
    """{(method, path): {'versions': [...], 'operation': latest,
    'fields': {(in, location, type): [versions]}, ...}} over every
    microversion."""
    found = {}
    for version in VERSIONS:
        paths = document.build(version, route_table.ROUTES)['paths']
        for path, methods in paths.items():
            for method, operation in methods.items():
                entry = found.setdefault((method.upper(), path), {
                    'versions': [], 'fields': {}, 'schemas': {},
                    'statuses': set()})
                entry['versions'].append(version)
                entry['statuses'].update(
                    int(s) for s in operation['responses'])
                entry['operation'] = operation
                for (where, location), (schema, required) in fields(
                        operation).items():
                    # A field whose type changed (allocations: a list
                    # before 1.12, a dict after) is two parameters.
                    key = (where, location, _type(schema))
                    entry['fields'].setdefault(key, []).append(version)
                    entry['schemas'][key] = (schema, required)
    return found


MISSING = []


def describe(path, where, location):
    parts = location.split('.')
    for start in range(len(parts)):
        suffix = '.'.join(parts[start:])
        for key in ('%s %s:%s' % (path, where, suffix),
                    '%s:%s' % (where, suffix),
                    '%s %s' % (path, suffix), suffix):
            if key in DESCRIPTIONS:
                return DESCRIPTIONS[key]
    MISSING.append('%s %s:%s' % (path, where, location))
    return ''


def parameter(path, where, location, schema, required, present, versions):
    """One parameters.yaml entry; min_version/max_version where the
    field came or went within the operation's own versions."""
    entry = {
        'description': describe(path, 'body' if where == 'response'
                                else where, location),
        'in': 'body' if where == 'response' else where,
        'required': bool(required) or where == 'path',
        'type': _type(schema),
    }
    if present[0] > versions[0]:
        entry['min_version'] = str(present[0])
    if present[-1] < versions[-1]:
        entry['max_version'] = str(present[-1])
    return entry


def _base_key(where, location):
    name = re.sub(r'[^A-Za-z0-9]+', '_', location).strip('_').lower()
    return '%s_%s' % (name, 'body' if where == 'response' else where)


def tables(operations):
    """parameters.yaml as {key: entry}, and for every operation the
    (shown name, key) rows of its request and response tables."""
    keys = {}
    rows = {}
    for (method, path), entry in sorted(operations.items()):
        request, response = [], []
        ordered = sorted(entry['fields'].items(), key=lambda item: (
            SECTION_ORDER.get(item[0][0], 3), item[0][0] == 'response'))
        for (where, location, kind), present in ordered:
            schema, required = entry['schemas'][(where, location, kind)]
            value = parameter(path, where, location, schema, required,
                              present, entry['versions'])
            base = _base_key(where, location)
            key, number = base, 1
            while key in keys and keys[key] != value:
                number += 1
                key = '%s_%d' % (base, number)
            keys[key] = value
            shown = location.rsplit('.', 1)[-1]
            (response if where == 'response' else request).append(
                (shown, key))
        rows[(method, path)] = (request, response)
    ordered = dict(sorted(keys.items(), key=lambda item: (
        SECTION_ORDER[item[1]['in']], item[0].lower())))
    return ordered, rows


def page_of(path):
    best = max((prefix for prefix in PAGES
                if path == prefix or path.startswith(prefix.rstrip('/')
                                                     + '/')),
               key=len)
    return PAGES[best]


def _title(operation, method, path):
    if operation.get('summary'):
        return operation['summary']
    return operation['operationId'].replace('_', ' ').capitalize()


def _heading(text, char):
    return '%s\n%s\n' % (text, char * len(text))


def _statuses(codes):
    codes = sorted(codes)
    good = [str(c) for c in codes if c < 400]
    bad = ['%s(%d)' % (ERROR_NAMES.get(c, 'error'), c)
           for c in codes if c >= 400]
    return good, bad


def _rest_parameters(rows):
    lines = ['.. rest_parameters:: parameters.yaml', '']
    lines += ['   - %s: %s' % (json.dumps(shown) if '{' in shown else shown,
                               key) for shown, key in rows]
    return '\n'.join(lines) + '\n'


def render_inc(page, operations, rows, samples):
    """The .inc of one page: an os-api-ref section per operation."""
    out = [
        '.. Generated by tools/gen-api-ref.py from the OpenAPI documents '
        'of every\n   microversion; edit the tool, not this file.\n',
        _heading('Parameters and samples', '='),
        '.. rest_expand_all::\n',
    ]
    for (method, path), entry in operations:
        operation = entry['operation']
        request, response = rows[(method, path)]
        out.append(_heading(_title(operation, method, path), '-'))
        out.append('.. rest_method:: %s %s\n' % (method, path))
        first = entry['versions'][0]
        if first > VERSIONS[0]:
            out.append('New in version %s.\n' % (first,))
        if operation.get(document.EXTENSION):
            out.append('An extension of this implementation, beside the '
                       'microversioned API.\n')
        good, bad = _statuses(entry['statuses'])
        out.append('Normal response codes: %s\n' % ', '.join(good))
        out.append('Error response codes: %s\n' % ', '.join(bad))
        out.append('.. rubric:: Request\n')
        out.append(_rest_parameters(request))
        name = operation['operationId']
        if name + '-request.json' in samples:
            out.append('.. rubric:: Request example\n')
            out.append('.. literalinclude:: samples/%s-request.json\n'
                       '   :language: javascript\n' % name)
        if response:
            out.append('.. rubric:: Response\n')
            out.append(_rest_parameters(response))
        if name + '-response.json' in samples:
            out.append('.. rubric:: Response example\n')
            out.append('.. literalinclude:: samples/%s-response.json\n'
                       '   :language: javascript\n' % name)
    return '\n'.join(out)


def render(operations, samples):
    """{relative path: text} of every generated file."""
    parameters, rows = tables(operations)
    files = {'parameters.yaml': (
        '# Generated by tools/gen-api-ref.py; edit the tool, not this '
        'file.\n' + yaml.safe_dump(parameters, sort_keys=False,
                                   default_flow_style=False, width=70))}
    pages = {}
    for key in sorted(operations, key=lambda k: (k[1], k[0])):
        pages.setdefault(page_of(key[1]), []).append(
            (key, operations[key]))
    for page, entries in pages.items():
        files[page + '.inc'] = render_inc(page, entries, rows, samples)
    for name, body in samples.items():
        files['samples/' + name] = json.dumps(
            body, indent=4, sort_keys=True) + '\n'
    return files


RP = '4e8e5957-649f-477b-9e5b-f1f75b21c03c'
CHILD = '5a7c1e0b-3b2f-4a8e-9d61-0c2f3e4b5d6a'
SHARING = 'b9a9f6d2-0a5e-4c1b-8d3f-7e6a5c4b3a21'
CONSUMER = '6c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f'
SECOND = '7d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a'
CLAIMED = '8e0f1a2b-3c4d-4e5f-a06b-7c8d9e0f1a2b'
AGGREGATE = '42896e0d-205d-4fe3-bd1e-100924931787'
PROJECT = '7e67cbf7-7c38-4a32-b85b-0739c690991a'
USER = '067f691e-725a-451a-83e2-5c3d13e1dffc'
INVENTORY = {'total': 64, 'reserved': 0, 'min_unit': 1, 'max_unit': 16,
             'step_size': 1, 'allocation_ratio': 4.0}


def _scenario():
    """(sample name, method, path, body) of the requests whose bodies
    become samples, in an order that builds what the next ones need.
    A name of None runs a request without keeping it. A body may be a
    function of ``gen``, which gives a provider's current generation."""
    rp = '/resource_providers/' + RP
    return [
        ('create_resource_provider', 'POST', '/resource_providers',
         {'name': 'compute-1', 'uuid': RP}),
        (None, 'POST', '/resource_providers',
         {'name': 'compute-1_numa0', 'uuid': CHILD,
          'parent_provider_uuid': RP}),
        (None, 'POST', '/resource_providers',
         {'name': 'shared-storage', 'uuid': SHARING}),
        ('update_resource_provider', 'PUT', rp,
         {'name': 'compute-1', 'parent_provider_uuid': None}),
        ('get_resource_provider', 'GET', rp, None),
        ('create_resource_class', 'POST', '/resource_classes',
         {'name': 'CUSTOM_FPGA'}),
        ('get_resource_class', 'GET', '/resource_classes/CUSTOM_FPGA',
         None),
        (None, 'PUT', '/traits/CUSTOM_GOLD', None),
        ('set_inventories', 'PUT', rp + '/inventories', lambda gen: {
            'resource_provider_generation': gen(RP),
            'inventories': {'VCPU': INVENTORY, 'MEMORY_MB': dict(
                INVENTORY, total=131072, max_unit=131072,
                allocation_ratio=1.0)}}),
        ('create_inventory', 'POST', rp + '/inventories', lambda gen:
         dict(INVENTORY, resource_class='CUSTOM_FPGA', total=2,
              max_unit=1, allocation_ratio=1.0,
              resource_provider_generation=gen(RP))),
        ('update_inventory', 'PUT', rp + '/inventories/CUSTOM_FPGA',
         lambda gen: dict(INVENTORY, total=4, max_unit=1, allocation_ratio=1.0,
              resource_provider_generation=gen(RP))),
        ('get_inventory', 'GET', rp + '/inventories/VCPU', None),
        ('get_inventories', 'GET', rp + '/inventories', None),
        ('set_aggregates', 'PUT', rp + '/aggregates', lambda gen: {
            'aggregates': [AGGREGATE],
            'resource_provider_generation': gen(RP)}),
        ('get_aggregates', 'GET', rp + '/aggregates', None),
        ('update_provider_traits', 'PUT', rp + '/traits', lambda gen: {
            'traits': ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'],
            'resource_provider_generation': gen(RP)}),
        ('list_provider_traits', 'GET', rp + '/traits', None),
        ('list_resource_providers', 'GET',
         '/resource_providers?in_tree=' + RP, None),
        ('list_allocation_candidates', 'GET',
         '/allocation_candidates?resources=VCPU:2,MEMORY_MB:4096'
         '&required=CUSTOM_GOLD&limit=1', None),
        ('explain_allocation_candidates', 'GET',
         '/allocation_candidates/explain?resources=VCPU:2,'
         'MEMORY_MB:4096&required=HW_CPU_X86_AVX512F', None),
        ('set_allocations', 'PUT', '/allocations/' + CONSUMER, {
            'allocations': {RP: {'resources': {
                'VCPU': 2, 'MEMORY_MB': 4096}}},
            'consumer_generation': None, 'consumer_type': 'INSTANCE',
            'project_id': PROJECT, 'user_id': USER}),
        ('get_allocations', 'GET', '/allocations/' + CONSUMER, None),
        ('reshape', 'POST', '/reshaper', lambda gen: {
            'inventories': {
                CHILD: {'resource_provider_generation': gen(CHILD),
                        'inventories': {'VCPU': INVENTORY}},
                RP: {'resource_provider_generation': gen(RP),
                     'inventories': {
                         'MEMORY_MB': dict(
                             INVENTORY, total=131072, max_unit=131072,
                             allocation_ratio=1.0),
                         'CUSTOM_FPGA': dict(
                             INVENTORY, total=4, max_unit=1,
                             allocation_ratio=1.0)}}},
            'allocations': {CONSUMER: {
                'allocations': {
                    CHILD: {'resources': {'VCPU': 2}},
                    RP: {'resources': {'MEMORY_MB': 4096}}},
                'consumer_generation': 1, 'consumer_type': 'INSTANCE',
                'project_id': PROJECT, 'user_id': USER}}}),
        ('set_many_allocations', 'POST', '/allocations', {
            SECOND: {
                'allocations': {RP: {'resources': {'CUSTOM_FPGA': 1}}},
                'consumer_generation': None,
                'consumer_type': 'INSTANCE',
                'project_id': PROJECT, 'user_id': USER}}),
        ('create_claim', 'POST', '/claims', {
            'query': 'resources=VCPU:1,MEMORY_MB:1024',
            'consumer_uuid': CLAIMED, 'consumer_generation': None,
            'consumer_type': 'INSTANCE',
            'project_id': PROJECT, 'user_id': USER}),
        ('get_provider_allocations', 'GET', rp + '/allocations', None),
        ('list_usages', 'GET', rp + '/usages', None),
        ('project_usages_by_type', 'GET',
         '/usages?project_id=' + PROJECT, None),
        ('list_traits', 'GET', '/traits?name=startswith:CUSTOM_', None),
        ('list_resource_classes', 'GET', '/resource_classes', None),
        ('home', 'GET', '/', None),
    ]


def capture():
    """{file name: JSON} of the scenario's requests and responses, at
    the latest microversion, on an in-memory database."""
    from placement import conf as placement_conf
    from placement import direct
    conf = placement_conf.build([], config_files=[])
    conf.set_override('auth_strategy', 'noauth2', group='api')
    conf.set_override('connection', 'sqlite://', group='placement_database')
    conf.set_override('sync_on_startup', True, group='placement_database')
    # The service role: POST /reshaper is for services only.
    headers = {'x-auth-token': 'admin', 'x-roles': 'admin,service'}
    samples = {}
    with direct.PlacementDirect(conf, latest_microversion=True) as client:
        def gen(uuid):
            return client.get('/resource_providers/' + uuid,
                              headers=headers).json()['generation']

        for name, method, path, body in _scenario():
            if callable(body):
                body = body(gen)
            resp = client.request(path, method, json=body, headers=headers)
            if resp.status_code >= 400:
                raise RuntimeError('%s %s: %s %s' % (
                    method, path, resp.status_code, resp.text))
            if name is None:
                continue
            if body is not None:
                samples[name + '-request.json'] = body
            if resp.content:
                samples[name + '-response.json'] = resp.json()
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='report files that differ, write nothing')
    args = parser.parse_args()
    files = render(collect(), capture())
    if MISSING:
        sys.exit('no description (add one to DESCRIPTIONS) for:\n  '
                 + '\n  '.join(sorted(set(MISSING))))
    stale = []
    for name, text in sorted(files.items()):
        target = os.path.join(API_REF, name)
        current = None
        if os.path.exists(target):
            with open(target, encoding='utf-8') as f:
                current = f.read()
        if current == text:
            continue
        stale.append(name)
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                (current or '').splitlines(True), text.splitlines(True),
                'api-ref/' + name, 'generated'))
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, 'w', encoding='utf-8') as f:
                f.write(text)
    known = set(files)
    orphans = [os.path.join('samples', n) for n in os.listdir(
        os.path.join(API_REF, 'samples')) if 'samples/' + n not in known] \
        if os.path.isdir(os.path.join(API_REF, 'samples')) else []
    for name in orphans:
        stale.append(name)
        if not args.check:
            os.remove(os.path.join(API_REF, name))
    if stale:
        print('%s: %s' % ('out of date' if args.check else 'wrote',
                          ', '.join(stale)))
    return 1 if stale and args.check else 0


if __name__ == '__main__':
    sys.exit(main())
