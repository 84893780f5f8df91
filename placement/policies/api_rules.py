"""One rule per API operation."""

from oslo_policy import policy

ADMIN_OR_SERVICE = 'rule:admin_or_service_api'

# (rule name, check string, [(method, path), ...]); the description of
# each rule is in DESCRIPTIONS.
_TABLE = [
    ('placement:resource_providers:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers')]),
    ('placement:resource_providers:create', ADMIN_OR_SERVICE,
     [('POST', '/resource_providers')]),
    ('placement:resource_providers:show', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}')]),
    ('placement:resource_providers:update', ADMIN_OR_SERVICE,
     [('PUT', '/resource_providers/{uuid}')]),
    ('placement:resource_providers:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/resource_providers/{uuid}')]),
    ('placement:resource_classes:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_classes')]),
    ('placement:resource_classes:create', ADMIN_OR_SERVICE,
     [('POST', '/resource_classes')]),
    ('placement:resource_classes:show', ADMIN_OR_SERVICE,
     [('GET', '/resource_classes/{name}')]),
    ('placement:resource_classes:update', ADMIN_OR_SERVICE,
     [('PUT', '/resource_classes/{name}')]),
    ('placement:resource_classes:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/resource_classes/{name}')]),
    ('placement:resource_providers:inventories:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/inventories')]),
    ('placement:resource_providers:inventories:create', ADMIN_OR_SERVICE,
     [('POST', '/resource_providers/{uuid}/inventories')]),
    ('placement:resource_providers:inventories:show', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/inventories/{resource_class}')]),
    ('placement:resource_providers:inventories:update', ADMIN_OR_SERVICE,
     [('PUT', '/resource_providers/{uuid}/inventories'),
      ('PUT', '/resource_providers/{uuid}/inventories/{resource_class}')]),
    ('placement:resource_providers:inventories:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/resource_providers/{uuid}/inventories'),
      ('DELETE',
       '/resource_providers/{uuid}/inventories/{resource_class}')]),
    ('placement:resource_providers:aggregates:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/aggregates')]),
    ('placement:resource_providers:aggregates:update', ADMIN_OR_SERVICE,
     [('PUT', '/resource_providers/{uuid}/aggregates')]),
    ('placement:resource_providers:usages', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/usages')]),
    ('placement:usages', 'rule:admin_or_project_reader_or_service_api',
     [('GET', '/usages')]),
    ('placement:traits:list', ADMIN_OR_SERVICE, [('GET', '/traits')]),
    ('placement:traits:show', ADMIN_OR_SERVICE,
     [('GET', '/traits/{name}')]),
    ('placement:traits:update', ADMIN_OR_SERVICE,
     [('PUT', '/traits/{name}')]),
    ('placement:traits:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/traits/{name}')]),
    ('placement:resource_providers:traits:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/traits')]),
    ('placement:resource_providers:traits:update', ADMIN_OR_SERVICE,
     [('PUT', '/resource_providers/{uuid}/traits')]),
    ('placement:resource_providers:traits:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/resource_providers/{uuid}/traits')]),
    ('placement:allocations:manage', ADMIN_OR_SERVICE,
     [('POST', '/allocations')]),
    ('placement:allocations:list', ADMIN_OR_SERVICE,
     [('GET', '/allocations/{consumer_uuid}')]),
    ('placement:allocations:update', ADMIN_OR_SERVICE,
     [('PUT', '/allocations/{consumer_uuid}')]),
    ('placement:allocations:delete', ADMIN_OR_SERVICE,
     [('DELETE', '/allocations/{consumer_uuid}')]),
    ('placement:resource_providers:allocations:list', ADMIN_OR_SERVICE,
     [('GET', '/resource_providers/{uuid}/allocations')]),
    ('placement:allocation_candidates:list', ADMIN_OR_SERVICE,
     [('GET', '/allocation_candidates')]),
    ('placement:allocation_candidates:explain', ADMIN_OR_SERVICE,
     [('GET', '/allocation_candidates/explain')]),
    ('placement:claims:create', ADMIN_OR_SERVICE, [('POST', '/claims')]),
    ('placement:reshaper:reshape', 'rule:service_api',
     [('POST', '/reshaper')]),
    ('placement:metrics:read', ADMIN_OR_SERVICE, [('GET', '/metrics')]),
    ('placement:capacity:read', ADMIN_OR_SERVICE,
     [('GET', '/capacity'), ('GET', '/capacity/fit')]),
]

