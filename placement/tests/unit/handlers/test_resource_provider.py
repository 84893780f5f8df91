"""Provider rendering: the links written from a JSON template must be
exactly the links built as plain objects, whatever the mount prefix,
uuid and microversion."""

import datetime

import orjson
import pytest
import webob

from placement.handlers import resource_provider as handler
from placement import microversion
from placement.objects import resource_provider as rp_obj

LINKS = (('self', '', '1.0'), ('inventories', '/inventories', '1.0'),
         ('usages', '/usages', '1.0'), ('aggregates', '/aggregates', '1.1'),
         ('traits', '/traits', '1.6'),
         ('allocations', '/allocations', '1.11'))


def _provider(uuid, name='cn"1\\\u00e9'):
    now = datetime.datetime(2024, 1, 1)
    return rp_obj.ResourceProvider(1, uuid, name, 3, uuid, None, 1, None,
                                   now, None)


def _request(version, script_name=''):
    req = webob.Request.blank('/resource_providers')
    req.script_name = script_name
    req.environ[microversion.ENVIRON_KEY] = microversion.Version.parse(
        version)
    return req


def _expected_links(prefix, uuid, version):
    parsed = microversion.Version.parse(version)
    return [{'rel': rel, 'href': '%s/resource_providers/%s%s' % (
        prefix, uuid, suffix)} for rel, suffix, since in LINKS
        if parsed >= microversion.Version.parse(since)]


@pytest.mark.parametrize('version', ['1.0', '1.1', '1.6', '1.14', '1.39'])
@pytest.mark.parametrize('prefix', ['', '/placement', '/p"l\\a\u00e9ce',
                                    '/with\x00nul'])
@pytest.mark.parametrize('uuid', ['5d3d0b4c-95a3-4a6c-9f4a-bd2d0bbf1f6e',
                                  'odd"uuid\\'])
def test_links_are_those_of_plain_objects(version, prefix, uuid):
    req = _request(version, prefix)
    rendered = orjson.loads(orjson.dumps(
        handler.serialize(req, _provider(uuid))))
    assert rendered['links'] == _expected_links(prefix, uuid, version)
    assert rendered['uuid'] == uuid
    assert rendered['name'] == 'cn"1\\\u00e9'
    assert rendered['generation'] == 3
    nested = microversion.Version.parse(version) >= (1, 14)
    assert ('root_provider_uuid' in rendered) is nested
    if nested:
        assert rendered['parent_provider_uuid'] is None
        assert rendered['root_provider_uuid'] == uuid


@pytest.mark.parametrize('version', ['1.0', '1.6', '1.14', '1.39'])
@pytest.mark.parametrize('prefix', ['', '/p"l\\a\u00e9ce', '/with\x00nul'])
def test_listing_rows_render_as_providers_do(version, prefix):
    # A chunk mixing uuids that need JSON escaping with plain ones: each
    # row renders exactly as serialize renders the same provider.
    req = _request(version, prefix)
    uuids = ['5d3d0b4c-95a3-4a6c-9f4a-bd2d0bbf1f6e', 'odd"uuid\\',
             'caf\u00e9', 'tab\tuuid']
    providers = [_provider(uuid, name='cn%d"\u00e9' % i)
                 for i, uuid in enumerate(uuids)]
    for chunk in ([providers[0]], providers, providers[2:]):
        rows = [(p.id, p.uuid, p.name, p.generation, p.parent_provider_uuid,
                 p.root_provider_uuid, None) for p in chunk]
        rendered = handler._rows_renderer(req)(rows)
        assert rendered == orjson.dumps(
            [handler.serialize(req, p) for p in chunk])[1:-1]
