"""Responses built by placement.web.responses."""

import datetime
import email.utils

import orjson
import pytest
import webob

from placement import microversion
from placement.web import negotiation
from placement.web import responses


def _request():
    req = webob.Request.blank('/widgets')
    req.environ[microversion.ENVIRON_KEY] = microversion.Version(1, 39)
    return req


def test_list_response_joins_its_parts_with_commas():
    for parts, members in (([], []), ([b'1'], [1]),
                           ([b'1,2', b'{"a":"]"}', b'3'], [1, 2, {'a': ']'},
                                                         3])):
        resp = responses.json_list_response(_request(), 'widgets', parts)
        assert resp.content_length == len(resp.body)
        assert orjson.loads(resp.body) == {'widgets': members}
        assert resp.content_type == 'application/json'
        assert 'Last-Modified' not in resp.headers


def test_a_small_list_response_is_sent_as_one_piece():
    # One write for the WSGI server, not one per part.
    parts = [b'1', b'2']
    resp = responses.json_list_response(_request(), 'widgets', parts)
    assert list(resp.app_iter) == [b'{"widgets":[1,2]}']


def test_a_large_list_response_is_sent_in_bounded_pieces(monkeypatch):
    # Never joined into one body: a large listing is held once, plus at
    # most one piece being joined.
    monkeypatch.setattr(responses, 'LIST_CHUNK', 10)
    parts = [b'1234', b'5678', b'9' * 25, b'12', b'3']
    resp = responses.json_list_response(_request(), 'widgets', parts)
    pieces = list(resp.app_iter)
    assert b''.join(pieces) == b'{"widgets":[%s]}' % b','.join(parts)
    assert pieces == [b'{"widgets":[', b'1234,5678,', b'9' * 25 + b',',
                      b'12,3]}']
    assert resp.content_length == sum(map(len, pieces))


def _by_setters(status, body, content_type, headers, last_modified, req):
    """The response webob's property setters build: what the responses
    of placement.web.responses must match header for header, in order."""
    resp = webob.Response()
    resp.status = status
    resp.body = body
    resp.content_type = content_type
    if content_type:
        resp.charset = None
    if headers:
        resp.headers.update(headers)
    if (last_modified is not None
            and negotiation.version(req) >= microversion.CACHE_HEADERS):
        if last_modified.tzinfo is None:
            last_modified = last_modified.replace(
                tzinfo=datetime.timezone.utc)
        resp.last_modified = last_modified
        resp.cache_control = 'no-cache'
    return resp


@pytest.mark.parametrize('version', [(1, 14), (1, 15), (1, 39)])
@pytest.mark.parametrize('last_modified', [
    None,
    datetime.datetime(2024, 2, 29, 23, 59, 59),
    datetime.datetime(2024, 2, 29, 23, 59, 59, 999999,
                      tzinfo=datetime.timezone.utc),
    datetime.datetime(2024, 3, 1, 1, 59, 59, tzinfo=datetime.timezone(
        datetime.timedelta(hours=2)))])
@pytest.mark.parametrize('headers', [None, {'Location': 'http://h/w/1'}])
def test_responses_carry_the_headers_webob_setters_give(
        version, last_modified, headers):
    req = _request()
    req.environ[microversion.ENVIRON_KEY] = microversion.Version(*version)
    for status in (200, 201):
        got = responses.json_response(req, {'a': [1, 'é']}, status=status,
                                      last_modified=last_modified,
                                      headers=headers)
        want = _by_setters(status, got.body, 'application/json', headers,
                           last_modified, req)
        assert (got.status, got.headerlist, got.body) == (
            want.status, want.headerlist, want.body)
    for status in (204, 201):
        got = responses.empty_response(req, status,
                                       last_modified=last_modified,
                                       headers=headers)
        want = _by_setters(status, b'', None, headers, last_modified, req)
        assert (got.status, got.headerlist, got.body) == (
            want.status, want.headerlist, want.body)
    got = responses.json_list_response(req, 'w', [b'1'],
                                       last_modified=last_modified)
    want = _by_setters(200, b'{"w":[1]}', 'application/json', None,
                       last_modified, req)
    assert (got.headerlist, got.body) == (want.headerlist, want.body)


def test_http_dates_are_those_of_formatdate_second_after_second():
    for seconds in (0, 1764000000, 1764000000, 1764000001, 1764000000,
                    951782400, 4102444800, 4102444800):
        assert responses.http_date(seconds) == email.utils.formatdate(
            seconds, usegmt=True)


def test_an_empty_response_has_no_body_item():
    resp = responses.empty_response(_request())
    assert list(resp.app_iter) == []
    assert resp.body == b''
    assert resp.headers['Content-Length'] == '0'
    assert 'Content-Type' not in resp.headers