#: What each rule allows, for the generated policy reference and the
#: sample policy file (oslo.policy shows it above the rule).
DESCRIPTIONS = {
    'placement:resource_providers:list':
        'List resource providers, filtered by name, uuid, tree, aggregate, '
        'traits or capacity.',
    'placement:resource_providers:create':
        'Create a resource provider.',
    'placement:resource_providers:show':
        'Show one resource provider.',
    'placement:resource_providers:update':
        'Rename a resource provider or change its parent.',
    'placement:resource_providers:delete':
        'Delete a resource provider without allocations or children.',
    'placement:resource_classes:list':
        'List the standard and custom resource classes.',
    'placement:resource_classes:create':
        'Create a custom resource class.',
    'placement:resource_classes:show':
        'Show one resource class.',
    'placement:resource_classes:update':
        'Create (from 1.7) or rename (before 1.7) a custom resource class.',
    'placement:resource_classes:delete':
        'Delete a custom resource class no inventory uses.',
    'placement:resource_providers:inventories:list':
        'List the inventories of a resource provider.',
    'placement:resource_providers:inventories:create':
        'Create one inventory of a resource provider.',
    'placement:resource_providers:inventories:show':
        'Show one inventory of a resource provider.',
    'placement:resource_providers:inventories:update':
        'Replace all inventories of a resource provider, or update one.',
    'placement:resource_providers:inventories:delete':
        'Delete all inventories of a resource provider, or one.',
    'placement:resource_providers:aggregates:list':
        'List the aggregates a resource provider belongs to.',
    'placement:resource_providers:aggregates:update':
        'Replace the aggregates of a resource provider.',
    'placement:resource_providers:usages':
        'Show the usage of each resource class of one resource provider.',
    'placement:usages':
        'Show the total usage of a project (and user), by resource class '
        'or consumer type. The default lets project readers see their own '
        "project's.",
    'placement:traits:list':
        'List traits.',
    'placement:traits:show':
        'Check that a trait exists.',
    'placement:traits:update':
        'Create a custom trait.',
    'placement:traits:delete':
        'Delete a custom trait no resource provider has.',
    'placement:resource_providers:traits:list':
        'List the traits of a resource provider.',
    'placement:resource_providers:traits:update':
        'Replace the traits of a resource provider.',
    'placement:resource_providers:traits:delete':
        'Remove every trait of a resource provider.',
    'placement:allocations:manage':
        'Write the allocations of many consumers in one transaction '
        '(moves, migrations).',
    'placement:allocations:list':
        'List the allocations of a consumer.',
    'placement:allocations:update':
        'Replace the allocations of a consumer.',
    'placement:allocations:delete':
        'Delete the allocations of a consumer.',
    'placement:resource_providers:allocations:list':
        'List the allocations against a resource provider.',
    'placement:allocation_candidates:list':
        'List allocation candidates: the ways a request for resources can '
        'be met (the scheduler query).',
    'placement:allocation_candidates:explain':
        'Explain, filter by filter, why an allocation candidates query '
        'finds what it finds (an extension).',
    'placement:claims:create':
        'Search allocation candidates and write the allocations of one of '
        'them atomically (an extension).',
    'placement:reshaper:reshape':
        'Move inventories and allocations between resource providers in '
        'one transaction (nova-compute, on upgrade).',
    'placement:metrics:read':
        'Read the Prometheus metrics (GET /metrics) with a token; '
        'token-less requests from [metrics] trusted_networks need no '
        'rule.',
    'placement:capacity:read':
        'Read the fleet capacity page (GET /capacity) and how many more '
        'instances of a request fit (GET /capacity/fit) with a token; '
        'token-less requests from [metrics] trusted_networks need no '
        'rule.',
}

RULES = [
    policy.DocumentedRuleDefault(
        name=name, check_str=check_str,
        description=DESCRIPTIONS[name],
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=['project'])
    for name, check_str, operations in _TABLE
]

NAMES = frozenset(name for name, _, _ in _TABLE)
