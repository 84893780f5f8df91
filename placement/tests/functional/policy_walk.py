"""The policy walk: every operation, every kind of caller, both defaults.

``SAMPLES`` holds one request per API operation (including routes other
branches add); the rule guarding it comes from
``placement.policies.api_rules``. ``render`` turns them into the gabbi
files ``gabbits/policy-<defaults>.yaml``, keeping only operations whose
route exists in ``placement.web.route_table.ROUTES``. Regenerate after adding
routes with::

    make policy-gabbits

Who may do what is written down here from the documented defaults
(doc/source/admin/index.rst, 'Authentication and policy'), independently of
the policy code, so the walk checks the policy defaults rather than
repeating them. Samples deliberately name missing objects or carry
invalid bodies: policy runs before validation and lookups, so a denied
caller must get 403 anyway, and an allowed one gets the handler's own
answer (the ``allowed`` status).
"""

import collections

import yaml

from placement.middleware import auth
from placement.policies import api_rules
from placement.web import route_table

#: Latest microversion, so that every operation is routed.
VERSION = 'placement latest'

Sample = collections.namedtuple('Sample', 'query body allowed anonymous')
Sample.__new__.__defaults__ = (None, None, None, 401)

_PROVIDER = "/resource_providers/$ENVIRON['MISSING_UUID']"
_INVENTORY = {'resource_provider_generation': 0,
              'inventories': {'VCPU': {'total': 8}}}
# No consumer_generation: the schema rejects the body before a consumer
# record is made. A valid body naming a missing provider would leave an
# orphan consumer behind (api-ref/behaviour-choices.rst, 'Orphan
# consumers'), failing the next caller's 400.
_CONSUMER = {'allocations': {"$ENVIRON['MISSING_UUID']":
                             {'resources': {'VCPU': 1}}},
             'project_id': "$ENVIRON['PROJECT_ID']",
             'user_id': "$ENVIRON['USER_ID']",
             'consumer_type': 'INSTANCE'}

