"""POST /claims: choose an allocation candidate and write it, atomically
(api-ref/claims.rst).

The body's ``query`` is a GET /allocation_candidates query string; the
candidates handler parses it at the request's microversion, so it earns
the same 400s. ``placement.objects.claim`` searches and writes; a claim
that finds nothing says why in the words of
GET /allocation_candidates/explain.
"""

import urllib.parse

import webob

from placement import exception
from placement import microversion
from placement.handlers import allocation
from placement.handlers import allocation_candidate as candidates
from placement.handlers import candidate_explain
from placement.objects import claim as claim_obj
from placement.objects.candidates import engine as ac_obj
from placement.objects.candidates import explain as explain_obj
from placement.openapi import contract
from placement.schemas import claim as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

# Printable ASCII stays as sent (percent escapes included); anything
# else is percent-encoded as UTF-8, as a client would put it in a URL.
_QUERY_SAFE = ''.join(chr(c) for c in range(0x21, 0x7f))


@contract.describe(
    {200: schema.RESPONSE_V1_38}, body=schema.POST_V1_38, errors=(409,),
    summary='Choose an allocation candidate and write it atomically',
    extension=True)
@microversion.serves('1.38')
@negotiation.require_json_content
@negotiation.accept_json
def create_claim(req):
    ctx = negotiation.context(req)
    ctx.can('placement:claims:create')
    version = negotiation.version(req)
    body = validation.json_body(req, schema.POST_V1_38)
    conf = ctx.config.placement
    request = parse_query(body['query'], version, conf)
    consumer = {
        'uuid': validation.normalize_uuid(body['consumer_uuid']),
        'project': body['project_id'],
        'user': body['user_id'],
        'generation': body['consumer_generation'],
        'consumer_type': body['consumer_type'],
    }
    options = ac_obj.Options(
        max_candidates=conf.max_allocation_candidates,
        breadth_first=(conf.allocation_candidates_generation_strategy
                       == 'breadth-first'),
        max_search_steps=conf.max_candidate_search_steps)
    with candidates.unknown_names_rejected():
        try:
            claimed = claim_obj.claim(
                ctx, consumer, request, options,
                body.get('strategy', claim_obj.DEFAULT_STRATEGY))
        except exception.NoClaimCandidates as exc:
            raise errors.Conflict(_why(ctx, request, exc),
                                  code=errors.CLAIM_NO_CANDIDATES)
        except exception.ClaimCandidatesTaken as exc:
            raise errors.Conflict(str(exc), code=errors.CLAIM_NO_CANDIDATES)
        except exception.ConsumerGenerationMismatch as exc:
            raise allocation.consumer_conflict(exc)
        except exception.ConsumerGenerationConflict as exc:
            raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    view = claimed.view
    return responses.json_response(req, {
        'allocations': view.allocations,
        'mappings': claimed.mappings,
        'consumer_generation': view.generation,
        'project_id': view.project_id,
        'user_id': view.user_id,
        'consumer_type': view.consumer_type,
    })


def parse_query(query, version, conf):
    """The ``engine.Request`` of a candidates query string,
    or the 400 GET /allocation_candidates?<query> would answer."""
    encoded = urllib.parse.quote(query, safe=_QUERY_SAFE)
    return candidates.parse_request(
        webob.Request.blank('/allocation_candidates?' + encoded), version,
        conf)


def _why(ctx, request, exc):
    """The refusal's text with the explain reason, when the search still
    finds nothing."""
    reason = candidate_explain.reason(explain_obj.explain(
        ctx, request, ctx.config.placement.max_candidate_search_steps),
        request)
    return str(exc) if reason is None else '%s %s' % (exc, reason)
