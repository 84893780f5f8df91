"""One rule per API operation."""

from oslo_policy import policy

ADMIN_OR_SERVICE = 'rule:admin_or_service_api'

# (rule name, check string, [(method, path), ...])
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
    ('placement:reshaper:reshape', 'rule:service_api',
     [('POST', '/reshaper')]),
]

RULES = [
    policy.DocumentedRuleDefault(
        name=name, check_str=check_str,
        description='%s %s' % operations[0],
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=['project'])
    for name, check_str, operations in _TABLE
]

NAMES = frozenset(name for name, _, _ in _TABLE)
