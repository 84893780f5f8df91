"""Client input checked before a handler acts: UUIDs, JSON bodies, query
strings and path values, against the handler's schema."""

import json
import math
import re
import uuid

import jsonschema
from jsonschema import exceptions as jsonschema_exc

from placement.web import errors
from placement.web import fast_validation

_CANONICAL_UUID = re.compile(
    r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
    r'[0-9a-fA-F]{12}$')


# -- identifiers -----------------------------------------------------------

def is_uuid_like(value):
    """True if a standard UUID parser accepts ``value`` (any spelling)."""
    try:
        uuid.UUID(value)
    except (TypeError, ValueError, AttributeError):
        return False
    return True


def normalize_uuid(value):
    """Canonical lowercase dashed form; ValueError if not uuid-like."""
    try:
        return str(uuid.UUID(value))
    except (TypeError, AttributeError):
        raise ValueError(value)


# -- validation ------------------------------------------------------------

_BODY_FORMATS = jsonschema.FormatChecker([])
_QUERY_FORMATS = jsonschema.FormatChecker([])


@_BODY_FORMATS.checks('uuid')
def _body_uuid(value):
    return not isinstance(value, str) or is_uuid_like(value)


@_QUERY_FORMATS.checks('uuid')
def _query_uuid(value):
    return not isinstance(value, str) or bool(_CANONICAL_UUID.match(value))


# The same predicates for the compiled first pass (fast_validation).
_FAST_BODY_FORMATS = {'uuid': _body_uuid}
_FAST_QUERY_FORMATS = {'uuid': _query_uuid}

_VALIDATORS = {}


def _first_error(schema, data, query):
    """The most relevant validation error, or None.

    A compiled check answers first for valid documents; jsonschema
    decides, and words the error, only when it refuses. Validators are
    built once per schema object (schemas are module-level constants);
    the cache keeps the schema alive so its id stays unique.
    """
    if fast_validation.surely_valid(
            schema, _FAST_QUERY_FORMATS if query else _FAST_BODY_FORMATS,
            data):
        return None
    key = (id(schema), query)
    cached = _VALIDATORS.get(key)
    if cached is None or cached[0] is not schema:
        validator = jsonschema.Draft202012Validator(
            schema,
            format_checker=_QUERY_FORMATS if query else _BODY_FORMATS)
        cached = _VALIDATORS[key] = (schema, validator)
    return jsonschema_exc.best_match(cached[1].iter_errors(data))


#: Characters of a rule's value (a pattern, a list of names) quoted.
_RULE_LIMIT = 100
#: Characters of the whole first line of a validation error.
_MESSAGE_LIMIT = 1000


def describe(error):
    """A jsonschema ``error`` in words, bounded whatever the client sent:
    jsonschema's first line (which clients match), with the value it
    quotes cut to ``errors.ECHO_LIMIT`` characters, then the rule and
    where it applies, without the schema and instance dumps of
    ``str(error)`` (see api-ref/behaviour-choices.rst, 'Validation
    errors').
    """
    message = error.message
    quoted = repr(error.instance)
    if len(quoted) > errors.ECHO_LIMIT and quoted in message:
        message = message.replace(quoted, errors.bounded(quoted))
    message = errors.bounded(message, _MESSAGE_LIMIT)
    rule = "Failed validating '%s'" % error.validator
    if not isinstance(error.validator_value, (dict, list)):
        rule += ' (%s)' % errors.bounded(repr(error.validator_value),
                                         _RULE_LIMIT)
    schema_path = list(error.relative_schema_path)[:-1]
    return '%s\n\n%s in %s\n\nOn %s' % (
        message, rule, _index('schema', schema_path),
        _index('instance', error.relative_path))


def _index(name, path):
    """``name['a'][0]``, each key bounded (a key is client input)."""
    return name + ''.join('[%s]' % errors.bounded(repr(key), _RULE_LIMIT)
                          for key in path)


