"""Outermost middleware: request id, log context, Accept default, and one
log line per request.
"""

import logging
import os
import re
import sys
import time

from oslo_context import context as oslo_context

from placement import microversion
from placement.observability import lean_log

LOG = logging.getLogger('placement.requestlog')

ENVIRON_REQUEST_ID = 'openstack.request_id'
ENVIRON_GLOBAL_REQUEST_ID = 'openstack.global_request_id'
#: Why the service failed a request (set by the layer that answered it);
#: the request's line then ends with it and is logged as a WARNING.
ENVIRON_FAILURE = 'placement.failure'
HEADER = 'x-openstack-request-id'
_GLOBAL_ID = re.compile(r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-'
                        r'[0-9a-f]{4}-[0-9a-f]{12}$')


class RequestLog:
    """Give every request an id, default its Accept, and log its outcome.

    An incoming ``X-OpenStack-Request-ID`` of the form ``req-<uuid>`` is
    kept only as the global request id (for logs); responses always carry
    the freshly generated local id.

    The request's oslo.context is made current before anything else runs,
    so that lines logged by layers that reject a request early (401, 404,
    406, a bad microversion) name this request, not the one the thread
    served before; the context builder later replaces it with one that
    knows the caller. Once the request is logged, the thread's context
    is the one it had before (none in a server's worker thread; the host
    application's own when placement runs in its process).
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        start = time.monotonic()
        request_id = new_request_id()
        environ[ENVIRON_REQUEST_ID] = request_id
        incoming = environ.get('HTTP_X_OPENSTACK_REQUEST_ID', '')
        if _GLOBAL_ID.match(incoming):
            environ[ENVIRON_GLOBAL_REQUEST_ID] = incoming
        if environ.get('HTTP_ACCEPT', '') in ('', '*/*'):
            environ['HTTP_ACCEPT'] = 'application/json'
        previous = oslo_context.get_current()
        oslo_context.RequestContext(
            request_id=request_id,
            global_request_id=environ.get(ENVIRON_GLOBAL_REQUEST_ID),
            overwrite=True)
        outcome = {}

        def _start_response(status, headers, exc_info=None):
            # One pass: a request id header of the application's is
            # replaced by ours, its first Content-Length is the length.
            kept = []
            length = None
            for header in headers:
                name = header[0].lower()
                if name == HEADER:
                    continue
                if length is None and name == 'content-length':
                    length = header
                kept.append(header)
            kept.append((HEADER, request_id))
            outcome['status'] = status.split(' ', 1)[0]
            outcome['length'] = '-' if length is None else length[1]
            return start_response(status, kept, exc_info)

        try:
            return self.application(environ, _start_response)
        finally:
            try:
                self._log(environ, request_id, outcome, start)
            finally:
                restore_log_context(previous)

    @staticmethod
    def _log(environ, request_id, outcome, start):
        failure = environ.get(ENVIRON_FAILURE)
        level = logging.WARNING if failure else logging.INFO
        if not LOG.isEnabledFor(level):
            return
        path = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
        if environ.get('QUERY_STRING'):
            path += '?' + environ['QUERY_STRING']
        version = environ.get(microversion.ENVIRON_KEY)
        message = ('%(remote)s "%(method)s %(path)s" status: %(status)s '
                   'len: %(length)s microversion: %(version)s '
                   'request_id: %(request_id)s time: %(elapsed).1fms')
        if failure:
            message += ' failure: %(failure)s'
        values = {'remote': environ.get('REMOTE_ADDR', '-'),
                  'method': environ.get('REQUEST_METHOD'), 'path': path,
                  'status': outcome.get('status', '-'),
                  'length': outcome.get('length', '-'),
                  'version': version or '-', 'request_id': request_id,
                  'elapsed': (time.monotonic() - start) * 1000,
                  'failure': failure}
        # LOG.log(level, message, values) without its search of the stack
        # for the caller, which is this frame: the same line, cheaper
        # (lean_log). The frame is never held in a variable: it would
        # refer to itself and, through its callers, keep the response
        # body alive until the next full garbage collection. ``args`` is
        # the mapping itself, as LogRecord makes a 1-tuple of one
        # mapping, without its isinstance check of an abstract class.
        lean_log.log(LOG, level, message, values, _LOG_CODE.co_filename,
                     sys._getframe().f_lineno, _LOG_CODE.co_name)


_LOG_CODE = RequestLog._log.__code__


def new_request_id(random_bytes=os.urandom):
    """``req-`` and a random (version 4) UUID, as ``'req-%s' %
    uuid.uuid4()`` writes it, at a third of its cost."""
    value = bytearray(random_bytes(16))
    value[6] = value[6] & 0x0f | 0x40  # version 4
    value[8] = value[8] & 0x3f | 0x80  # RFC 4122 variant
    text = value.hex()
    return 'req-%s-%s-%s-%s-%s' % (text[:8], text[8:12], text[12:16],
                                   text[16:20], text[20:])


def restore_log_context(previous):
    """Make ``previous`` the thread's current oslo.context again, or
    forget the current one if ``previous`` is None.

    In process (wsgi-intercept, ``placement.direct``) the thread is the
    host application's, which may read its own current context after
    calling us. oslo.context has no public call to forget one; its
    thread-local store keeps it in the attribute ``context``.
    """
    if previous is not None:
        previous.update_store()
        return
    store = getattr(oslo_context, '_request_store', None)
    if store is not None and hasattr(store, 'context'):
        del store.context
