"""Usages: per provider (spec 07 §7)."""

from placement import errors
from placement import exception
from placement.objects import inventory as inv_obj
from placement.objects import resource_provider as rp_obj
from placement import util


@util.accept_json
def list_usages(req):
    """Usage of every inventory class of one provider."""
    ctx = util.context(req)
    ctx.can('placement:resource_providers:usages')
    try:
        provider = rp_obj.get_by_uuid(ctx, req.urlvars['uuid'])
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound('%s: %s' % (exc, exc))
    return util.json_response(req, {
        'resource_provider_generation': provider.generation,
        'usages': inv_obj.usages(ctx, provider),
    }, last_modified=util.now())
