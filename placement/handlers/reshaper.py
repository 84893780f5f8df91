"""POST /reshaper."""

from placement import exception
from placement import microversion
from placement.handlers import allocation as alloc_handler
from placement.handlers import inventory as inv_handler
from placement.objects import reshaper as reshaper_obj
from placement.objects import resource_provider as rp_obj
from placement.openapi import contract
from placement.schemas import reshaper as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

SCHEMAS = (('1.30', schema.POST_V1_30), ('1.34', schema.POST_V1_34),
           ('1.38', schema.POST_V1_38))


def _inventories(ctx, data):
    """(provider, records, generation) for each provider of the body,
    after checking it exists and its generation is the given one."""
    result = []
    for uuid, body in data.items():
        try:
            provider = rp_obj.get_by_uuid(ctx, uuid)
        except exception.ResourceProviderNotFound as exc:
            raise errors.BadRequest(
                'Resource provider %s in inventories not found: %s'
                % (uuid, exc), code=errors.PROVIDER_NOT_FOUND)
        given = body['resource_provider_generation']
        if provider.generation != given:
            raise errors.Conflict(
                'resource provider generation conflict for provider %s: '
                'actual: %s, given: %s' % (uuid, provider.generation, given),
                code=errors.CONCURRENT_UPDATE)
        result.append((provider, body['inventories'], given))
    return result


@contract.describe(
    {204: None}, body=SCHEMAS, errors=(409,))
@microversion.serves('1.30')
@negotiation.require_json_content
def reshape(req):
    ctx = negotiation.context(req)
    ctx.can('placement:reshaper:reshape')
    data = validation.json_body(
        req, microversion.choose(negotiation.version(req), SCHEMAS))
    inventories = _inventories(ctx, data['inventories'])
    try:
        reshaper_obj.reshape(ctx, inventories, alloc_handler.consumer_requests(
            ctx.config, data['allocations']), inv_handler.min_capacity(req))
    except exception.InvalidInventoryRecord as exc:
        raise errors.BadRequest(
            'Unable to update inventory for resource provider %s: %s'
            % (exc.kwargs['provider'], exc))
    except exception.ConsumerGenerationMismatch as exc:
        raise alloc_handler.consumer_conflict(exc)
    except exception.ResourceProviderNotFound as exc:
        raise alloc_handler.provider_missing(exc)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest('malformed reshaper data: %s' % exc)
    except exception.InventoryInUse as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.INVENTORY_INUSE)
    except exception.InvalidAllocation as exc:
        raise errors.Conflict('Unable to allocate inventory: %s' % exc)
    except (exception.ConcurrentUpdateDetected,
            exception.ResourceProviderGenerationMismatch,
            exception.ConsumerGenerationConflict) as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    return responses.empty_response(req)
