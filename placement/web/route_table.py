"""The route table: every path a client can call, with its methods.

Methods are listed in the order the ``Allow`` header of a 405 lists
them. A method maps to one handler or to a tuple of handlers covering
different microversion ranges (declared with ``microversion.serves``).
``dispatch.Dispatcher`` serves the table; the OpenAPI document is built
from it (``placement/openapi/document.py``).
"""

from placement.handlers import aggregate
from placement.handlers import allocation
from placement.handlers import allocation_candidate
from placement.handlers import candidate_explain
from placement.handlers import capacity_fit
from placement.handlers import claim
from placement.handlers import inventory
from placement.handlers import metrics
from placement.handlers import openapi_document
from placement.handlers import reshaper
from placement.handlers import resource_class
from placement.handlers import resource_provider
from placement.handlers import root
from placement.handlers import trait
from placement.handlers import usage

ROUTES = {
    '/': {
        'GET': root.home,
    },
    '/resource_providers': {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider,
    },
    '/resource_providers/{uuid}': {
        'GET': resource_provider.get_resource_provider,
        'DELETE': resource_provider.delete_resource_provider,
        'PUT': resource_provider.update_resource_provider,
    },
    '/resource_providers/{uuid}/inventories': {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': (inventory.delete_inventories_not_allowed,
                   inventory.delete_inventories),
    },
    '/resource_providers/{uuid}/inventories/{resource_class}': {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory,
    },
    '/resource_providers/{uuid}/usages': {
        'GET': usage.list_usages,
    },
    '/resource_providers/{uuid}/allocations': {
        'GET': allocation.get_provider_allocations,
    },
    '/resource_providers/{uuid}/aggregates': {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates,
    },
    '/resource_providers/{uuid}/traits': {
        'GET': trait.list_provider_traits,
        'PUT': trait.update_provider_traits,
        'DELETE': trait.delete_provider_traits,
    },
    '/traits': {
        'GET': trait.list_traits,
    },
    '/traits/{name}': {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait,
    },
    '/allocation_candidates': {
        'GET': allocation_candidate.list_allocation_candidates,
    },
    '/allocation_candidates/explain': {
        'GET': candidate_explain.explain_allocation_candidates,
    },
    '/claims': {
        'POST': claim.create_claim,
    },
    '/resource_classes': {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class,
    },
    '/allocations': {
        'POST': allocation.set_many_allocations,
    },
    '/allocations/{consumer_uuid}': {
        'GET': allocation.get_allocations,
        'PUT': (allocation.set_allocations_list, allocation.set_allocations),
        'DELETE': allocation.delete_allocations,
    },
    '/usages': {
        'GET': (usage.project_usages, usage.project_usages_by_type),
    },
    '/reshaper': {
        'POST': reshaper.reshape,
    },
    '/resource_classes/{name}': {
        'GET': resource_class.get_resource_class,
        'PUT': (resource_class.update_resource_class,
                resource_class.create_or_confirm_resource_class),
        'DELETE': resource_class.delete_resource_class,
    },
    '/metrics': {
        'GET': metrics.get_metrics,
    },
    '/capacity': {
        'GET': metrics.get_capacity,
    },
    '/capacity/fit': {
        'GET': capacity_fit.get_fit,
    },
    '/openapi.json': {
        'GET': openapi_document.get_openapi_document,
    },
}