def json_body(req, schema):
    """Parse and validate the JSON request body against ``schema``.

    A body nested deeper than the interpreter's recursion limit cannot be
    parsed, validated or quoted in an error message; it is malformed
    input, not a server error, whichever of those steps gives up (see
    ``api-ref/behaviour-choices.rst``, 'Deeply nested JSON').
    """
    try:
        return _parsed_body(req.body, schema)
    except RecursionError:
        raise errors.BadRequest('Malformed JSON: nested too deeply')


def _non_finite(token):
    """``parse_constant`` of every body: the tokens NaN, Infinity and
    -Infinity, which Python's parser accepts, are no JSON."""
    raise ValueError('%s is not a JSON number' % token)


def _finite_float(text):
    """``parse_float`` of every body: a number too large for a double
    (``1e400``) would become infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError('number %s is out of range' % errors.bounded(text))
    return value


def loads(body):
    """Parse a request body (bytes or str) as strict JSON: finite
    numbers only (see api-ref/behaviour-choices.rst, 'Non-finite
    numbers'). ValueError if it is not JSON."""
    return json.loads(body, parse_constant=_non_finite,
                      parse_float=_finite_float)


def _parsed_body(body, schema):
    try:
        data = loads(body)
    except ValueError as exc:
        raise errors.BadRequest('Malformed JSON: %s' % exc)
    error = _first_error(schema, data, query=False)
    if error is not None:
        raise errors.BadRequest('JSON does not validate: %s'
                                % describe(error))
    if _may_hold_nul(body) and _has_nul(data):
        raise errors.BadRequest(
            'JSON does not validate: strings may not contain the NUL '
            'character (\\u0000)')
    if _may_hold_surrogate(body) and _has_surrogate(data):
        raise errors.BadRequest(
            'JSON does not validate: strings may not contain unpaired '
            'surrogates (\\ud800-\\udfff)')
    return data


def _may_hold_nul(body):
    """False when no parsed string of ``body`` (bytes) can hold NUL,
    sparing large bodies the walk: JSON text cannot carry a raw NUL in a
    string, so in UTF-8 only the ``\\u0000`` escape makes one. UTF-16
    and UTF-32 bodies (which json.loads also reads) hold zero bytes and
    are always walked."""
    return b'\x00' in body or b'\\u0000' in body


#: What a lone surrogate looks like in a UTF-8 body: a ``\\udXXX``
#: escape, or the raw bytes json.loads decodes with 'surrogatepass'.
_SURROGATE_SIGN = re.compile(rb'\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]')


def _may_hold_surrogate(body):
    """False when no parsed string of ``body`` can hold an unpaired
    surrogate (UTF-16 and UTF-32 bodies hold zero bytes and are always
    walked)."""
    return b'\x00' in body or _SURROGATE_SIGN.search(body) is not None


def _has_surrogate(data):
    """True if a string anywhere in ``data`` (keys included) holds an
    unpaired surrogate, which cannot be encoded for any database."""
    if isinstance(data, str):
        try:
            data.encode('utf-8')
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(data, dict):
        return any(_has_surrogate(k) or _has_surrogate(v)
                   for k, v in data.items())
    if isinstance(data, list):
        return any(_has_surrogate(item) for item in data)
    return False


def _has_nul(data):
    """True if a string anywhere in ``data`` (keys included) holds NUL,
    which PostgreSQL cannot store: refused on every database alike."""
    if isinstance(data, str):
        return '\x00' in data
    if isinstance(data, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in data.items())
    if isinstance(data, list):
        return any(_has_nul(item) for item in data)
    return False


def validate_query(req, schema):
    """Validate the query string (last value of each key) and return it.

    Returns the request's decoded query MultiDict, so handlers can still
    see repeated keys.
    """
    try:
        params = req.GET
        flat = dict(params.items())
    except UnicodeDecodeError as exc:
        raise errors.BadRequest('Invalid query string parameters: %s' % exc)
    error = _first_error(schema, flat, query=True)
    if error is not None:
        raise errors.BadRequest('Invalid query string parameters: %s'
                                % describe(error))
    return params


def validate_value(value, schema):
    """Validate a single value (e.g. a path segment) as a body would be.

    Returns the validator's message, or None when ``value`` is valid.
    """
    error = _first_error(schema, value, query=False)
    return None if error is None else describe(error)
