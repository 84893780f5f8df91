"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from placement import exception
from placement import microversion
from placement.handlers import resource_provider as rp_handler
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement.openapi import contract
from placement.schemas import inventory as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

_GENERATION_CONFLICT = 'resource provider generation conflict'


def min_capacity(req):
    """The smallest capacity a written record may have: zero (reserved
    == total) from 1.26."""
    return 0 if negotiation.version(req) >= microversion.ZERO_CAPACITY else 1


def _missing(exc):
    """The 404 of reads, with upstream Placement's doubled message."""
    return errors.NotFound('%s : %s' % (exc, exc))


def _provider_for_read(ctx, uuid):
    try:
        return rp_obj.get_by_uuid(ctx, uuid)
    except exception.ResourceProviderNotFound as exc:
        raise _missing(exc)


def _record(inventory):
    """A stored inventory as it is shown (allocation_ratio a float)."""
    record = inventory.record()
    record['allocation_ratio'] = float(record['allocation_ratio'])
    return record


def _single(record, generation):
    body = dict(record)
    if generation:
        body['resource_provider_generation'] = generation
    return body


def _body_of_known_provider(ctx, req, body_schema):
    """The validated body of a write to the provider of the path. An
    unknown provider is reported before a bad body, as upstream Placement
    does, so only a refused body costs a lookup of its own."""
    try:
        return validation.json_body(req, body_schema)
    except errors.BadRequest:
        rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
        raise


def _written(data):
    """A written record as echoed back: the values as supplied, defaults
    for what was omitted."""
    return {**inv_obj.DEFAULTS,
            **{k: v for k, v in data.items() if k in inv_obj.FIELDS}}


@contract.describe(
    {200: schema.ALL})
