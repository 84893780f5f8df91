"""GET / : the version document."""

from placement import microversion
from placement.openapi import contract
from placement.schemas import root as schema
from placement.web import responses


@contract.describe(
    {200: schema.VERSIONS}, public=True,
    summary='The version document')
def home(req):
    """The version document; served without authentication or policy."""
    document = {'versions': [{
        'id': 'v1.0',
        'max_version': str(microversion.MAX_VERSION),
        'min_version': str(microversion.MIN_VERSION),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ''}],
    }]}
    return responses.json_response(req, document,
                                   last_modified=responses.now())
