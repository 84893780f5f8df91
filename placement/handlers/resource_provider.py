"""/resource_providers and /resource_providers/{uuid}."""

import functools
import uuid as uuidlib

import orjson

from placement import exception
from placement import microversion
from placement.handlers import params as filters
from placement.objects import provider_listing
from placement.objects import resource_provider as rp_obj
from placement.openapi import contract
from placement.schemas import resource_provider as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

POST_SCHEMAS = (('1.0', schema.POST_V1_0), ('1.14', schema.POST_V1_14))
PUT_SCHEMAS = (('1.0', schema.PUT_V1_0), ('1.14', schema.PUT_V1_14))
LIST_SCHEMAS = (('1.0', schema.LIST_V1_0), ('1.3', schema.LIST_V1_3),
                ('1.4', schema.LIST_V1_4), ('1.14', schema.LIST_V1_14),
                ('1.18', schema.LIST_V1_18))

# Links a provider carries, with the version that introduced each.
_LINKS = (('self', '', microversion.MIN_VERSION),
          ('inventories', '/inventories', microversion.MIN_VERSION),
          ('usages', '/usages', microversion.MIN_VERSION),
          ('aggregates', '/aggregates', microversion.AGGREGATES),
          ('traits', '/traits', microversion.TRAITS),
          ('allocations', '/allocations', microversion.PROVIDER_ALLOCATIONS))


def serialize(req, provider):
    """The provider representation at the request's microversion."""
    return _serializer(req)(provider)


def _links_renderer(req):
    """``render_links(uuid, plain)``: the links of the provider
    ``uuid`` at the request's microversion, worked out once per request:
    a listing renders thousands of providers. The links, six small
    objects per provider, are written as one JSON fragment from a
    template: building them as dicts cost more than the rest of a
    listing. ``plain`` says ``uuid`` needs no JSON escaping."""
    version = negotiation.version(req)
    prefix = responses.href(req, '/resource_providers/')
    rels = tuple((rel, suffix) for rel, suffix, since in _LINKS
                 if version >= since)
    pieces = _link_pieces(prefix, rels)
    fragment, dumps = orjson.Fragment, orjson.dumps
    if pieces is None:
        # A mount prefix holding NUL itself: build the links as dicts.
        def render_links(uuid, plain=False):
            return [{'rel': rel, 'href': prefix + uuid + suffix}
                    for rel, suffix in rels]
    else:
        def render_links(uuid, plain=False):
            if not plain:
                uuid = dumps(uuid)[1:-1].decode()
            return fragment(uuid.join(pieces))
    return render_links


@functools.lru_cache(maxsize=64)
def _link_pieces(prefix, rels):
    """The JSON of the links with "\\0" where the provider's uuid goes,
    cut there (a uuid, escaped, joins the pieces); None if ``prefix``
    holds NUL itself. Kept per mount prefix and microversion range: a
    single provider's response would spend more on it than on its row."""
    pieces = orjson.dumps([{'rel': rel, 'href': prefix + '\0' + suffix}
                           for rel, suffix in rels]).decode().split('\\u0000')
    return tuple(pieces) if len(pieces) == len(rels) + 1 else None


def _serializer(req):
    """``serialize`` with what depends only on the request worked out
    once."""
    render_links = _links_renderer(req)
    nested = negotiation.version(req) >= microversion.NESTED_PROVIDERS

    def render(provider):
        uuid = provider.uuid
        data = {
            'uuid': uuid,
            'name': provider.name,
            'generation': provider.generation,
            'links': render_links(uuid),
        }
        if nested:
            data['parent_provider_uuid'] = provider.parent_provider_uuid
            data['root_provider_uuid'] = provider.root_provider_uuid
        return data
    return render


def _rows_renderer(req):
    """Listing rows (``provider_listing.render_providers``) straight to
    the JSON the microversion shows: a chunk's providers as JSON text,
    comma separated, without the brackets of a list. No provider objects:
    a listing of a large cloud renders each row once and keeps only text.
    """
    render_links = _links_renderer(req)
    nested = negotiation.version(req) >= microversion.NESTED_PROVIDERS
    dumps = orjson.dumps

    def render(rows):
        uuids = [row[1] for row in rows]
        # One comparison tells whether any uuid of the chunk needs JSON
        # escaping (none the API writes does).
        plain = dumps(uuids) == ('["%s"]' % '","'.join(uuids)).encode()
        if nested:
            data = [{'uuid': uuid, 'name': name, 'generation': generation,
                     'links': render_links(uuid, plain),
                     'parent_provider_uuid': parent,
                     'root_provider_uuid': root}
                    for (_id, uuid, name, generation, parent, root,
                         _changed) in rows]
        else:
            data = [{'uuid': uuid, 'name': name, 'generation': generation,
                     'links': render_links(uuid, plain)}
                    for (_id, uuid, name, generation, _parent, _root,
                         _changed) in rows]
        return dumps(data)[1:-1]
    return render


