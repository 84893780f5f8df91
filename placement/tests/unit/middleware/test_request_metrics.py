"""Route labels: the same templates the dispatcher routes by."""

import routes

from placement.middleware import healthcheck
from placement.middleware import request_metrics
from placement.observability import metrics
from placement.web import dispatch
from placement.web import route_table

UUID = '5ecd1b3a-7f37-4c2e-9bb5-2a3d7f1e9c01'
PATHS = [
    '/', '', '/resource_providers', '/resource_providers/',
    '/resource_providers/%s' % UUID, '/resource_providers/x/y',
    '/resource_providers/%s/inventories' % UUID,
    '/resource_providers/%s/inventories/VCPU' % UUID,
    '/resource_providers/%s/inventories/VCPU/more' % UUID,
    '/resource_providers/%s/usages' % UUID,
    '/resource_providers/%s/allocations' % UUID,
    '/resource_providers/%s/aggregates' % UUID,
    '/resource_providers/%s/traits' % UUID,
    '/resource_providers//traits', '/traits', '/traits/CUSTOM_X',
    '/allocation_candidates', '/resource_classes',
    '/resource_classes/CUSTOM_GPU', '/allocations',
    '/allocations/%s' % UUID, '/usages', '/reshaper', '/metrics',
    '/capacity', '/capacity/x', '/nothing', '/traits/a.b%20c',
    '/resource_providers/\u00e9',
]


def _dispatcher_route(path):
    mapper = routes.Mapper()
    mapper.minimization = False
    for template in route_table.ROUTES:
        mapper.connect(template, template, _route=template)
    match = mapper.match(path or '/')
    return match['_route'] if match else metrics.UNMATCHED_ROUTE


def test_labels_are_the_dispatchers_routes():
    route = request_metrics.route_matcher(route_table.ROUTES)
    for path in PATHS:
        assert route(path) == _dispatcher_route(path), path


def test_every_route_is_reachable():
    route = request_metrics.route_matcher(route_table.ROUTES)
    for template in route_table.ROUTES:
        path = template.replace('{', 'x').replace('}', '')
        assert route(path) == template


def test_the_dispatchers_match_is_the_label():
    # RequestMetrics takes the template the dispatcher matched when there
    # is one: it must be the one its own matcher (with the health check)
    # gives.
    dispatcher = dispatch.Dispatcher(route_table.ROUTES)
    route = request_metrics.route_matcher(
        list(route_table.ROUTES) + [healthcheck.PATH])
    for path in PATHS + [t.replace('{', 'x').replace('}', '')
                         for t in route_table.ROUTES]:
        match = dispatcher.router.match(path or '/')
        if match is not None:
            assert match[0] == route(path), path


def test_requests_are_counted_by_their_labels():
    import types

    import prometheus_client as prom

    from placement import microversion

    registry = prom.CollectorRegistry()
    names = ['route', 'method', 'status', 'microversion']
    recorded = types.SimpleNamespace(
        requests=prom.Counter('t_requests', 'h', names, registry=registry),
        duration=prom.Histogram('t_duration', 'h', names,
                                registry=registry),
        in_flight=prom.Gauge('t_in_flight', 'h', registry=registry))

    def app(environ, start_response):
        version = environ.pop('version')
        if version is not None:
            environ[microversion.ENVIRON_KEY] = version
        if environ['PATH_INFO'] != '/boom':
            start_response('204 No Content', [])
        return []

    middleware = request_metrics.RequestMetrics(
        app, recorded, route_table.ROUTES)
    for method, path, version in [
            ('GET', '/traits', microversion.Version(1, 39)),
            ('GET', '/traits', microversion.Version(1, 39)),
            ('GET', '/traits', microversion.Version.parse('1.39')),
            ('GET', '/traits', None),
            ('BREW', '/traits', microversion.Version(1, 0)),
            ('GET', '/boom', None)]:
        middleware({'REQUEST_METHOD': method, 'PATH_INFO': path,
                    'version': version}, lambda *a: None)

    def count(route, method, status, version):
        return registry.get_sample_value('t_requests_total', {
            'route': route, 'method': method, 'status': status,
            'microversion': version})

    assert count('/traits', 'GET', '204', '1.39') == 3
    assert count('/traits', 'GET', '204', 'none') == 1
    assert count('/traits', 'other', '204', '1.0') == 1
    assert count(metrics.UNMATCHED_ROUTE, 'GET', '500', 'none') == 1
    assert registry.get_sample_value('t_duration_count', {
        'route': '/traits', 'method': 'GET', 'status': '204',
        'microversion': '1.39'}) == 3
    assert registry.get_sample_value('t_in_flight') == 0
