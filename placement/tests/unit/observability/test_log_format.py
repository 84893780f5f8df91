"""placement.observability.log_format: the same text as oslo.log's
ContextFormatter, and
every oslo.log setting still in force after ``setup``."""

import copy
from importlib import metadata
import logging
import os
import sys
import time

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_log import formatters
from oslo_log import log as oslo_logging
import pytest

from placement.middleware import requestlog
from placement.observability import log_format

CONF_VARIANTS = {
    'defaults': {},
    'everything in the line': {
        'logging_context_format_string':
            '%(isotime)s %(asctime)s %(levelname)s [%(request_id)s '
            '%(global_request_id)s %(user_identity)s %(user_name)s '
            '%(project_name)s %(project)s %(version)s] %(instance)s'
            '%(resource)s%(color)s%(message)s %(error_summary)s',
        'logging_default_format_string':
            '%(isotime)s %(process)d %(name)s %(instance)s%(message)s',
        'logging_user_identity_format': '%(user)s/%(project)s/%(roles)s',
        'instance_format': '<%(uuid)s> ',
        'instance_uuid_format': '{%(uuid)s} ',
        'logging_debug_format_suffix': '(%(funcName)s %(lineno)d)',
        'log_date_format': '%d/%m/%Y %H:%M:%S',
    },
    'no debug suffix': {'logging_debug_format_suffix': ''},
}


def oslo_log_conf(overrides):
    """Options with oslo.log's registered, ``overrides`` set."""
    conf = cfg.ConfigOpts()
    oslo_logging.register_options(conf)
    conf([], project='placement-test')
    for name, value in overrides.items():
        conf.set_override(name, value)
    return conf


def _record(level=logging.INFO, msg='hello %s', args=('world',),
            exc_info=None, created=1764000000.123456, **extra):
    record = logging.LogRecord('placement.test', level, '/x/y.py', 12, msg,
                               args, exc_info, func='fn')
    record.created = created
    record.msecs = 123.0
    record.__dict__.update(extra)
    return record


@pytest.fixture(autouse=True)
def _no_context_left():
    """oslo.context makes even an overwrite=False context current when
    none is: a test's must not name the lines of the next test in the
    same process."""
    yield
    requestlog.restore_log_context(None)


def _context(**kwargs):
    return oslo_context.RequestContext(
        request_id='req-1', user_id='u', project_id='p',
        roles=['reader', 'member'], overwrite=False, **kwargs)


def _raised(kind):
    try:
        raise kind('boom')
    except kind:
        return sys.exc_info()


RECORDS = {
    'plain': lambda: _record(),
    'context passed': lambda: _record(context=_context()),
    'context with resource': lambda: _record(
        context=_context(resource_uuid='r-1')),
    'dict context': lambda: _record(context={'request_id': 'req-2',
                                             'user': 'someone'}),
    'instance': lambda: _record(context=_context(),
                                instance={'uuid': 'i-1'}),
    'instance string': lambda: _record(instance='i-2 '),
    'instance uuid': lambda: _record(instance_uuid='i-3'),
    'debug': lambda: _record(level=logging.DEBUG, context=_context()),
    'warning with exc_info': lambda: _record(
        level=logging.WARNING, exc_info=_raised(RuntimeError),
        context=_context()),
    'bad arguments': lambda: _record(msg='%d things', args=('x',)),
    'bad format': lambda: _record(msg='%(a)s things', args=({'b': 1},)),
    'whole second': lambda: _record(created=1764000000.0),
}


@pytest.mark.parametrize('variant', sorted(CONF_VARIANTS))
@pytest.mark.parametrize('kind', sorted(RECORDS))
def test_same_text_as_oslo_log(variant, kind):
    conf = oslo_log_conf(CONF_VARIANTS[variant])
    kwargs = {'project': 'placement', 'version': '1.2',
              'datefmt': conf.log_date_format, 'config': conf}
    theirs = formatters.ContextFormatter(**kwargs)
    ours = log_format.ContextFormatter(**kwargs)
    record = RECORDS[kind]()
    expected = _outcome(theirs, record)
    assert _outcome(ours, record) == expected
    # A formatter converted from oslo.log's, as setup does, too.
    converted = log_format.ContextFormatter.replacing(theirs)
    assert _outcome(converted, record) == expected


