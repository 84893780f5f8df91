"""GET /metrics (Prometheus exposition) and GET /capacity (HTML page).

Both read through policy like the API, except for token-less requests
from ``[metrics] trusted_networks`` (``placement.metrics_access``), and
both answer 404 when ``[metrics] enabled`` is False.
"""

from prometheus_client import exposition

from placement import capacity_gauges
from placement import capacity_page
from placement import errors
from placement import metrics
from placement import metrics_access
from placement.objects import capacity as capacity_obj
from placement import util


def _authorized_snapshot(req, rule):
    ctx = util.context(req)
    if not ctx.config.metrics.enabled or metrics.active() is None:
        raise errors.NotFound(vary=False)
    if not metrics_access.trusted(req.environ):
        ctx.can(rule)
    return capacity_obj.snapshot(
        ctx, ctx.config.metrics.capacity_refresh_interval)


class _Exposition:
    """The registries to expose, read as one."""

    def __init__(self, sources):
        self.sources = sources

    def collect(self):
        for source in self.sources:
            yield from source.collect()


def get_metrics(req):
    snapshot = _authorized_snapshot(req, 'placement:metrics:read')
    encoder, content_type = exposition.choose_encoder(
        req.headers.get('Accept', ''))
    registry = _Exposition(metrics.collectors() +
                           [capacity_gauges.CapacityCollector(snapshot)])
    response = req.response
    response.status = 200
    response.body = encoder(registry)
    response.headers['Content-Type'] = content_type
    response.headers['Cache-Control'] = 'no-store'
    return response


def get_capacity(req):
    snapshot = _authorized_snapshot(req, 'placement:capacity:read')
    response = req.response
    response.status = 200
    response.text = capacity_page.render(snapshot)
    response.content_type = 'text/html'
    response.charset = 'utf-8'
    response.headers['Cache-Control'] = 'no-store'
    # The page is self-contained: nothing may be loaded from elsewhere.
    response.headers['Content-Security-Policy'] = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
    return response
