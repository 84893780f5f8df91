"""A compiled first pass over request bodies and query strings.

jsonschema interprets a schema keyword by keyword for every value, which
was most of the time of a large ``POST /allocations`` (5,000 consumers).
fastjsonschema compiles each schema into a Python function that checks a
valid document far faster. Only its "valid" answer is trusted: when it
refuses a document (or cannot compile a schema, or gives up on a deep
one), ``placement.web.validation`` asks jsonschema, whose verdict and
first error are the ones clients see. So a refusal here can never change
a response; ``placement/tests/unit/web/test_fast_validation.py`` checks
that the two never disagree in the other direction on the schemas we
ship.
"""

import fastjsonschema

_FAILED = object()
_COMPILED = {}


def compiled(schema, formats):
    """The compiled check of ``schema`` (a module-level constant, so its
    id is stable while the cache keeps it alive), or None if it cannot
    be compiled; ``formats`` maps format names to predicates and must be
    the same object for every call with the same ``schema``."""
    key = (id(schema), id(formats))
    cached = _COMPILED.get(key)
    if cached is None or cached[0] is not schema:
        try:
            check = fastjsonschema.compile(schema, formats=formats)
        except Exception:  # an unsupported keyword: jsonschema only
            check = _FAILED
        cached = _COMPILED[key] = (schema, check)
    return None if cached[1] is _FAILED else cached[1]


def surely_valid(schema, formats, data):
    """True when the compiled check accepts ``data``; False means
    "ask jsonschema", not "invalid"."""
    check = compiled(schema, formats)
    if check is None:
        return False
    try:
        check(data)
    except fastjsonschema.JsonSchemaException:
        return False
    except RecursionError:
        return False
    return True
