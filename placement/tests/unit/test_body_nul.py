"""The NUL refusal of request bodies, including its shortcut for bodies
that cannot hold one."""

import json

import pytest

from placement.web import errors
from placement.web import validation

SCHEMA = {'type': 'object'}


@pytest.mark.parametrize('encoding', ['utf-8', 'utf-16', 'utf-32-le'])
def test_escaped_nul_is_refused_in_every_encoding(encoding):
    body = json.dumps({'name': 'a\x00b'}).encode(encoding)
    with pytest.raises(errors.BadRequest, match='NUL character'):
        validation._parsed_body(body, SCHEMA)


@pytest.mark.parametrize('encoding', ['utf-16', 'utf-32'])
def test_raw_nul_in_wide_encodings_is_refused(encoding):
    body = json.dumps({'name': 'a\x00b'}, ensure_ascii=False).encode(
        encoding)
    with pytest.raises(errors.BadRequest, match='NUL character'):
        validation._parsed_body(body, SCHEMA)


def test_escaped_backslash_before_u0000_is_no_nul():
    # The text \\u0000 is a backslash then "u0000": walked, and accepted.
    body = json.dumps({'name': '\\u0000'}).encode()
    assert b'\\\\u0000' in body
    assert validation._parsed_body(body, SCHEMA) == {'name': '\\u0000'}


def test_body_without_nul_is_not_walked(monkeypatch):
    monkeypatch.setattr(validation, '_has_nul',
                        lambda data: pytest.fail('walked'))
    assert validation._parsed_body(b'{"name": "abc"}', SCHEMA) == {
        'name': 'abc'}