#: (method, path template) -> the request and an allowed caller's status.
SAMPLES = {
    ('GET', '/resource_providers'): Sample(allowed=200),
    ('POST', '/resource_providers'): Sample(body={}, allowed=400),
    ('GET', '/resource_providers/{uuid}'): Sample(allowed=404),
    ('PUT', '/resource_providers/{uuid}'): Sample(
        body={'name': 'walker'}, allowed=404),
    ('DELETE', '/resource_providers/{uuid}'): Sample(allowed=404),
    ('GET', '/resource_providers/{uuid}/inventories'): Sample(allowed=404),
    ('POST', '/resource_providers/{uuid}/inventories'): Sample(
        body={'resource_class': 'VCPU', 'total': 8}, allowed=404),
    ('PUT', '/resource_providers/{uuid}/inventories'): Sample(
        body=_INVENTORY, allowed=404),
    ('DELETE', '/resource_providers/{uuid}/inventories'): Sample(
        allowed=404),
    ('GET', '/resource_providers/{uuid}/inventories/{resource_class}'):
        Sample(allowed=404),
    ('PUT', '/resource_providers/{uuid}/inventories/{resource_class}'):
        Sample(body={'resource_provider_generation': 0, 'total': 8},
               allowed=404),
    ('DELETE', '/resource_providers/{uuid}/inventories/{resource_class}'):
        Sample(allowed=404),
    ('GET', '/resource_providers/{uuid}/usages'): Sample(allowed=404),
    ('GET', '/resource_providers/{uuid}/aggregates'): Sample(allowed=404),
    ('PUT', '/resource_providers/{uuid}/aggregates'): Sample(
        body={'aggregates': [], 'resource_provider_generation': 0},
        allowed=404),
    ('GET', '/resource_providers/{uuid}/traits'): Sample(allowed=404),
    ('PUT', '/resource_providers/{uuid}/traits'): Sample(
        body={'traits': [], 'resource_provider_generation': 0},
        allowed=404),
    ('DELETE', '/resource_providers/{uuid}/traits'): Sample(allowed=404),
    ('GET', '/resource_providers/{uuid}/allocations'): Sample(allowed=404),
    ('GET', '/resource_classes'): Sample(allowed=200),
    ('POST', '/resource_classes'): Sample(body={}, allowed=400),
    ('GET', '/resource_classes/{name}'): Sample(allowed=404),
    # Standard names cannot be created or deleted.
    ('PUT', '/resource_classes/{name}'): Sample(allowed=400),
    ('DELETE', '/resource_classes/{name}'): Sample(allowed=404),
    ('GET', '/traits'): Sample(allowed=200),
    ('GET', '/traits/{name}'): Sample(allowed=404),
    ('PUT', '/traits/{name}'): Sample(allowed=400),
    ('DELETE', '/traits/{name}'): Sample(allowed=404),
    ('GET', '/usages'): Sample(query='project_id=p1', allowed=200),
    ('POST', '/allocations'): Sample(body={}, allowed=400),
    ('GET', '/allocations/{consumer_uuid}'): Sample(allowed=200),
    ('PUT', '/allocations/{consumer_uuid}'): Sample(
        body=_CONSUMER, allowed=400),
    ('DELETE', '/allocations/{consumer_uuid}'): Sample(allowed=404),
    ('GET', '/allocation_candidates'): Sample(
        query='resources=VCPU:1', allowed=200),
    ('GET', '/allocation_candidates/explain'): Sample(
        query='resources=VCPU:1', allowed=200),
    # A query naming an unknown class: 400 before any consumer is made.
    ('POST', '/claims'): Sample(
        body={'consumer_uuid': "$ENVIRON['MISSING_UUID']",
              'project_id': "$ENVIRON['PROJECT_ID']",
              'user_id': "$ENVIRON['USER_ID']",
              'consumer_type': 'INSTANCE', 'consumer_generation': None,
              'query': 'resources=CUSTOM_WALKER:1'},
        allowed=400),
    ('POST', '/reshaper'): Sample(
        body={'inventories': {"$ENVIRON['MISSING_UUID']": _INVENTORY},
              'allocations': {}},
        allowed=400),
    # Token-less reads from [metrics] trusted_networks (loopback by
    # default, where the in-process client calls from) need no policy.
    ('GET', '/metrics'): Sample(allowed=200, anonymous=200),
    ('GET', '/capacity'): Sample(allowed=200, anonymous=200),
    ('GET', '/capacity/fit'): Sample(
        query='resources=VCPU:1', allowed=200, anonymous=200),
}

#: Values for path parameters: missing objects, or standard names.
PATH_VALUES = {
    '/resource_providers/{uuid}': _PROVIDER,
    '{resource_class}': 'CUSTOM_MISSING',
    '/resource_classes/{name}': '/resource_classes/VCPU',
    '/traits/{name}': '/traits/HW_CPU_X86_AVX',
    '{consumer_uuid}': "$ENVIRON['CONSUMER_UUID']",
}

#: Overrides of PATH_VALUES for single operations.
PATH_OVERRIDES = {
    ('GET', '/resource_classes/{name}'): '/resource_classes/CUSTOM_MISSING',
    ('DELETE', '/resource_classes/{name}'):
        '/resource_classes/CUSTOM_MISSING',
    ('GET', '/traits/{name}'): '/traits/CUSTOM_MISSING',
    ('DELETE', '/traits/{name}'): '/traits/CUSTOM_MISSING',
}

#: The detail of every policy 403 around its message.
DENIAL_DETAIL = 'Access was denied to this resource.\n\n %s  '

Persona = collections.namedtuple('Persona', 'name headers denial')

