"""Queries of GET /allocation_candidates parsed once per text
(``allocation_candidate.parsed_request``): the same query string, under
the same microversion and bounds, gives the same Request; anything else
is parsed afresh, and a query that fails fails every time."""

import types

import pytest
import webob

from placement.handlers import allocation_candidate as handler
from placement import microversion
from placement.web import errors

V1_39 = microversion.Version.parse('1.39')
V1_10 = microversion.Version.parse('1.10')
QUERY = 'resources=VCPU:1,MEMORY_MB:256&required=HW_CPU_X86_AVX2&limit=5'


def _conf(groups=10, terms=100):
    return types.SimpleNamespace(max_request_groups=groups,
                                 max_request_terms=terms)


@pytest.fixture(autouse=True)
def _empty(monkeypatch):
    monkeypatch.setattr(handler, '_PARSED', {})


def _parse(query, version=V1_39, conf=None):
    return handler.parsed_request(webob.Request.blank('/?' + query),
                                  version, conf or _conf())


def test_the_same_text_gives_the_same_request():
    first = _parse(QUERY)
    assert _parse(QUERY) is first
    assert first == handler.parse_request(
        webob.Request.blank('/?' + QUERY), V1_39, _conf())
    assert first.limit == 5
    assert first.groups[0].resources == {'VCPU': 1, 'MEMORY_MB': 256}


def test_another_text_version_or_bound_is_parsed_afresh():
    first = _parse(QUERY)
    assert _parse(QUERY + '&limit=6') is not first
    assert _parse(QUERY + '&limit=6').limit == 5   # the first limit
    plain = 'resources=VCPU:1'
    older = _parse(plain, V1_10)
    assert older is not _parse(plain) and older.nested_aware is False
    assert _parse(plain).nested_aware is True
    assert _parse(QUERY, conf=_conf(terms=3)) is not first
    with pytest.raises(errors.BadRequest):
        _parse(QUERY, conf=_conf(terms=2))


def test_a_query_that_fails_is_not_kept_and_fails_again():
    bad = 'resources=VCPU:x'
    for _ in range(2):
        with pytest.raises(errors.BadRequest):
            _parse(bad)
    assert handler._PARSED == {}


def test_the_kept_queries_are_bounded(monkeypatch):
    monkeypatch.setattr(handler, 'MAX_PARSED', 3)
    for limit in range(1, 8):
        _parse('resources=VCPU:1&limit=%d' % limit)
        assert len(handler._PARSED) <= 3
