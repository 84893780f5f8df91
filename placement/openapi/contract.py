"""What an operation reads and answers, declared beside its handler.

``placement/openapi/document.py`` builds the OpenAPI document from the
route table and these declarations. A declaration names the very schema
constants the handler validates with (a schema, or ``((min_version,
schema), ...)`` choices that ``microversion.choose`` picks from, as the
handler does), so the document cannot drift from the code.
"""

import dataclasses
import typing

from placement import microversion

JSON = 'application/json'


#: A status a version does not answer, among versioned choices.
ABSENT = object()


@dataclasses.dataclass(frozen=True)
class Media:
    """A response body of a given media type: not JSON (Prometheus text,
    HTML), or one of several (a list of Media) a response may carry."""
    media_type: str
    schema: typing.Any = None


@dataclasses.dataclass(frozen=True)
class Contract:
    """One operation's inputs and answers.

    ``responses`` maps a success status to its body: a JSON schema,
    versioned choices (``ABSENT`` where a version does not answer that
    status), a ``Media`` or a list of them, or None (no body). ``errors``
    lists the statuses the operation itself answers with the error
    document, beyond those every operation may answer
    (``openapi.COMMON_ERRORS``).
    """
    responses: dict
    query: typing.Any = None
    body: typing.Any = None
    errors: tuple = ()
    summary: str = ''
    #: Not part of the upstream Placement API.
    extension: bool = False
    #: Served without a token.
    public: bool = False
    #: A token is checked when sent, but not required.
    token_optional: bool = False
    #: The first version of an operation whose handler gates itself
    #: rather than through ``microversion.serves``.
    since: str = None


def describe(responses, **kwargs):
    """Attach a ``Contract`` to a handler (any decorator order works:
    ``functools.wraps`` copies the attribute to wrappers)."""
    def decorator(handler):
        handler.contract = Contract(responses, **kwargs)
        return handler
    return decorator


def of(handler):
    """The handler's Contract, or None if it declares none."""
    return getattr(handler, 'contract', None)


def pick(value, version):
    """The schema of a declared value for ``version``: versioned choices
    are resolved with ``microversion.choose``, like the handlers do (a
    choice may itself be versioned choices)."""
    while isinstance(value, tuple):
        value = microversion.choose(version, value)
    return value
