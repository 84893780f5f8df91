"""Usages: per provider and per project/user."""

from placement import exception
from placement import microversion
from placement.objects import inventory as inv_obj
from placement.objects import usage as usage_obj
from placement.openapi import contract
from placement.schemas import usage as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

TOTALS_SCHEMAS = (('1.9', schema.LIST_V1_9), ('1.38', schema.LIST_V1_38))


@contract.describe(
    {200: schema.PROVIDER_USAGES})
@negotiation.accept_json
def list_usages(req):
    """Usage of every inventory class of one provider."""
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:usages')
    try:
        generation, usages = inv_obj.get_provider_usages(
            ctx, req.urlvars['uuid'])
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound('%s: %s' % (exc, exc))
    return responses.json_response(req, {
        'resource_provider_generation': generation,
        'usages': usages,
    }, last_modified=responses.now())


def _project_params(req):
    """Authorise against the queried project, then validate the query."""
    ctx = negotiation.context(req)
    try:
        project = req.GET.get('project_id')
    except UnicodeDecodeError:
        project = None  # validate_query answers 400 below
    ctx.can('placement:usages', target={'project_id': project})
    return ctx, validation.validate_query(
        req, microversion.choose(negotiation.version(req), TOTALS_SCHEMAS))


@contract.describe(
    {200: schema.TOTALS}, query=TOTALS_SCHEMAS)
@microversion.serves('1.9', '1.37')
@negotiation.accept_json
def project_usages(req):
    """Totals per resource class over a project's (user's) consumers."""
    ctx, params = _project_params(req)
    usages = usage_obj.totals(ctx, params['project_id'],
                              params.get('user_id'))
    return responses.json_response(req, {'usages': usages},
                                   last_modified=responses.now())


@contract.describe(
    {200: schema.TOTALS}, query=TOTALS_SCHEMAS)
@microversion.serves('1.38')
@negotiation.accept_json
def project_usages_by_type(req):
    """Totals grouped by consumer type, each with its consumer count."""
    ctx, params = _project_params(req)
    usages = usage_obj.by_consumer_type(
        ctx, params['project_id'], params.get('user_id'),
        params.get('consumer_type'))
    return responses.json_response(req, {'usages': usages},
                                   last_modified=responses.now())
