"""oslo.log set up as configured, with a cheaper ContextFormatter.

Every request writes one log line, and oslo.log's ``ContextFormatter``
was the largest part of its cost: per record it asks the request context
for its logging values twice, builds a local time zone object and parses
its format string again, and reads its format options from the
configuration. ``ContextFormatter`` here is a subclass that writes
exactly the same text
(``placement/tests/unit/observability/test_log_format.py`` compares the
two on the options and records that change the output) while doing each of
those once, reading the options once (none of them is mutable: a running
service never changes them), and formatting a record's timestamps only
once per second of log lines. ``setup`` runs oslo.log's own setup, so
every logging option (``log_file``, ``use_json``, ``debug``,
``log_config_append`` ...) keeps its meaning, and then swaps in the
subclass wherever oslo.log's formatter itself was installed.

With ``log_file``, oslo.log writes through the standard library's
``WatchedFileHandler``, which looks the file up again (``stat``) before
every line to notice log rotation: a system call per request, a third of
writing the line. ``setup`` makes those handlers check at most once a
second (``WatchedFileHandler`` here); see api-ref/behaviour-choices.rst,
'Log rotation'.
"""

import datetime
import logging
from logging import handlers as logging_handlers
import math
import operator
import time

from dateutil import tz
from oslo_context import context as oslo_context
from oslo_log import formatters
from oslo_log import log as oslo_logging

from placement.observability import metrics


