"""GET /openapi.json: the generated OpenAPI document (an extension).

Public, like the version document (see api-ref/behaviour-choices.rst,
'The OpenAPI document is public'). The document is chosen by the
``microversion`` query parameter, not by the version header, so that a
client can fetch any version's document without negotiating it.
"""

import orjson
import webob

from placement import microversion
from placement.openapi import contract
from placement.openapi import document
from placement.schemas import openapi_document as schema
from placement.web import dispatch
from placement.web import errors
from placement.web import negotiation
from placement.web import validation

#: The encoded document per version, built on first request.
_ENCODED = {}


def _requested_version(params):
    text = params.get('microversion')
    if text is None:
        return microversion.MAX_VERSION
    version = microversion.Version.parse(text)  # the schema checked digits
    if not microversion.MIN_VERSION <= version <= microversion.MAX_VERSION:
        raise errors.BadRequest(
            'Invalid microversion %s: this service serves %s to %s.' % (
                text, microversion.MIN_VERSION, microversion.MAX_VERSION),
            code=errors.QUERY_BAD_VALUE)
    return version


@contract.describe(
    {200: schema.DOCUMENT}, query=schema.QUERY, public=True, extension=True,
    summary='The OpenAPI document of a microversion (default: latest)')
@negotiation.accept_json
def get_openapi_document(req):
    params = validation.validate_query(req, schema.QUERY)
    version = _requested_version(params)
    body = _ENCODED.get(version)
    if body is None:
        body = _ENCODED[version] = orjson.dumps(document.build(
            version, req.environ[dispatch.ENVIRON_ROUTES]))
    response = webob.Response()
    response.status = 200
    response.body = body
    response.content_type = negotiation.JSON
    response.charset = None
    return response