@negotiation.accept_json
def get_inventories(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:list')
    try:
        generation, inventories = inv_obj.get_provider_inventories(
            ctx, req.urlvars['uuid'])
    except exception.ResourceProviderNotFound as exc:
        raise _missing(exc)
    return responses.json_response(req, {
        'resource_provider_generation': generation,
        'inventories': {i.resource_class: _record(i) for i in inventories},
    }, last_modified=responses.newest(i.last_modified for i in inventories))


@contract.describe(
    {200: schema.ONE})
@negotiation.accept_json
def get_inventory(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:show')
    provider = _provider_for_read(ctx, req.urlvars['uuid'])
    resource_class = req.urlvars['resource_class']
    inventory = inv_obj.get_one(ctx, provider, resource_class)
    if inventory is None:
        raise errors.NotFound('No inventory of class %s for %s'
                              % (resource_class, provider.uuid))
    return responses.json_response(
        req, _single(_record(inventory), provider.generation),
        last_modified=inventory.last_modified)


@contract.describe(
    {201: schema.ONE}, body=schema.POST, errors=(409,))
@negotiation.require_json_content
def create_inventory(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:create')
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    data = validation.json_body(req, schema.POST)
    resource_class = data['resource_class']
    try:
        generation = inv_obj.create(ctx, provider, resource_class, data,
                                    min_capacity(req))
    except (exception.InvalidInventoryRecord,
            exception.ResourceClassNotFound) as exc:
        raise errors.BadRequest(
            'Unable to create inventory for resource provider %s: %s'
            % (provider.uuid, exc))
    except exception.ConcurrentUpdateDetected as exc:
        raise errors.Conflict('Update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except exception.InventoryExists as exc:
        raise errors.Conflict('Update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc))
    location = responses.location(req, '/resource_providers/%s/inventories/%s'
                                  % (provider.uuid, resource_class))
    return responses.json_response(req, _single(_written(data), generation),
                                   status=201, last_modified=responses.now(),
                                   headers={'Location': location})


@contract.describe(
    {200: schema.ONE}, body=schema.PUT_ONE, errors=(409,))
@negotiation.require_json_content
def update_inventory(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:update')
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    data = validation.json_body(req, schema.PUT_ONE)
    resource_class = req.urlvars['resource_class']
    try:
        generation = inv_obj.update(
            ctx, provider, resource_class, data,
            data['resource_provider_generation'], min_capacity(req))
    except exception.ResourceProviderGenerationMismatch:
        raise errors.Conflict(_GENERATION_CONFLICT,
                              code=errors.CONCURRENT_UPDATE)
    except exception.ResourceClassNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    except exception.InvalidInventoryRecord as exc:
        raise errors.BadRequest(
            'Unable to update inventory for resource provider %s: %s'
            % (provider.uuid, exc))
    except exception.InventoryNotFound as exc:
        raise errors.BadRequest(
            'No inventory record with resource class for resource provider '
            '%s: %s' % (provider.uuid, exc))
    except (exception.ConcurrentUpdateDetected,
            exception.ResourceProviderNotFound) as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    return responses.json_response(req, _single(_written(data), generation),
                                   last_modified=responses.now())


@contract.describe(
    {200: schema.ALL}, body=schema.PUT_ALL, errors=(409,))
@negotiation.require_json_content
def set_inventories(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:update')
    uuid = req.urlvars['uuid']
    data = _body_of_known_provider(ctx, req, schema.PUT_ALL)
    records = data['inventories']
    try:
        # The provider is found in the write's own transaction.
        generation = inv_obj.replace_all_by_uuid(
            ctx, uuid, records, data['resource_provider_generation'],
            min_capacity(req))
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    except exception.ResourceProviderGenerationMismatch:
        raise errors.Conflict(_GENERATION_CONFLICT,
                              code=errors.CONCURRENT_UPDATE)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Unknown resource class in inventory for resource provider '
            '%s: %s' % (uuid, exc))
    except exception.InvalidInventoryRecord as exc:
        raise errors.BadRequest(
            'Unable to update inventory for resource provider %s: %s'
            % (uuid, exc))
    except exception.InventoryInUse as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.INVENTORY_INUSE)
    except exception.ConcurrentUpdateDetected as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    return responses.json_response(req, {
        'resource_provider_generation': generation,
        'inventories': {name: _written(record)
                        for name, record in records.items()},
    }, last_modified=responses.now())


@contract.describe(
    {204: None}, errors=(409,))
def delete_inventory(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:delete')
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    resource_class = req.urlvars['resource_class']
    prefix = 'No inventory of class %s found for delete' % resource_class
    try:
        inv_obj.delete(ctx, provider, resource_class)
    except exception.ResourceClassNotFound as exc:
        raise errors.NotFound('%s: %s' % (prefix, exc))
    except exception.InventoryNotFound:
        raise errors.NotFound('%s: %s' % (prefix, prefix))
    except (exception.InventoryInUse, exception.ConcurrentUpdateDetected,
            exception.ResourceProviderNotFound) as exc:
        # Upstream Placement reports an inventory in use as a concurrent
        # update (see api-ref/behaviour-choices.rst, 'Deleting an inventory
        # in use').
        raise errors.Conflict('Unable to delete inventory of class %s: %s'
                              % (resource_class, exc),
                              code=errors.CONCURRENT_UPDATE)
    return responses.empty_response(req)


@contract.describe(
    {}, errors=(405,))
@microversion.serves('1.0', '1.4')
def delete_inventories_not_allowed(req):
    """DELETE of all inventories before 1.5: 405 without ``Allow``."""
    raise errors.MethodNotAllowed()



@contract.describe(
    {204: None}, errors=(409,))
@microversion.serves('1.5')
def delete_inventories(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:inventories:delete')
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    try:
        inv_obj.delete_all(ctx, provider)
    except exception.InventoryInUse as exc:
        raise errors.Conflict(str(exc), code=errors.INVENTORY_INUSE)
    except (exception.ConcurrentUpdateDetected,
            exception.ResourceProviderNotFound):
        raise errors.Conflict(
            'Unable to delete inventory for resource provider %s because '
            'the inventory was updated by another process. Please retry '
            'your request.' % provider.uuid, code=errors.CONCURRENT_UPDATE)
    return responses.empty_response(req)