class ContextFormatter(formatters.ContextFormatter):
    """oslo.log's ContextFormatter, same output, less work per record."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._prepare()

    @classmethod
    def replacing(cls, formatter):
        """This class's formatter configured as ``formatter`` (an oslo.log
        ContextFormatter) is."""
        new = cls.__new__(cls)
        new.__dict__.update(formatter.__dict__)
        new._prepare()
        return new

    def _prepare(self):
        # The format options, read once rather than through the
        # configuration's attribute lookup per record: oslo.log does not
        # let them change at run time.
        conf = self.conf
        self._context_format = conf.logging_context_format_string
        self._default_format = conf.logging_default_format_string
        self._identity_format = conf.logging_user_identity_format
        self._debug_suffix = conf.logging_debug_format_suffix
        self._instance_format = conf.instance_format
        self._instance_uuid_format = conf.instance_uuid_format
        # (whether the format shows the error summary itself, its
        # PercentStyle) by (request id?, error summary?, DEBUG?): the
        # line's format depends on those alone.
        self._variants = {}
        self._local_zone = tz.tzlocal()
        # The text of the last second seen, for ``asctime`` and
        # ``isotime``: only the fraction changes between records of the
        # same second, and a busy service logs hundreds of them.
        self._asctime_second = (None, None)
        self._isotime_second = (None, None)
        self._line = _line_plan(self._context_format, self._identity_format)
        self._identities = {}

    def format(self, record):
        # The steps and their order are oslo.log's (8.3): the record's own
        # instance first, then the context's values, then the defaults.
        record.project = self.project
        record.version = self.version
        attributes = record.__dict__
        instance = attributes.get('instance')
        instance_uuid = attributes.get('instance_uuid')
        context = attributes.get('context', oslo_context.get_current())
        values = None
        if context:
            values = formatters._dictify_context(context)
            attributes.update(values)
        instance_extra = ''
        if instance:
            try:
                instance_extra = self._instance_format % instance
            except TypeError:
                instance_extra = instance
        elif instance_uuid:
            instance_extra = self._instance_uuid_format % {
                'uuid': instance_uuid}
        elif context:
            for name, option in (('instance', '_instance_format'),
                                 ('instance_uuid', '_instance_uuid_format'),
                                 ('resource_uuid', '_instance_uuid_format')):
                found = getattr(context, name, None)
                if found:
                    instance_extra = getattr(self, option) % {'uuid': found}
                    break
        record.instance = instance_extra
        for key in ('color', 'user_identity', 'resource', 'user_name',
                    'project_name', 'global_request_id'):
            if key not in attributes:
                attributes[key] = ''
        if context:
            record.user_identity = (self._identity_format
                                    % formatters._ReplaceFalseValue(values))
        with_id = bool(attributes.get('request_id'))
        if record.exc_info:
            record.exc_text = self.formatException(record.exc_info,
                                                   record=record)
        summary = formatters._get_error_summary(record)
        key = (with_id, bool(summary), record.levelno == logging.DEBUG)
        variant = self._variants.get(key)
        if variant is None:
            variant = self._variants[key] = self._variant(*key)
        shows_summary, style = variant
        record.error_summary = (summary or '-') if shows_summary else summary
        self._compute_iso_time(record)
        self._style = style
        self._fmt = style._fmt
        try:
            return logging.Formatter.format(self, record)
        except TypeError as err:
            record.msg = ('Error formatting log line msg=%r err=%r'
                          % (record.msg, err)).replace('%', '*')
            return logging.Formatter.format(self, record)

    def line(self, created, msecs, levelname, name, context, msg, args):
        """The text ``format`` gives a record of these values (made by
        ``Logger.makeRecord``, logged above DEBUG and below WARNING, so
        without debug suffix or error summary) while ``context`` is the
        current context: an oslo.context ``RequestContext`` with a
        request id whose logging values are oslo.context's own. None if
        the formats name other values of the record (``format`` is then
        the way) or the message cannot be formatted.

        The same text from the few values the formats name, without
        the context's logging values, the record's defaults and its
        ISO time, which only ``format``'s other uses need.
        """
        plan = self._line
        if plan is None:
            return None
        names, identity_of = plan
        try:
            message = str(msg) % args if args else str(msg)
        except Exception:
            return None
        instance = ''
        for attribute, fmt in (('instance', self._instance_format),
                               ('instance_uuid', self._instance_uuid_format),
                               ('resource_uuid', self._instance_uuid_format)):
            found = _attribute(context, attribute)
            if found:
                instance = fmt % {'uuid': found}
                break
        values = {
            'msecs': msecs, 'process': metrics.process_identifier(),
            'levelname': levelname, 'name': name,
            'global_request_id': context.global_request_id,
            'request_id': context.request_id, 'instance': instance,
            'message': message,
            'user_identity': self._line_identity(identity_of(context))}
        if 'asctime' in names:
            values['asctime'] = self.formatTime(_Created(created, msecs),
                                                self.datefmt)
        return self._context_format % values

    def _line_identity(self, found):
        """oslo.log's user_identity of a context whose to_dict() values
        the identity format names are ``found``: each, '-' if false.
        Texts of str and None values are kept (a service hears from
        few callers)."""
        text = self._identities.get(found)
        if text is None:
            names = self._line[1].names
            text = self._identity_format % {
                name: value or '-' for name, value in zip(names, found)}
            if _KEPT_TYPES.issuperset(map(type, found)):
                if len(self._identities) >= _IDENTITIES_KEPT:
                    self._identities.clear()
                self._identities[found] = text
        return text

    def _variant(self, with_id, with_summary, debug):
        """The line's format, as oslo.log picks and extends it per
        record, with whether it shows the error summary itself."""
        fmt = self._context_format if with_id else self._default_format
        shows_summary = '%(error_summary)s' in fmt
        if with_summary and not shows_summary:
            fmt += ': %(error_summary)s'
        if debug and self._debug_suffix:
            fmt += ' ' + self._debug_suffix
        return shows_summary, logging.PercentStyle(fmt)

    def formatTime(self, record, datefmt=None):
        # ``time.localtime`` floors the timestamp: the text depends on its
        # whole seconds only (datefmt has no fraction; logging adds msecs
        # only without one).
        created = record.created
        if (datefmt is None or created < 0
                or self.converter is not time.localtime):
            return super().formatTime(record, datefmt)
        key = (int(created), datefmt)
        known, text = self._asctime_second
        if known != key:
            text = super().formatTime(record, datefmt)
            self._asctime_second = (key, text)
        return text

    def _compute_iso_time(self, record):
        created = record.created
        # The microseconds as ``datetime.fromtimestamp`` rounds them
        # (half to even, possibly up into the next second), without
        # converting every record to local time: only the whole second
        # decides the date, time and UTC offset (and which of the two
        # repeated hours when clocks go back).
        fraction, whole = math.modf(created)
        micro = round(fraction * 1e6)
        if micro >= 1000000:
            whole += 1
            micro -= 1000000
        if micro <= 0:
            # A whole second (isoformat() then leaves the fraction out),
            # or before 1970.
            record.isotime = self._iso_time_uncached(created)
            return
        second = int(whole)
        known, parts = self._isotime_second
        if known != second:
            text = datetime.datetime.fromtimestamp(second).replace(
                tzinfo=self._local_zone).isoformat()
            parts = (text[:19], text[19:])
            self._isotime_second = (second, parts)
        record.isotime = '%s.%06d%s' % (parts[0], micro, parts[1])

    def _iso_time_uncached(self, created):
        isotime = datetime.datetime.fromtimestamp(created).replace(
            tzinfo=self._local_zone).isoformat()
        if created == int(created):
            # isoformat() leaves out zero microseconds; oslo.log adds them.
            isotime = '%s.000000%s' % (isotime[:-6], isotime[-6:])
        return isotime


#: The values of a record ``ContextFormatter.line`` knows.
_LINE_NAMES = frozenset((
    'asctime', 'msecs', 'process', 'levelname', 'name', 'global_request_id',
    'request_id', 'user_identity', 'instance', 'message'))
#: The names oslo.context's ``to_dict`` gives the identity format, and the
#: context attributes it reads them from.
IDENTITY_ATTRIBUTES = {
    'user': 'user_id', 'project': 'project_id', 'project_id': 'project_id',
    'domain': 'domain_id', 'system_scope': 'system_scope',
    'user_domain': 'user_domain_id', 'project_domain': 'project_domain_id'}


def _line_plan(context_format, identity_format):
    """(names the context format reads, ``_IdentityValues`` of the
    identity format) if ``ContextFormatter.line`` can write lines of
    these formats, else None."""
    names = _names_read(context_format)
    identity = _names_read(identity_format)
    if (names is None or not _LINE_NAMES.issuperset(names)
            or identity is None
            or not set(identity).issubset(IDENTITY_ATTRIBUTES)):
        return None
    return frozenset(names), _IdentityValues(identity)


class _IdentityValues:
    """The tuple of a context's values the identity format names."""

    def __init__(self, names):
        self.names = names
        if not names:
            self._get = lambda context: ()
            return
        getter = operator.attrgetter(*[IDENTITY_ATTRIBUTES[name]
                                       for name in names])
        if len(names) == 1:
            self._get = lambda context: (getter(context),)
        else:
            self._get = getter

    def __call__(self, context):
        return self._get(context)


