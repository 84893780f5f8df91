"""GET /capacity/fit: how many more instances of a candidates request
the fleet can hold, exactly (api-ref/capacity-fit.rst).

The query is a GET /allocation_candidates query, parsed by the
candidates handler at the newest microversion whatever the request
asks for, so it earns the same 400s. Read like GET /capacity: a token
and ``placement:capacity:read``, or a token-less request from
``[metrics] trusted_networks``.
"""

from placement import microversion
from placement.handlers import allocation_candidate as candidates
from placement.handlers import metrics as metrics_handlers
from placement.objects.candidates import fit as capacity_fit
from placement.openapi import contract
from placement.schemas import capacity_fit as schema
from placement.web import negotiation
from placement.web import responses

@contract.describe(
    {200: schema.FIT}, query=schema.QUERY, errors=(404,),
    token_optional=True, extension=True,
    summary='How many more instances of a candidates request fit '
            '(a token unless from a trusted network)')
@negotiation.accept_json
def get_fit(req):
    ctx = metrics_handlers.authorize(req, 'placement:capacity:read')
    conf = ctx.config.placement
    request = candidates.parse_request(req, microversion.MAX_VERSION, conf)
    # Every partial of the fleet is built, then dropped: no collection
    # should scan them meanwhile (see responses.collector_paused).
    with candidates.unknown_names_rejected(), responses.collector_paused():
        found = capacity_fit.fit(
            ctx, request, steps=conf.max_candidate_search_steps)
    return responses.json_response(req, {'fit': {
        'total': found.total, 'by_root': found.by_root,
        'by_aggregate': found.by_aggregate,
        'limited_by': found.limited_by, 'exact': found.exact}})