#: Kinds of caller (noauth2 headers) and how a denial reads:
#: 'check' = the check string failed, 'scope' = wrong token scope.
PERSONAS = [
    Persona('admin', {'x-auth-token': 'admin'}, 'check'),
    Persona('service', {'x-auth-token': 'nova:services',
                        'x-roles': 'service'}, 'check'),
    Persona('project reader', {'x-auth-token': 'alice:p1',
                               'x-roles': 'reader'}, 'check'),
    Persona('other project reader', {'x-auth-token': 'bob:p2',
                                     'x-roles': 'reader'}, 'check'),
    Persona('project member', {'x-auth-token': 'alice:p1',
                               'x-roles': 'member'}, 'check'),
    Persona('system admin', {'x-auth-token': 'admin',
                             'openstack-system-scope': 'all'}, 'scope'),
    Persona('domain admin', {'x-auth-token': 'admin',
                             'x-domain-id': 'd1'}, 'scope'),
    Persona('anonymous', {}, None),
]

#: Which personas each default check string lets in, per
#: defaults mode. The reader's sample asks for its own project (p1).
ALLOWED = {
    'rule:admin_or_service_api': {
        'new': {'admin', 'service'}, 'legacy': {'admin', 'service'}},
    'rule:service_api': {
        'new': {'service'}, 'legacy': {'admin', 'service'}},
    'rule:admin_or_project_reader_or_service_api': {
        'new': {'admin', 'service', 'project reader'},
        'legacy': {'admin', 'service', 'project reader'}},
}

#: Defaults mode -> gabbi fixture that configures it.
MODES = {
    'new': 'APIFixture',
    'legacy': 'LegacyPolicyFixture',
}


def rules_by_operation():
    """(method, path template) -> (rule name, check string)."""
    return {(op['method'], op['path']): (rule.name, rule.check_str)
            for rule in api_rules.RULES for op in rule.operations}


def routed_operations():
    """(method, path template) of every policed route in ROUTES (all but
    the version document and the public documents)."""
    return {(method, path) for path, methods in route_table.ROUTES.items()
            if path != '/' and path not in auth.PUBLIC for method in methods}


def sample_url(method, path, sample):
    """The URL of ``sample`` (gabbi $ENVIRON placeholders left in)."""
    url = PATH_OVERRIDES.get((method, path), path)
    for template, value in PATH_VALUES.items():
        url = url.replace(template, value)
    if sample.query:
        url += '?' + sample.query
    return url


def _expectation(persona, rule, check_str, mode, sample):
    if not persona.headers:
        return {'status': sample.anonymous}
    if persona.name in ALLOWED[check_str][mode]:
        return {'status': sample.allowed}
    if persona.denial == 'scope':
        message = rule
    else:
        message = 'Policy does not allow %s to be performed.' % rule
    return {'status': 403,
            'response_json_paths': {
                '$.errors[0].title': 'Forbidden',
                '$.errors[0].detail': DENIAL_DETAIL % message}}


def _tests(mode):
    rules = rules_by_operation()
    routed = routed_operations()
    tests = []
    for (method, path), sample in SAMPLES.items():
        if (method, path) not in routed:
            continue
        rule, check_str = rules[(method, path)]
        for persona in PERSONAS:
            test = {'name': '%s %s as %s' % (method, path, persona.name),
                    method: sample_url(method, path, sample)}
            headers = dict(persona.headers)
            if sample.body is not None:
                headers['content-type'] = 'application/json'
            if headers:
                test['request_headers'] = headers
            if sample.body is not None:
                test['data'] = sample.body
            test.update(_expectation(persona, rule, check_str, mode, sample))
            tests.append(test)
    return tests


HEADER = """\
# GENERATED by tools/gen-policy-gabbits.py from
# placement/tests/functional/policy_walk.py -- do not edit; run
# "make policy-gabbits" after adding routes or changing the samples.
#
# Every routed operation as every kind of caller under the %s policy
# defaults.
"""


def render(mode):
    """The YAML text of the walk under ``mode`` ('new' or 'legacy')."""
    document = {
        'fixtures': [MODES[mode]],
        'defaults': {'request_headers': {
            'accept': 'application/json',
            'openstack-api-version': VERSION}},
        'tests': _tests(mode),
    }
    return HEADER % mode + yaml.safe_dump(
        document, default_flow_style=False, sort_keys=False, width=79,
        allow_unicode=True)


def file_name(mode):
    return 'policy-%s-defaults.yaml' % mode
