"""The refusal of unpaired surrogates in request bodies, which no
database driver can encode, and its shortcut for bodies that cannot
hold one."""

import json

import pytest

from placement.web import errors
from placement.web import validation

SCHEMA = {'type': 'object'}


@pytest.mark.parametrize('text', ['\ud800', 'a\udfffb', '\udc00\ud800'])
@pytest.mark.parametrize('encoding', ['utf-8', 'utf-16', 'utf-32-le'])
def test_escaped_lone_surrogate_is_refused(text, encoding):
    body = json.dumps({'name': text}).encode(encoding)
    with pytest.raises(errors.BadRequest, match='unpaired surrogates'):
        validation._parsed_body(body, SCHEMA)


def test_raw_surrogate_bytes_are_refused():
    # Not valid UTF-8, but json.loads decodes them with 'surrogatepass'.
    body = b'{"name": "\xed\xa0\x80"}'
    with pytest.raises(errors.BadRequest, match='unpaired surrogates'):
        validation._parsed_body(body, SCHEMA)


def test_surrogate_in_a_key_is_refused():
    body = json.dumps({'\ud800': 1}).encode()
    with pytest.raises(errors.BadRequest, match='unpaired surrogates'):
        validation._parsed_body(body, SCHEMA)


def test_surrogate_pair_is_one_character():
    body = json.dumps({'name': '\U0001f600'}).encode()
    assert b'\\ud83d\\ude00' in body
    assert validation._parsed_body(body, SCHEMA) == {'name': '\U0001f600'}


def test_body_without_surrogate_sign_is_not_walked(monkeypatch):
    monkeypatch.setattr(validation, '_has_surrogate',
                        lambda data: pytest.fail('walked'))
    assert validation._parsed_body('{"name": "é"}'.encode(), SCHEMA) == {
        'name': 'é'}
