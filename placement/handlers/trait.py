"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6+)."""

from placement import exception
from placement import microversion
from placement.handlers import resource_provider as rp_handler
from placement.objects import trait as trait_obj
from placement.openapi import contract
from placement.schemas import trait as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

_BAD_NAME_FILTER = (
    'Badly formatted name parameter. Expected name query string parameter '
    'in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "%s"')
_INVALID_TRAIT = (
    'The trait is invalid. A valid trait must be no longer than 255 '
    'characters, start with the prefix "CUSTOM_" and use following '
    'characters: "A"-"Z", "0"-"9" and "_"')


def _name_filter(value):
    """``in:A,B`` -> (names, None); ``startswith:P`` -> (None, P)."""
    if ':' not in value:
        raise errors.BadRequest(_BAD_NAME_FILTER % value)
    operator, argument = value.split(':', 1)
    if operator == 'in':
        return argument.split(','), None
    if operator == 'startswith':
        return None, argument
    # Any other operator filters nothing (see api-ref/behaviour-choices.rst,
    # 'Unknown operators in GET /traits?name=').
    return None, None


def _associated_filter(value):
    value = value.lower()
    if value not in ('true', 'false'):
        raise errors.BadRequest(
            'The query parameter "associated" only accepts "true" or "false"')
    return value == 'true'


@contract.describe(
    {200: schema.LISTING}, query=schema.LIST_V1_6)
@microversion.serves('1.6')
@negotiation.accept_json
def list_traits(req):
    ctx = negotiation.context(req)
    ctx.can('placement:traits:list')
    params = validation.validate_query(req, schema.LIST_V1_6)
    names = prefix = associated = None
    if 'name' in params:
        names, prefix = _name_filter(params['name'])
    if 'associated' in params:
        associated = _associated_filter(params['associated'])
    traits = trait_obj.list_traits(ctx, names=names, prefix=prefix,
                                   associated=associated)
    return responses.json_response(
        req, {'traits': [t.name for t in traits]},
        last_modified=responses.newest(t.last_modified for t in traits))


@contract.describe(
    {204: None})
@microversion.serves('1.6')
def get_trait(req):
    ctx = negotiation.context(req)
    ctx.can('placement:traits:show')
    try:
        trait = trait_obj.get_by_name(ctx, req.urlvars['name'])
    except exception.TraitNotFound as exc:
        raise errors.NotFound(str(exc))
    return responses.empty_response(
        req, last_modified=trait.created_at or responses.now())


@contract.describe(
    {201: None, 204: None})
@microversion.serves('1.6')
def put_trait(req):
    ctx = negotiation.context(req)
    ctx.can('placement:traits:update')
    name = req.urlvars['name']
    if validation.validate_value(name, schema.CUSTOM_NAME) is not None:
        raise errors.BadRequest(_INVALID_TRAIT)
    trait, created = trait_obj.ensure(ctx, name)
    return responses.empty_response(
        req, 201 if created else 204,
        last_modified=trait.created_at or responses.now(),
        headers={'Location': responses.location(req, '/traits/' + name)})


@contract.describe(
    {204: None}, errors=(409,))
@microversion.serves('1.6')
def delete_trait(req):
    ctx = negotiation.context(req)
    ctx.can('placement:traits:delete')
    try:
        trait_obj.destroy(ctx, req.urlvars['name'])
    except exception.TraitNotFound as exc:
        raise errors.NotFound(str(exc))
    except exception.TraitCannotDeleteStandard as exc:
        raise errors.BadRequest(str(exc))
    except exception.TraitInUse as exc:
        raise errors.Conflict(str(exc))
    return responses.empty_response(req)


def _provider_traits_response(req, traits, generation):
    return responses.json_response(
        req, {'traits': [t.name for t in traits],
              'resource_provider_generation': generation},
        last_modified=responses.newest(t.last_modified for t in traits))


@contract.describe(
    {200: schema.PROVIDER_TRAITS})
@microversion.serves('1.6')
@negotiation.accept_json
def list_provider_traits(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:traits:list')
    try:
        generation, traits = trait_obj.get_provider_traits(
            ctx, req.urlvars['uuid'])
    except exception.ResourceProviderNotFound as exc:
        # Upstream Placement repeats the message here, and keeps Vary.
        raise errors.NotFound('%s: %s' % (exc, exc))
    return _provider_traits_response(req, traits, generation)


@contract.describe(
    {200: schema.PROVIDER_TRAITS},
    body=schema.PUT_PROVIDER_TRAITS_V1_6, errors=(409,))
@microversion.serves('1.6')
@negotiation.require_json_content
def update_provider_traits(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:traits:update')
    data = validation.json_body(req, schema.PUT_PROVIDER_TRAITS_V1_6)
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    try:
        traits, generation = trait_obj.set_provider_traits(
            ctx, provider, data['traits'],
            data['resource_provider_generation'])
    except exception.ResourceProviderGenerationMismatch as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise errors.Conflict('Update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest('No such trait %s' % exc.kwargs['names'])
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    return _provider_traits_response(req, traits, generation)


@contract.describe(
    {204: None}, errors=(409,))
@microversion.serves('1.6')
def delete_provider_traits(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:traits:delete')
    provider = rp_handler.get_provider_or_404(ctx, req.urlvars['uuid'])
    try:
        trait_obj.delete_provider_traits(ctx, provider)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    return responses.empty_response(req)
