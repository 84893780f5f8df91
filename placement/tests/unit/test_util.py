"""Responses built by placement.util."""

import orjson
import webob

from placement import microversion
from placement import util


def _request():
    req = webob.Request.blank('/widgets')
    req.environ[microversion.ENVIRON_KEY] = microversion.Version(1, 39)
    req.response = webob.Response()
    return req


def test_list_response_joins_its_parts_with_commas():
    for parts, members in (([], []), ([b'1'], [1]),
                           ([b'1,2', b'{"a":"]"}', b'3'], [1, 2, {'a': ']'},
                                                         3])):
        resp = util.json_list_response(_request(), 'widgets', parts)
        assert resp.content_length == len(resp.body)
        assert orjson.loads(resp.body) == {'widgets': members}
        assert resp.content_type == 'application/json'
        assert 'Last-Modified' not in resp.headers


def test_list_response_is_sent_as_its_parts():
    # Never joined into one body: a large listing is held once.
    parts = [b'1', b'2']
    resp = util.json_list_response(_request(), 'widgets', parts)
    assert list(resp.app_iter) == [b'{"widgets":[', b'1', b',', b'2', b']}']
