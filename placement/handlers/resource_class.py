"""/resource_classes and /resource_classes/{name} (MV >= 1.2)."""

from placement import exception
from placement import microversion
from placement.objects import resource_class as rc_obj
from placement.openapi import contract
from placement.schemas import resource_class as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation


def _serialize(req, name):
    return {'name': name,
            'links': [{'rel': 'self',
                       'href': responses.href(req,
                                              '/resource_classes/' + name)}]}


def _location(req, name):
    return {'Location': responses.location(req, '/resource_classes/' + name)}


def _get_or_404(ctx, name):
    try:
        return rc_obj.get_by_name(ctx, name)
    except exception.ResourceClassNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)


@contract.describe(
    {200: schema.LISTING})
@microversion.serves('1.2')
@negotiation.accept_json
def list_resource_classes(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:list')
    classes = rc_obj.list_classes(ctx)
    # Standard classes count as modified now, so the list always is.
    return responses.json_response(
        req, {'resource_classes': [_serialize(req, rc.name)
                                   for rc in classes]},
        last_modified=responses.now())


@contract.describe(
    {200: schema.SHOWN})
@microversion.serves('1.2')
@negotiation.accept_json
def get_resource_class(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:show')
    resource_class = _get_or_404(ctx, req.urlvars['name'])
    return responses.json_response(
        req, _serialize(req, resource_class.name),
        last_modified=resource_class.last_modified or responses.now())


@contract.describe(
    {201: None}, body=schema.BODY, errors=(409,))
@microversion.serves('1.2')
@negotiation.require_json_content
def create_resource_class(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:create')
    name = validation.json_body(req, schema.BODY)['name']
    try:
        rc_obj.create(ctx, name)
    except exception.ResourceClassExists:
        raise errors.Conflict(
            'Conflicting resource class already exists: %s' % name)
    except exception.MaxDBRetriesExceeded as exc:
        raise errors.Conflict(str(exc))
    return responses.empty_response(req, 201, headers=_location(req, name))


@contract.describe(
    {200: schema.SHOWN}, body=schema.BODY, errors=(409,))
@microversion.serves('1.2', '1.6')
@negotiation.require_json_content
def update_resource_class(req):
    """Rename a custom class (before 1.7)."""
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:update')
    new_name = validation.json_body(req, schema.BODY)['name']
    name = req.urlvars['name']
    try:
        renamed = rc_obj.rename(ctx, name, new_name)
    except exception.ResourceClassNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    except exception.ResourceClassCannotUpdateStandard as exc:
        raise errors.BadRequest(str(exc))
    except exception.ResourceClassExists as exc:
        raise errors.Conflict(str(exc))
    return responses.json_response(req, _serialize(req, renamed.name))


@contract.describe(
    {201: None, 204: None})
@microversion.serves('1.7')
def create_or_confirm_resource_class(req):
    """Create a custom class named by the path, or confirm it exists (no
    body is read from 1.7)."""
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:update')
    name = req.urlvars['name']
    problem = validation.validate_value(name, schema.NAME)
    if problem:
        raise errors.BadRequest('JSON does not validate: %s' % problem)
    try:
        created = rc_obj.ensure(ctx, name)
    except exception.MaxDBRetriesExceeded as exc:
        raise errors.Conflict(str(exc))
    return responses.empty_response(req, 201 if created else 204,
                                    headers=_location(req, name))


@contract.describe(
    {204: None}, errors=(409,))
@microversion.serves('1.2')
def delete_resource_class(req):
    ctx = negotiation.context(req)
    ctx.can('placement:resource_classes:delete')
    try:
        rc_obj.destroy(ctx, req.urlvars['name'])
    except exception.ResourceClassNotFound as exc:
        raise errors.NotFound(str(exc), vary=False)
    except exception.ResourceClassCannotDeleteStandard as exc:
        raise errors.BadRequest('Error in delete resource class: %s' % exc)
    except exception.ResourceClassInUse as exc:
        raise errors.Conflict('Error in delete resource class: %s' % exc)
    return responses.empty_response(req)
