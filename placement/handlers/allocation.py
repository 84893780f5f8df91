"""/allocations, /allocations/{consumer_uuid} and provider allocations."""

from placement import exception
from placement import microversion
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.objects import resource_provider as rp_obj
from placement.openapi import contract
from placement.schemas import allocation as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

LIST_SCHEMAS = (('1.0', schema.PUT_V1_0), ('1.8', schema.PUT_V1_8))
DICT_SCHEMAS = (('1.12', schema.PUT_V1_12), ('1.28', schema.PUT_V1_28),
                ('1.34', schema.PUT_V1_34), ('1.38', schema.PUT_V1_38))
POST_SCHEMAS = (('1.13', schema.POST_V1_13), ('1.28', schema.POST_V1_28),
                ('1.34', schema.POST_V1_34), ('1.38', schema.POST_V1_38))

_RACE = 'Inventory and/or allocations changed while attempting to allocate'


# -- shared by the writers (and the reshaper) ------------------------------

def _consumer_request(conf, consumer_uuid, body):
    """``consumer_obj.prepare`` arguments for one consumer's body. What
    the body's microversion lacks keeps its old-version meaning:
    configured ids below 1.8, no generation check below 1.28, type left
    alone below 1.38."""
    return {
        'uuid': consumer_uuid,
        'project': body.get('project_id',
                            conf.placement.incomplete_consumer_project_id),
        'user': body.get('user_id',
                         conf.placement.incomplete_consumer_user_id),
        'generation': body.get('consumer_generation',
                               consumer_obj.UNCHECKED),
        'consumer_type': body.get('consumer_type', consumer_obj.UNCHANGED),
    }


def consumer_requests(conf, bodies):
    """ConsumerRequests for ``bodies`` ({consumer uuid: body in dict
    format})."""
    return [alloc_obj.ConsumerRequest(
                _consumer_request(conf, uuid, body),
                {rp: entry['resources']
                 for rp, entry in body['allocations'].items()})
            for uuid, body in bodies.items()]


def consumer_conflict(exc):
    """The 409 for a consumer generation the client got wrong."""
    return errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)


def provider_missing(exc):
    """The 400 for an allocation naming an unknown provider."""
    return errors.BadRequest(
        "Allocation for resource provider '%s' that does not exist."
        % exc.kwargs['uuid'])


def _write(req, bodies, unknown_class_prefix):
    ctx = negotiation.context(req)
    try:
        alloc_obj.write(
            ctx, consumer_requests(ctx.config, bodies),
            ctx.config.placement.allocation_conflict_retry_count)
    except exception.ConsumerGenerationMismatch as exc:
        raise consumer_conflict(exc)
    except exception.ResourceProviderNotFound as exc:
        raise provider_missing(exc)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest('%s %s' % (unknown_class_prefix, exc))
    except exception.InvalidAllocation as exc:
        raise errors.Conflict('Unable to allocate inventory: %s' % exc)
    except (exception.ConcurrentUpdateDetected,
            exception.ConsumerGenerationConflict) as exc:
        raise errors.Conflict('%s: %s' % (_RACE, exc),
                              code=errors.CONCURRENT_UPDATE)
    return responses.empty_response(req)


def _consumer_uuid(req):
    """The path's consumer uuid in canonical form, else 400."""
    value = req.urlvars['consumer_uuid']
    try:
        return validation.normalize_uuid(value)
    except ValueError:
        raise errors.BadRequest('Malformed consumer_uuid: %s' % value)


def _put(req, schemas, as_dict):
    ctx = negotiation.context(req)
    ctx.can('placement:allocations:update')
    consumer_uuid = _consumer_uuid(req)
    body = validation.json_body(
        req, microversion.choose(negotiation.version(req), schemas))
    body['allocations'] = as_dict(body['allocations'])
    return _write(req, {consumer_uuid: body},
                  'Unable to allocate inventory for consumer %s:'
                  % consumer_uuid)


# -- handlers -------------------------------------------------------------

@contract.describe(
    {204: None}, body=LIST_SCHEMAS, errors=(409,))
@microversion.serves('1.0', '1.11')
@negotiation.require_json_content
def set_allocations_list(req):
    """PUT in the list format; a provider listed twice: the last wins."""
    return _put(req, LIST_SCHEMAS, lambda items: {
        item['resource_provider']['uuid']: item for item in items})


@contract.describe(
    {204: None}, body=DICT_SCHEMAS, errors=(409,))
@microversion.serves('1.12')
@negotiation.require_json_content
def set_allocations(req):
    return _put(req, DICT_SCHEMAS, lambda allocations: allocations)


@contract.describe(
    {204: None}, body=POST_SCHEMAS, errors=(409,))
@microversion.serves('1.13')
@negotiation.require_json_content
def set_many_allocations(req):
    """POST /allocations: every consumer's set in one transaction."""
    ctx = negotiation.context(req)
    ctx.can('placement:allocations:manage')
    bodies = validation.json_body(
        req, microversion.choose(negotiation.version(req), POST_SCHEMAS))
    return _write(req, bodies, 'Unable to allocate inventory')


@contract.describe(
    {200: schema.CONSUMER_ALLOCATIONS})
@negotiation.accept_json
def get_allocations(req):
    ctx = negotiation.context(req)
    ctx.can('placement:allocations:list')
    version = negotiation.version(req)
    view = alloc_obj.get_by_consumer(ctx, req.urlvars['consumer_uuid'])
    body = {'allocations': view.allocations}
    if view.allocations and version >= microversion.DICT_ALLOCATIONS:
        body['project_id'] = view.project_id
        body['user_id'] = view.user_id
        if version >= microversion.CONSUMER_GENERATIONS:
            body['consumer_generation'] = view.generation
        if version >= microversion.CONSUMER_TYPES:
            body['consumer_type'] = view.consumer_type or 'unknown'
    return responses.json_response(req, body,
                                   last_modified=responses.newest([view.last_modified]))


@contract.describe(
    {204: None})
def delete_allocations(req):
    ctx = negotiation.context(req)
    ctx.can('placement:allocations:delete')
    try:
        alloc_obj.delete_by_consumer(ctx, req.urlvars['consumer_uuid'])
    except exception.ConsumerAllocationsNotFound as exc:
        raise errors.NotFound(str(exc))
    return responses.empty_response(req)


@contract.describe(
    {200: schema.PROVIDER_ALLOCATIONS})
@negotiation.accept_json
def get_provider_allocations(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:allocations:list')
    uuid = req.urlvars['uuid']
    try:
        provider = rp_obj.get_by_uuid(ctx, uuid)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound("Resource provider '%s' not found: %s"
                              % (uuid, exc))
    consumers, newest = alloc_obj.get_by_provider(ctx, provider)
    if negotiation.version(req) < microversion.CONSUMER_GENERATIONS:
        for entry in consumers.values():
            del entry['consumer_generation']
    return responses.json_response(req, {
        'resource_provider_generation': provider.generation,
        'allocations': consumers,
    }, last_modified=responses.newest([newest]))