def get_provider_or_404(ctx, uuid):
    """Look a provider up for a handler; upstream Placement's 404 has no
    Vary."""
    try:
        return rp_obj.get_by_uuid(ctx, uuid)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)


@contract.describe(
    {200: schema.PROVIDERS}, query=LIST_SCHEMAS)
@negotiation.accept_json
def list_resource_providers(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:list')
    version = negotiation.version(req)
    params = validation.validate_query(
        req, microversion.choose(version, LIST_SCHEMAS))
    member_of = required = resources = None
    if 'member_of' in params:
        member_of = filters.parse_member_of(params.getall('member_of'),
                                            version)
    if 'required' in params:
        required = filters.parse_required(params.getall('required'),
                                          version)
    if 'resources' in params:
        resources = filters.parse_resources(params['resources'])
    cache_headers = version >= microversion.CACHE_HEADERS
    try:
        with responses.collector_paused():
            chunks, newest = provider_listing.render_providers(
                ctx, _rows_renderer(req), name=params.get('name'),
                uuid=params.get('uuid'), in_tree=params.get('in_tree'),
                member_of=member_of, required=required,
                resources=resources, changed=cache_headers)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest(
            'Invalid trait(s) in "required" parameter: %s' % exc)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    return responses.json_list_response(
        req, 'resource_providers', chunks,
        last_modified=(newest or responses.now()) if cache_headers else None)


@contract.describe(
    {200: schema.PROVIDER})
@negotiation.accept_json
def get_resource_provider(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:show')
    provider = get_provider_or_404(ctx, req.urlvars['uuid'])
    return responses.json_response(req, serialize(req, provider),
                                   last_modified=provider.last_modified)


@contract.describe(
    {200: (('1.0', contract.ABSENT), ('1.20', schema.PROVIDER)),
     201: (('1.0', None), ('1.20', contract.ABSENT))},
    body=POST_SCHEMAS, errors=(409,))
@negotiation.require_json_content
def create_resource_provider(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:create')
    version = negotiation.version(req)
    data = validation.json_body(
        req, microversion.choose(version, POST_SCHEMAS))
    uuid = (validation.normalize_uuid(data['uuid']) if 'uuid' in data
            else str(uuidlib.uuid4()))
    name = data['name']
    try:
        provider = rp_obj.create(ctx, uuid, name,
                                 data.get('parent_provider_uuid'))
    except exception.ObjectActionError as exc:
        raise errors.BadRequest(
            'Unable to create resource provider "%s", %s: %s'
            % (name, uuid, exc))
    except exception.DuplicateResourceProvider as exc:
        raise errors.Conflict(str(exc), code=errors.DUPLICATE_NAME)
    headers = {'Location': responses.location(
        req, '/resource_providers/' + uuid)}
    if version >= microversion.CREATE_RETURNS_PROVIDER:
        return responses.json_response(req, serialize(req, provider),
                                       last_modified=responses.now(),
                                       headers=headers)
    return responses.empty_response(req, 201, headers=headers)


@contract.describe(
    {200: schema.PROVIDER}, body=PUT_SCHEMAS, errors=(409,))
@negotiation.require_json_content
def update_resource_provider(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:update')
    version = negotiation.version(req)
    provider = get_provider_or_404(ctx, req.urlvars['uuid'])
    data = validation.json_body(req, microversion.choose(version, PUT_SCHEMAS))
    try:
        provider = rp_obj.update(
            ctx, provider, data['name'],
            data.get('parent_provider_uuid', rp_obj.UNCHANGED),
            allow_reparent=version >= microversion.REPARENTING)
    except exception.ObjectActionError as exc:
        raise errors.BadRequest('Unable to save resource provider %s: %s'
                                % (provider.uuid, exc))
    except exception.DuplicateResourceProvider as exc:
        raise errors.Conflict(str(exc), code=errors.DUPLICATE_NAME)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(str(exc))
    return responses.json_response(req, serialize(req, provider),
                                   last_modified=provider.last_modified)


@contract.describe(
    {204: None}, errors=(409,))
def delete_resource_provider(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_providers:delete')
    uuid = req.urlvars['uuid']
    try:
        rp_obj.destroy(ctx, uuid)
    except exception.ResourceProviderNotFound:
        raise errors.NotFound(
            'No resource provider with uuid %s found for delete' % uuid)
    except exception.CannotDeleteParentResourceProvider as exc:
        raise errors.Conflict(
            str(exc), code=errors.PROVIDER_CANNOT_DELETE_PARENT)
    except exception.ResourceProviderInUse as exc:
        raise errors.Conflict(
            'Unable to delete resource provider %s: %s' % (uuid, exc),
            code=errors.PROVIDER_INUSE)
    return responses.empty_response(req)
