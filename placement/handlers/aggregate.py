"""/resource_providers/{uuid}/aggregates (1.1+)."""

import functools

from placement import exception
from placement import microversion
from placement.handlers import resource_provider as rp_handler
from placement.objects import aggregate as aggregate_obj
from placement.openapi import contract
from placement.schemas import aggregate as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

PUT_SCHEMAS = (('1.1', schema.PUT_V1_1), ('1.19', schema.PUT_V1_19))


def _serves_from_1_1(handler):
    """404 below 1.1, but only after the Accept/Content-Type check.

    These two handlers are the exception to the dispatcher's version gate:
    upstream Placement checks the media types first, so they
    are routed for every version and gate themselves inside.
    """
    @functools.wraps(handler)
    def wrapper(req):
        if negotiation.version(req) < microversion.AGGREGATES:
            raise errors.NotFound()
        return handler(req)
    return wrapper


def _response(req, aggregates, generation):
    data = {'aggregates': aggregates}
    if negotiation.version(req) >= microversion.AGGREGATES_GENERATION:
        data['resource_provider_generation'] = generation
    return responses.json_response(req, data, last_modified=responses.now())


@contract.describe(
    {200: schema.AGGREGATES}, since='1.1')
@negotiation.accept_json
@_serves_from_1_1
def get_aggregates(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:aggregates:list')
    try:
        generation, aggregates = aggregate_obj.get_provider_aggregates(
            ctx, req.urlvars['uuid'])
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    return _response(req, aggregates, generation)


@contract.describe(
    {200: schema.AGGREGATES}, body=PUT_SCHEMAS, errors=(409,),
    since='1.1')
@negotiation.require_json_content
@_serves_from_1_1
def set_aggregates(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:aggregates:update')
    version = negotiation.version(req)
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    data = validation.json_body(req, microversion.choose(version, PUT_SCHEMAS))
    if version >= microversion.AGGREGATES_GENERATION:
        aggregates = data['aggregates']
        generation = data['resource_provider_generation']
    else:
        aggregates, generation = data, None
    try:
        generation = aggregate_obj.set_provider_aggregates(
            ctx, provider, aggregates, generation)
    except exception.ResourceProviderGenerationMismatch as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise errors.Conflict('Update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except exception.AggregateCreateConflict as exc:
        raise errors.Conflict(str(exc))
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    # The request's list, in request order, is echoed.
    return _response(req, aggregates, generation)
