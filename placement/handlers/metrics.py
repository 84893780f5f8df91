"""GET /metrics (Prometheus exposition) and GET /capacity (HTML page).

Both read through policy like the API, except for token-less requests
from ``[metrics] trusted_networks``
(``placement.middleware.trusted_network``), and both answer 404 when
``[metrics] enabled`` is False.
"""

from prometheus_client import exposition
import webob

from placement.middleware import trusted_network
from placement.objects import fleet_totals
from placement.objects.candidates import fit as capacity_fit
from placement.observability import fleet_gauges
from placement.observability import fleet_page
from placement.observability import metrics
from placement.openapi import contract
from placement.web import capacity_flavors
from placement.web import errors
from placement.web import negotiation
from placement.web import responses


def authorize(req, rule):
    """The context of a request for one of the capacity pages, once
    let in by its network or its policy ``rule``; 404 when metrics are
    off."""
    ctx = negotiation.context(req)
    if not ctx.config.metrics.enabled or metrics.active() is None:
        raise errors.NotFound(vary=False)
    if not trusted_network.trusted(req.environ):
        ctx.can(rule)
    return ctx


@contract.describe(
    {200: contract.Media('text/plain')}, errors=(404,),
    token_optional=True, extension=True,
    summary='Prometheus metrics (a token unless from a trusted network)')
def get_metrics(req):
    """The process metrics of every worker, then the capacity gauges,
    in the Prometheus text format (whatever Accept says)."""
    ctx = authorize(req, 'placement:metrics:read')
    max_age = ctx.config.metrics.capacity_refresh_interval
    parts = [exposition.generate_latest(registry)
             for registry in metrics.collectors()]
    parts.append(fleet_gauges.rendered(
        ctx.db.url, lambda: fleet_totals.snapshot(ctx, max_age), max_age))
    flavors = capacity_flavors.named(ctx.config)
    if flavors:
        parts.append(fleet_gauges.flavors_rendered(
            ctx.db.url, lambda: _flavor_fits(
                ctx, flavors, max_age), max_age))
    response = webob.Response()
    response.status = 200
    # Sent part by part: the capacity text of a large fleet is megabytes,
    # and joining it costs more than the rest of a cached scrape.
    response.app_iter = parts
    response.content_length = sum(map(len, parts))
    response.headers['Content-Type'] = exposition.CONTENT_TYPE_LATEST
    response.headers['Cache-Control'] = 'no-store'
    return response


@contract.describe(
    {200: contract.Media('text/html')}, errors=(404,),
    token_optional=True, extension=True,
    summary='Capacity page (a token unless from a trusted network)')
def get_capacity(req):
    ctx = authorize(req, 'placement:capacity:read')
    max_age = ctx.config.metrics.capacity_refresh_interval
    flavors = capacity_flavors.named(ctx.config)
    page = metrics.shared_cache('capacity-page', ctx.db.url).get(
        lambda: fleet_page.render(
            fleet_totals.snapshot(ctx, max_age),
            flavor_fits=_flavor_fits(ctx, flavors, max_age)
            if flavors else ()).encode('utf-8'),
        max_age)
    response = webob.Response()
    response.status = 200
    response.body = page
    response.content_type = 'text/html'
    response.charset = 'utf-8'
    response.headers['Cache-Control'] = 'no-store'
    # The page is self-contained: nothing may be loaded from elsewhere.
    response.headers['Content-Security-Policy'] = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
    return response


def _flavor_fits(ctx, flavors, max_age):
    """``fit.flavor_fits``, with the collector paused while every
    flavor's partials are built and dropped (see
    responses.collector_paused)."""
    with responses.collector_paused():
        return capacity_fit.flavor_fits(
            ctx, flavors, max_age,
            ctx.config.placement.max_candidate_search_steps)
