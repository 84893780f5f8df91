"""One log line written without a LogRecord where that is the same line.

Every request writes one line (``placement.middleware.requestlog``), and
the standard way to write it costs a third of a small request's CPU in
the service: a ``LogRecord`` of some twenty attributes, the logger's and
the handler's dispatch, and oslo.log's formatter, which copies the
request context's logging values and an ISO time into the record
whatever its format shows. ``log`` writes the very text of that way
directly, when it can know it: INFO-like levels (no error summary, no
debug suffix), the record factory, logger class and process ids of the
standard library, one handler for the line in all (a ``StreamHandler``,
oslo.log's ``ColorHandler`` or ``log_format.WatchedFileHandler``)
without filters, its formatter ``log_format.ContextFormatter`` with
formats that name only what ``ContextFormatter.line`` knows, and an
oslo.context request context as the current one. Any other
configuration (a ``log_config_append`` file with several handlers,
``use_json``, syslog, filters, custom formats) goes the standard way,
as do failures of the stream, which the handler's ``handleError`` gets
with a real record. ``placement/tests/unit/observability/test_lean_log.py``
compares both ways' text.
"""

import logging
import sys
import time

from oslo_context import context as oslo_context
from oslo_log import handlers as oslo_handlers

from placement.observability import log_format

#: Handlers whose ``emit`` writes ``format(record)`` and a terminator to
#: their stream and flushes it (``ColorHandler`` adds a colour reset).
_STREAM_HANDLERS = frozenset((logging.StreamHandler,
                              oslo_handlers.ColorHandler,
                              log_format.WatchedFileHandler))
_COLOR_RESET = '\033[00m'
_LOGGING_VALUES = oslo_context.RequestContext.get_logging_values
_TO_DICT = oslo_context.RequestContext.to_dict

if sys.version_info >= (3, 13):
    def _created():
        """(created, msecs) as this Python's ``LogRecord`` sets them."""
        now = time.time_ns()
        return now / 1e9, (now % 1_000_000_000) // 1_000_000 + 0.0
elif sys.version_info >= (3, 11):
    def _created():
        now = time.time()
        return now, int((now - int(now)) * 1000) + 0.0
else:
    def _created():
        now = time.time()
        return now, (now - int(now)) * 1000


def log(logger, level, msg, args, pathname, lineno, func):
    """``logger.handle(logger.makeRecord(logger.name, level, pathname,
    lineno, msg, args, None, func))``: the caller has checked that
    ``logger`` is enabled for ``level``."""
    handler = _lone_handler(logger, level)
    if handler is not None:
        context = oslo_context.get_current()
        if _plain(context):
            created, msecs = _created()
            text = handler.formatter.line(
                created, msecs, logging.getLevelName(level), logger.name,
                context, msg, args)
            if text is not None:
                if type(handler) is oslo_handlers.ColorHandler:
                    text += _COLOR_RESET
                _write(handler, text, lambda: logger.makeRecord(
                    logger.name, level, pathname, lineno, msg, args, None,
                    func))
                return
    logger.handle(logger.makeRecord(logger.name, level, pathname, lineno,
                                    msg, args, None, func))


def _lone_handler(logger, level):
    """The one handler a record of ``level`` from ``logger`` reaches, if
    ``log`` can write to it itself; else None."""
    if (not logging.DEBUG < level < logging.WARNING
            or type(logger) is not logging.Logger
            or logger.disabled or logger.filters
            or not logging.logProcesses
            or logging.getLogRecordFactory() is not logging.LogRecord):
        return None
    found = None
    current = logger
    while current:
        for handler in current.handlers:
            if found is not None:
                return None
            found = handler
        current = current.parent if current.propagate else None
    if (found is None or found.filters or level < found.level
            or type(found) not in _STREAM_HANDLERS
            or type(found.formatter) is not log_format.ContextFormatter
            or found.stream is None):
        return None
    return found


def _plain(context):
    """True for a request context whose logging values are
    oslo.context's own, with a request id (the line's format is then
    the context format)."""
    kind = type(context)
    return (isinstance(context, oslo_context.RequestContext)
            and kind.get_logging_values is _LOGGING_VALUES
            and kind.to_dict is _TO_DICT
            and bool(context.request_id))


def _write(handler, text, record):
    """``handler.handle`` of a record ``text`` is the formatting of;
    ``record()`` makes that record for ``handleError``."""
    handler.acquire()
    try:
        if type(handler) is log_format.WatchedFileHandler:
            handler.check_rotation()
        try:
            handler.stream.write(text + handler.terminator)
            handler.flush()
        except RecursionError:
            raise
        except Exception:
            handler.handleError(record())
    finally:
        handler.release()