#: Types of identity values whose text is kept: equal ones read the
#: same, and none changes (not bool and int: True == 1).
_KEPT_TYPES = frozenset((str, type(None)))
#: At most this many identity texts kept, then forgotten.
_IDENTITIES_KEPT = 1024
#: Per context class, whether its attributes are plain instance values
#: (no class attribute of the names ``ContextFormatter.line`` reads
#: with a default, no ``__getattr__``, the standard
#: ``__getattribute__``).
_PLAIN_CLASSES = {}
_DEFAULTED = ('instance', 'instance_uuid', 'resource_uuid')


def _attribute(context, name):
    """``getattr(context, name, None)``, without raising and catching an
    AttributeError for a missing one where the class makes that the
    same as looking in the instance's ``__dict__``."""
    kind = type(context)
    plain = _PLAIN_CLASSES.get(kind)
    if plain is None:
        plain = _PLAIN_CLASSES[kind] = (
            kind.__getattribute__ is object.__getattribute__
            and not hasattr(kind, '__getattr__')
            and not any(hasattr(kind, attribute)
                        for attribute in _DEFAULTED)
            and hasattr(context, '__dict__'))
    if plain:
        return context.__dict__.get(name)
    return getattr(context, name, None)


class _NamesRead(dict):
    """A mapping that notes the keys a ``%`` format reads from it."""

    def __init__(self):
        super().__init__()
        self.read = []

    def __getitem__(self, key):
        self.read.append(key)
        return 0  # formats as %s, %d, %f and the like alike

    def __str__(self):
        # A positional ``%s`` would format the whole mapping.
        raise TypeError('not a mapping format')

    __repr__ = __str__


def _names_read(fmt):
    """The keys the ``%`` format ``fmt`` reads from its mapping, or None
    if it is not a format of names only."""
    names = _NamesRead()
    try:
        fmt % names
    except Exception:
        return None
    return tuple(dict.fromkeys(names.read))


class _Created:
    """What ``formatTime`` reads of a record."""

    __slots__ = ('created', 'msecs')

    def __init__(self, created, msecs):
        self.created = created
        self.msecs = msecs


class WatchedFileHandler(logging_handlers.WatchedFileHandler):
    """The standard library's handler, noticing that its file was moved
    or removed (log rotation) within ``CHECK_EVERY`` seconds rather than
    before every line: lines written in between still go to the file
    rotation moved, none is lost."""

    CHECK_EVERY = 1.0
    #: When the file was last looked up (a monotonic time).
    _checked = float('-inf')

    def emit(self, record):
        self.check_rotation()
        logging.FileHandler.emit(self, record)

    def check_rotation(self):
        """Open the file again if it was moved or removed, at most once
        every ``CHECK_EVERY`` seconds; with the handler's lock held (as
        ``handle`` holds it around ``emit``)."""
        now = time.monotonic()
        if now - self._checked >= self.CHECK_EVERY:
            self._checked = now
            self.reopenIfNeeded()


def _loggers():
    yield logging.getLogger()
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            yield logger


def use_cheaper_handling():
    """Replace every handler's oslo.log ContextFormatter (the one oslo.log
    installs, or one a ``log_config_append`` file names) with
    ``ContextFormatter``, and make every standard ``WatchedFileHandler``
    ours; other formatters and handlers are left alone."""
    for logger in _loggers():
        for handler in logger.handlers:
            if type(handler.formatter) is formatters.ContextFormatter:
                handler.setFormatter(
                    ContextFormatter.replacing(handler.formatter))
            if type(handler) is logging_handlers.WatchedFileHandler:
                # The same object (its stream, lock, level and filters,
                # and its place in logging's list of handlers to close
                # at exit), checking less often: the subclass adds no
                # state but a class default.
                handler.__class__ = WatchedFileHandler


def setup(conf, project='placement'):
    """oslo.log's ``setup`` for ``conf``, then ``use_cheaper_handling``."""
    oslo_logging.setup(conf, project)
    use_cheaper_handling()
