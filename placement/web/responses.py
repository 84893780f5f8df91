"""The responses handlers return: JSON, JSON listings and empty bodies,
with the cache headers of microversion 1.15, links and timestamps."""

import calendar
import contextlib
import datetime
import email.utils
import gc

import orjson
import webob

from placement import microversion
from placement.web import negotiation


def href(req, path):
    """A link relative to the server: mount prefix plus ``path``."""
    return req.script_name + path


def location(req, path):
    """An absolute URL for a Location header."""
    return req.host_url + req.script_name + path


def _cache_headers(req, last_modified):
    """[] or the Last-Modified and Cache-Control headers (from 1.15).

    Written as webob's ``last_modified`` and ``cache_control`` setters
    write them (a naive time is UTC; an aware one is read in its own
    zone, as webob does), without their parsing, which costs a
    noticeable share of a small GET.
    """
    if (last_modified is None
            or negotiation.version(req) < microversion.CACHE_HEADERS):
        return []
    return [('Last-Modified', http_date(
                calendar.timegm(last_modified.timetuple()))),
            ('Cache-Control', 'no-cache')]


#: (seconds, text) of the last ``http_date``: most responses of a second
#: carry the same date.
_last_http_date = (None, None)


def http_date(seconds):
    """``email.utils.formatdate(seconds, usegmt=True)``, formatted once
    per second."""
    global _last_http_date
    known, text = _last_http_date
    if known != seconds:
        text = email.utils.formatdate(seconds, usegmt=True)
        _last_http_date = (seconds, text)
    return text


def _response(req, status, body, content_type, headers, last_modified):
    """A webob Response with the headers webob's property setters would
    give it, in their order: Content-Length, Content-Type, ``headers``,
    then the cache headers.

    Built from its header list rather than through the setters (content
    type, charset, length, dates), which parse and rewrite the headers
    and cost most of a small response's building.
    """
    headerlist = [('Content-Length', str(sum(map(len, body))))]
    if content_type:
        headerlist.append(('Content-Type', content_type))
    response = webob.Response(app_iter=body, status=status,
                              headerlist=headerlist)
    if headers:
        response.headers.update(headers)
    response.headerlist.extend(_cache_headers(req, last_modified))
    return response


@contextlib.contextmanager
def collector_paused():
    """Pause Python's cycle collector while building a big response.

    Candidates and summaries are tens of thousands of small dicts and
    lists, which reference counting frees once the body is encoded; a
    collection meanwhile would scan them all, and more than once on a big
    answer. Encode inside
    the block, so that nothing built there outlives it.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def json_response(req, data, status=200, last_modified=None, headers=None):
    """A JSON response; cache headers from 1.15 when ``last_modified``.
    ``data`` is encoded, unless it is bytes (already encoded JSON).

    Responses here are new objects, never the ``req.response`` webob
    keeps in the environ: webob's cached query parameters make the
    environ a reference cycle, and a body hung on it (megabytes for a
    large listing or candidates answer) would outlive the request until
    the cycle collector's next full pass instead of being freed at once.
    """
    # orjson: the candidates body runs to megabytes, which the standard
    # encoder takes tens of milliseconds to write.
    body = data if isinstance(data, bytes) else orjson.dumps(data)
    return _response(req, status, [body], negotiation.JSON, headers,
                     last_modified)


#: Bytes up to which small pieces of a listing are joined into one item
#: of the response body.
LIST_CHUNK = 65536


def json_list_response(req, key, parts, last_modified=None):
    """A JSON response ``{key: [...]}`` whose list members come as
    ``parts``: JSON texts of members, comma separated, without brackets.

    The body is never joined whole (a listing of a large cloud would be
    held twice); consecutive pieces are joined up to ``LIST_CHUNK`` bytes,
    because WSGI servers write every item of a body with its own system
    call, and a small listing would otherwise take three.
    """
    body = []
    pending = [b'{%s:[' % orjson.dumps(key)]
    size = len(pending[0])
    first = True
    for part in parts:
        if not first:
            pending.append(b',')
        first = False
        if size + len(part) > LIST_CHUNK and size:
            body.append(b''.join(pending))
            pending, size = [], 0
        pending.append(part)
        size += len(part)
    pending.append(b']}')
    body.append(b''.join(pending))
    return _response(req, 200, body, negotiation.JSON, None, last_modified)


def empty_response(req, status=204, last_modified=None, headers=None):
    """A bodiless response without Content-Type: no body item at all, so
    that the WSGI server writes none (gunicorn would send zero bytes)."""
    return _response(req, status, [], None, headers, last_modified)


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def newest(timestamps):
    """The latest of some (created_at, updated_at) values, else now."""
    values = [t for t in timestamps if t is not None]
    return max(values) if values else now().replace(tzinfo=None)