def _outcome(formatter, record):
    """The text, or the error, of formatting a copy of ``record``."""
    try:
        return formatter.format(copy.copy(record))
    except Exception as exc:
        return type(exc), str(exc)


@pytest.fixture
def local_zone_with_dst():
    """A local time zone whose clocks change (restored afterwards)."""
    previous = os.environ.get('TZ')
    os.environ['TZ'] = 'Europe/Paris'
    time.tzset()
    yield
    if previous is None:
        del os.environ['TZ']
    else:
        os.environ['TZ'] = previous
    time.tzset()


# Around the end of summer time in Paris (2025-10-26 01:00 UTC, local
# 03:00 back to 02:00): the repeated hour, whole seconds, fractions that
# round up to the next second, and runs of records in the same second.
_DST_END = 1761440400


def _timestamps():
    for base in (_DST_END - 3601, _DST_END - 1, _DST_END, _DST_END + 1,
                 _DST_END + 3599, 1764000000):
        for fraction in (0.0, 0.000001, 0.25, 0.5, 0.9999996, 0.9999999):
            yield base + fraction
        yield base + 0.1
        yield base + 0.7
    # The same local time, once in summer and once in winter time.
    yield _DST_END - 0.5
    yield _DST_END + 3599.5


@pytest.mark.parametrize('variant', sorted(CONF_VARIANTS))
def test_same_times_as_oslo_log_second_after_second(variant,
                                                    local_zone_with_dst):
    conf = oslo_log_conf(CONF_VARIANTS[variant])
    kwargs = {'datefmt': conf.log_date_format, 'config': conf}
    theirs = formatters.ContextFormatter(**kwargs)
    ours = log_format.ContextFormatter(**kwargs)
    for created in _timestamps():
        record = _record(created=created, context=_context())
        record.msecs = (created - int(created)) * 1000
        expected = theirs.format(copy.copy(record))
        mine = copy.copy(record)
        assert ours.format(mine) == expected, created
        shown = copy.copy(record)
        theirs.format(shown)
        assert (mine.isotime, mine.asctime) == (
            shown.isotime, shown.asctime), created


def test_same_text_with_the_current_context_and_an_active_exception():
    conf = oslo_log_conf({})
    theirs = formatters.ContextFormatter(config=conf)
    ours = log_format.ContextFormatter(config=conf)
    oslo_context.RequestContext(request_id='req-current', user_id='u',
                                overwrite=True)
    try:
        try:
            raise KeyError('missing')
        except KeyError:
            record = _record(level=logging.ERROR)
            expected = theirs.format(copy.copy(record))
            assert ours.format(copy.copy(record)) == expected
        assert 'req-current' in expected
    finally:
        requestlog.restore_log_context(None)


