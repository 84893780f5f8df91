"""The compiled first pass (placement.web.fast_validation) against jsonschema.

Only the compiled check's "valid" verdict is used, so it must never
accept what jsonschema refuses; it should also accept what jsonschema
accepts, or valid requests lose the speed-up. Both are checked on every
schema we ship, with documents generated from the schema and then
damaged at random (seeded, so a failure reproduces).
"""

import importlib
import pkgutil
import random
import re
import uuid

import fastjsonschema
import jsonschema
import pytest

from placement import schemas
from placement.schemas import common
from placement.web import fast_validation
from placement.web import validation

_UUID = '7f2e5d1c-1b3a-4c2d-9e8f-0a1b2c3d4e5f'
# Values that sit on the edges of the keywords our schemas use: formats,
# anchored and unanchored patterns, lengths, integers and their look-alikes.
_STRINGS = [
    _UUID, _UUID.upper(), _UUID.replace('-', ''), '{%s}' % _UUID,
    'urn:uuid:' + _UUID, _UUID + '\n', _UUID[:-1] + 'g', 'VCPU', 'vcpu',
    'VCPU\n', 'CUSTOM_FOO', 'CUSTOM_', 'CUSTOM_foo', 'x' * 255, 'x' * 256,
    '', 'none', 'isolate', 'ISOLATE', '1', 'true', 'null', '-', 'é', 'a b',
    '\x00', '1.0', 'in:' + _UUID,
]
_SCALARS = [0, 1, -1, 2, 2 ** 31, 2 ** 63, 1.0, 1.5, -0.0, float('nan'),
            float('inf'), True, False, None]


def _shipped_schemas():
    found = {}
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module('placement.schemas.' + info.name)
        for name, value in vars(module).items():
            if (name.isupper() and isinstance(value, dict)
                    and ('type' in value or 'anyOf' in value)):
                found['%s.%s' % (info.name, name)] = value
    return found


SCHEMAS = _shipped_schemas()


def _keys(schema, rng):
    keys = list(schema.get('properties', {}))
    for pattern in schema.get('patternProperties', {}):
        matching = [s for s in _STRINGS if re.search(pattern, s)]
        keys.extend(rng.sample(matching, min(2, len(matching))))
    if isinstance(schema.get('additionalProperties'), dict):
        # Maps keyed by anything (allocations by provider uuid).
        keys.extend(str(uuid.UUID(int=rng.getrandbits(128)))
                    for _ in range(rng.randint(0, 2)))
    return keys


def _valid_ish(schema, rng, depth=0):
    """A document shaped by ``schema``, mostly valid."""
    if 'anyOf' in schema:
        return _valid_ish(rng.choice(schema['anyOf']), rng, depth)
    kind = schema.get('type', 'object')
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if 'enum' in schema:
        return rng.choice(schema['enum'])
    if kind == 'object' and depth < 6:
        out = {}
        for key in _keys(schema, rng):
            sub = schema.get('properties', {}).get(key)
            if sub is None:
                sub = next((s for p, s in
                            schema.get('patternProperties', {}).items()
                            if re.search(p, key)),
                           schema.get('additionalProperties'))
            out[key] = _valid_ish(sub, rng, depth + 1)
        return out
    if kind == 'array' and depth < 6:
        return [_valid_ish(schema.get('items', {}), rng, depth + 1)
                for _ in range(rng.randint(0, 3))]
    if kind == 'string':
        if schema.get('format') == 'uuid':
            return str(uuid.UUID(int=rng.getrandbits(128)))
        pattern = schema.get('pattern')
        matching = [s for s in _STRINGS
                    if pattern is None or re.search(pattern, s)]
        return rng.choice(matching or _STRINGS)
    if kind in ('integer', 'number'):
        fitting = [n for n in (1, 2, 7, 2 ** 31)
                   if schema.get('minimum', n) <= n
                   <= schema.get('maximum', n)]
        return rng.choice(fitting or [1])
    if kind == 'boolean':
        return rng.choice([True, False])
    return None


