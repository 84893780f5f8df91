"""Responses built by placement.web.responses, through the whole
application."""

import gc
import uuid

import webob

from placement.objects import resource_provider as rp_obj
from placement.tests import fixtures


def _bodies_left(app, path):
    """Responses with a body still in memory after ``path`` was served
    and everything of it dropped, before any cycle collection."""
    environ = webob.Request.blank(path, headers={
        'x-auth-token': 'admin',
        'openstack-api-version': 'placement latest'}).environ
    statuses = []
    gc.collect()
    gc.disable()
    try:
        body = b''.join(app(environ, lambda status, headers, *exc:
                            statuses.append(status)))
        del environ
        left = [obj for obj in gc.get_objects()
                if isinstance(obj, webob.Response) and obj.content_length]
    finally:
        gc.enable()
    assert statuses[0].startswith('200'), body
    return left


def test_a_served_body_does_not_wait_for_the_cycle_collector(ctx):
    # webob's parsed query parameters make the environ a reference cycle;
    # a body hung on it (req.response) lived until a full collection.
    provider = rp_obj.create(ctx, str(uuid.uuid4()), 'rp')
    app = fixtures.new_app(fixtures.new_conf(), ctx.db)
    for path in ('/resource_providers?name=rp',
                 '/resource_providers/%s' % provider.uuid):
        assert _bodies_left(app, path) == []