@pytest.fixture
def root_logging():
    """Put the root logger back as it was after oslo.log's setup."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


def _lines(path):
    with open(path) as f:
        return f.read().splitlines()


def test_setup_writes_to_the_log_file_as_oslo_log_does(root_logging,
                                                       tmp_path):
    log_file = tmp_path / 'placement.log'
    conf = oslo_log_conf({'log_file': str(log_file), 'debug': True})
    log_format.setup(conf)
    (handler,) = root_logging.handlers
    assert type(handler) is log_format.WatchedFileHandler
    assert type(handler.formatter) is log_format.ContextFormatter
    assert root_logging.level == logging.DEBUG  # 'debug' still applies
    logger = logging.getLogger('placement.test')
    line_number = sys._getframe().f_lineno + 1
    logger.debug('a %s line', 'debug')
    (line,) = _lines(log_file)
    assert line.endswith(
        ' %d DEBUG placement.test [-] a debug line %s %s:%d' % (
            os.getpid(), sys._getframe().f_code.co_name,
            __file__, line_number))


def test_a_rotated_log_file_is_noticed_within_a_second(root_logging,
                                                        tmp_path,
                                                        monkeypatch):
    """The file is looked up again at most once a second, not before
    every line: a line written just after rotation still goes to the
    moved file, the first line a second later to a new one."""
    log_file = tmp_path / 'placement.log'
    log_format.setup(oslo_log_conf({'log_file': str(log_file)}))
    clock = [1000.0]
    monkeypatch.setattr(log_format.time, 'monotonic', lambda: clock[0])
    logger = logging.getLogger('placement.test')
    logger.info('before')
    log_file.rename(tmp_path / 'placement.log.1')
    clock[0] += 0.5
    logger.info('just after')
    assert not log_file.exists()
    clock[0] += 0.5
    logger.info('a second after')
    moved = [line.split('[-] ', 1)[1]
             for line in _lines(tmp_path / 'placement.log.1')]
    assert moved == ['before', 'just after']
    assert [line.split('[-] ', 1)[1] for line in _lines(log_file)] == [
        'a second after']


def test_setup_keeps_json_logging(root_logging, tmp_path):
    conf = oslo_log_conf({'log_file': str(tmp_path / 'p.log'),
                          'use_json': True})
    log_format.setup(conf)
    (handler,) = root_logging.handlers
    assert type(handler.formatter) is formatters.JSONFormatter


def test_setup_keeps_a_log_config_file_but_speeds_up_oslo_formatters(
        root_logging, tmp_path):
    config = tmp_path / 'logging.conf'
    fast, plain = tmp_path / 'fast.log', tmp_path / 'plain.log'
    config.write_text('\n'.join([
        '[loggers]', 'keys=root', '',
        '[handlers]', 'keys=fast,plain', '',
        '[formatters]', 'keys=context,simple', '',
        '[logger_root]', 'level=INFO', 'handlers=fast,plain', '',
        '[handler_fast]', 'class=FileHandler', 'formatter=context',
        'args=(%r,)' % str(fast), '',
        '[handler_plain]', 'class=FileHandler', 'formatter=simple',
        'args=(%r,)' % str(plain), '',
        '[formatter_context]',
        'class=oslo_log.formatters.ContextFormatter', '',
        '[formatter_simple]', 'format=%(levelname)s %(message)s', '',
    ]))
    conf = oslo_log_conf({'log_config_append': str(config)})
    log_format.setup(conf)
    kinds = sorted(type(h.formatter).__name__ for h in root_logging.handlers)
    assert kinds == ['ContextFormatter', 'Formatter']
    assert all(type(h.formatter) is not formatters.ContextFormatter
               for h in root_logging.handlers)
    oslo_context.RequestContext(request_id='req-9', overwrite=True)
    try:
        logging.getLogger('placement.test').info('configured %s', 'here')
    finally:
        requestlog.restore_log_context(None)
    for handler in root_logging.handlers:
        handler.flush()
    assert _lines(plain) == ['INFO configured here']
    (line,) = _lines(fast)
    assert ' INFO placement.test [None req-9 ' in line
    assert line.endswith('] configured here')


def test_one_formatter_gives_every_kind_of_line_in_any_order():
    # The format of a line depends on the record (request id, error
    # summary, level); ours keeps each variant once made.
    for variant in sorted(CONF_VARIANTS):
        conf = oslo_log_conf(CONF_VARIANTS[variant])
        kwargs = {'datefmt': conf.log_date_format, 'config': conf}
        theirs = formatters.ContextFormatter(**kwargs)
        ours = log_format.ContextFormatter(**kwargs)
        kinds = sorted(RECORDS)
        for kind in kinds + kinds[::-1]:
            record = RECORDS[kind]()
            assert _outcome(ours, record) == _outcome(theirs, record), (
                variant, kind)


def test_the_options_read_once_cannot_change_at_run_time():
    # ContextFormatter reads these when it is made; oslo.log declares
    # none of them mutable, so mutate_config_files never changes them.
    read_once = {'logging_context_format_string',
                 'logging_default_format_string',
                 'logging_user_identity_format',
                 'logging_debug_format_suffix', 'instance_format',
                 'instance_uuid_format'}
    list_opts = metadata.entry_points(
        group='oslo.config.opts', name='oslo.log')[0].load()
    found = {opt.dest: opt for _group, opts in list_opts() for opt in opts
             if opt.dest in read_once}
    assert set(found) == read_once
    assert not [name for name, opt in found.items() if opt.mutable]