def _damaged(doc, rng):
    """``doc`` with one value replaced, a key added or a key dropped."""
    if isinstance(doc, dict) and doc and rng.random() < 0.7:
        key = rng.choice(list(doc))
        roll = rng.random()
        out = dict(doc)
        if roll < 0.2:
            del out[key]
        elif roll < 0.3:
            out[rng.choice(_STRINGS)] = rng.choice(_SCALARS)
        else:
            out[key] = _damaged(doc[key], rng)
        return out
    if isinstance(doc, list) and doc and rng.random() < 0.7:
        out = list(doc)
        if rng.random() < 0.2:
            out.append(out[0])
        else:
            index = rng.randrange(len(out))
            out[index] = _damaged(out[index], rng)
        return out
    return rng.choice(_STRINGS + _SCALARS + [{}, [], {'a': 1}, [1]])


def _ends_a_line(doc):
    """Whether a string in ``doc`` ends in a newline: fastjsonschema
    anchors ``$`` at the very end, so it refuses "VCPU\\n" for
    ``^[A-Z0-9_]+$`` where jsonschema (Python's ``re.search``) accepts
    it. Only a refusal, so jsonschema still decides."""
    if isinstance(doc, str):
        return doc.endswith('\n')
    if isinstance(doc, dict):
        return any(_ends_a_line(k) or _ends_a_line(v)
                   for k, v in doc.items())
    if isinstance(doc, list):
        return any(_ends_a_line(item) for item in doc)
    return False


def _verdicts(schema, doc, query):
    fast = fast_validation.surely_valid(
        schema,
        (validation._FAST_QUERY_FORMATS if query
         else validation._FAST_BODY_FORMATS), doc)
    slow = jsonschema.Draft202012Validator(
        schema,
        format_checker=(validation._QUERY_FORMATS if query
                        else validation._BODY_FORMATS),
    ).is_valid(doc)
    return fast, slow


@pytest.mark.parametrize('name', sorted(SCHEMAS))
def test_every_schema_compiles(name):
    assert fast_validation.compiled(SCHEMAS[name],
                                    validation._FAST_BODY_FORMATS) is not None


@pytest.mark.parametrize('query', [False, True])
@pytest.mark.parametrize('name', sorted(SCHEMAS))
def test_compiled_check_agrees_with_jsonschema(name, query):
    schema = SCHEMAS[name]
    rng = random.Random(name)
    seen = set()
    for attempt in range(300):
        doc = _valid_ish(schema, rng)
        for _ in range(attempt % 3):
            doc = _damaged(doc, rng)
        fast, slow = _verdicts(schema, doc, query)
        assert slow or not fast, ('accepted what jsonschema refuses', doc)
        if not _ends_a_line(doc):
            assert fast == slow, (doc, fast, slow)
        seen.add(slow)
    # Both verdicts were exercised, or the comparison proved little.
    assert seen == {True, False}


@pytest.mark.parametrize('doc', [
    {'VCPU': 1.0}, {'VCPU': True}, {'VCPU': 0}, {'VCPU': 2 ** 70},
    {'VCPU': float('nan')}, {}])
def test_resources_edge_cases_agree(doc):
    fast, slow = _verdicts(SCHEMAS['allocation.RESOURCES'], doc, query=False)
    assert fast == slow


def test_trailing_newline_is_refused_here_and_decided_by_jsonschema():
    schema = common.CONSUMER_TYPE
    assert _verdicts(schema, 'VCPU\n', query=False) == (False, True)
    # So the request is judged as before: jsonschema finds no error.
    assert validation._first_error(schema, 'VCPU\n', query=False) is None


def test_a_schema_that_cannot_compile_leaves_jsonschema_in_charge():
    schema = {'type': 'no-such-type'}
    with pytest.raises(fastjsonschema.JsonSchemaDefinitionException):
        fastjsonschema.compile(schema, formats={})
    assert fast_validation.compiled(schema, {}) is None
    assert fast_validation.surely_valid(schema, {}, {}) is False


def test_deep_document_is_left_to_jsonschema():
    schema = SCHEMAS['allocation.POST_V1_38']
    doc = []
    for _ in range(100000):
        doc = [doc]
    assert fast_validation.surely_valid(schema, validation._FAST_BODY_FORMATS,
                                        {_UUID: doc}) is False
