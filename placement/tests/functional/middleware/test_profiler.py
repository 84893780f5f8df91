"""osprofiler: a request signed with a ``[profiler] hmac_keys`` key is
traced, with its SQL; without ``[profiler] enabled`` nothing is added.

The spans go to a notification driver of osprofiler's kind that keeps
them in memory (``memory://``): osprofiler finds drivers by their
connection-string scheme, as it finds its own.
"""

import uuid

from osprofiler import notifier
from osprofiler import profiler as osprofiler
from osprofiler import web
from osprofiler.drivers import base
import pytest
import webob

from placement.db import prepared
from placement import deploy
from placement.middleware import profiler
from placement.tests import fixtures

KEY = 'trace-secret'


class MemoryDriver(base.Driver):
    """Keeps every notification (osprofiler's span start and stop
    messages) in ``SPANS``."""

    SPANS = []

    @classmethod
    def get_name(cls):
        return 'memory'

    def notify(self, info, **kwargs):
        self.SPANS.append(dict(info, project=self.project,
                               service=self.service))


@pytest.fixture
def traced_app(ctx):
    conf = fixtures.new_conf(
        profiler__enabled=True, profiler__hmac_keys=KEY,
        profiler__trace_sqlalchemy=True,
        profiler__connection_string='memory://')
    MemoryDriver.SPANS.clear()
    try:
        yield fixtures.new_app(conf, ctx.db)
    finally:
        # osprofiler's switches are process-wide.
        prepared.TRACER = None
        web.disable()
        notifier.set(lambda info, context=None: None)
        notifier.clear_notifier_cache()


def _trace_headers(key):
    """The headers nova's client sends inside a trace: osprofiler's
    signed trace id."""
    osprofiler.init(key)
    try:
        return web.get_trace_id_headers()
    finally:
        osprofiler.clean()


def _spans(phase):
    return [span for span in MemoryDriver.SPANS
            if span['name'].endswith('-' + phase)]


def _request(path, headers):
    request = webob.Request.blank(path, headers=headers)
    request.headers['x-auth-token'] = 'admin'
    return request


def test_a_signed_request_is_traced_with_its_sql(traced_app):
    rp = str(uuid.uuid4())
    assert fixtures.call_as_admin(traced_app, 'POST', '/resource_providers',
                                  {'uuid': rp, 'name': 'traced'}
                                  ).status_int == 200
    assert MemoryDriver.SPANS == []  # not signed: not traced

    path = '/resource_providers/%s' % rp
    response = _request(path, _trace_headers(KEY)).get_response(traced_app)
    assert response.status_int == 200

    starts = _spans('start')
    assert starts[0]['name'] == 'wsgi-start'
    assert starts[0]['info']['request']['path'] == path
    assert {(span['project'], span['service']) for span in starts} == {
        ('placement', 'placement-api')}
    statements = [span['info']['db']['statement'] for span in starts
                  if span['name'] == 'db-start']
    assert any('FROM resource_providers' in sql for sql in statements), (
        statements)
    # Every span started was stopped, all in the caller's trace.
    assert len(_spans('stop')) == len(starts)
    assert len({span['base_id'] for span in MemoryDriver.SPANS}) == 1


def test_a_request_signed_with_another_key_is_not_traced(traced_app):
    request = _request('/resource_providers', _trace_headers('other'))
    assert request.get_response(traced_app).status_int == 200
    assert MemoryDriver.SPANS == []


def test_off_by_default_nothing_is_added(ctx):
    conf = fixtures.new_conf()
    assert not profiler.enabled(conf)
    app = fixtures.new_app(conf, ctx.db)
    layers = []
    while app is not None:
        layers.append(type(app))
        app = getattr(app, 'application', None)
    assert web.WsgiMiddleware not in layers
    assert prepared.TRACER is None


@pytest.mark.parametrize('keys', ['', 'SECRET_KEY', None],
                         ids=['empty', 'default', 'unset'])
def test_enabled_without_a_key_of_its_own_refuses_to_start(ctx, keys):
    overrides = {} if keys is None else {'profiler__hmac_keys': keys}
    conf = fixtures.new_conf(profiler__enabled=True,
                             profiler__connection_string='memory://',
                             **overrides)
    with pytest.raises(deploy.ConfigurationError, match='hmac_keys'):
        fixtures.new_app(conf, ctx.db)

