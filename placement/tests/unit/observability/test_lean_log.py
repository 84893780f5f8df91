"""placement.observability.lean_log: the line the standard way writes,
whichever way it is written."""

import io
import itertools
import logging
import time

from oslo_context import context as oslo_context
from oslo_log import handlers as oslo_handlers
import pytest

from placement import context as placement_context
from placement.middleware import requestlog
from placement.observability import lean_log
from placement.observability import log_format
from placement.tests.unit.observability import test_log_format

MESSAGE = '%(remote)s "%(method)s %(path)s" status: %(status)s'
ARGS = {'remote': '10.0.0.1', 'method': 'GET', 'path': '/x',
        'status': '200'}
#: 2025-11-24 16:00:00.123456 UTC, and a time whose milliseconds a
#: float subtraction rounds down.
TIMES = (1764000000.123456, 1764000000.9995, 1764000001.0)

CONF_VARIANTS = {
    'defaults': {},
    'custom names the line knows': {
        'logging_context_format_string':
            '%(levelname)s|%(asctime)s,%(msecs)d|%(name)s|%(process)s|'
            '%(request_id)s|%(global_request_id)s|%(user_identity)s|'
            '%(instance)s|%(message)s %%(literal)s',
        'logging_user_identity_format':
            '%(project_id)s/%(user)s@%(user_domain)s %(domain)s',
        'instance_uuid_format': '{%(uuid)s} ',
        'log_date_format': '%d/%m/%Y %H:%M:%S',
    },
    'identity of one name': {'logging_user_identity_format': '<%(user)s>'},
    'identity of no name': {'logging_user_identity_format': 'someone'},
    # Formats naming more than the line knows: the standard way.
    'isotime and colour': {
        'logging_context_format_string':
            '%(isotime)s %(color)s%(message)s',
    },
    'identity with roles': {
        'logging_user_identity_format': '%(user)s %(roles)s',
    },
}


class _ContextWithItsOwnValues(placement_context.RequestContext):
    def get_logging_values(self):
        values = super().get_logging_values()
        values['request_id'] = 'rewritten'
        return values


class _ContextWithInstance(placement_context.RequestContext):
    instance = property(lambda self: 'i-9')


class _ContextAnsweringAnything(oslo_context.RequestContext):
    def __getattr__(self, name):
        return 'x-' + name


def _instance_on_the_object():
    context = oslo_context.RequestContext(request_id='req-7',
                                          overwrite=False)
    context.instance_uuid = 'i-7'
    return context


CONTEXTS = {
    'placement, user and project': lambda: placement_context.RequestContext(
        request_id='req-1', user_id='u', project_id='p', overwrite=False),
    'global id, domains, system scope': lambda: oslo_context.RequestContext(
        request_id='req-2', global_request_id='req-g', user_id='u',
        domain_id='d', user_domain_id='ud', project_domain_id='pd',
        system_scope='all', overwrite=False),
    'resource': lambda: oslo_context.RequestContext(
        request_id='req-3', resource_uuid='r-1', overwrite=False),
    'no identity': lambda: oslo_context.RequestContext(
        request_id='req-4', overwrite=False),
    'instance uuid on the object': _instance_on_the_object,
    'instance of its class': lambda: _ContextWithInstance(
        request_id='req-8', resource_uuid='r-8', overwrite=False),
    'attributes of its own': lambda: _ContextAnsweringAnything(
        request_id='req-9', overwrite=False),
    # The standard way for these.
    'no request id': lambda: _no_request_id(),
    'values of its own': lambda: _ContextWithItsOwnValues(
        request_id='req-5', overwrite=False),
    'none': lambda: None,
}


def _no_request_id():
    context = oslo_context.RequestContext(overwrite=False)
    context.request_id = None
    return context


_FILES = itertools.count()


def _handler(kind, tmp_path):
    if kind == 'stream':
        return logging.StreamHandler(io.StringIO())
    if kind == 'colour':
        return oslo_handlers.ColorHandler(io.StringIO())
    handler = logging.handlers.WatchedFileHandler(
        str(tmp_path / ('%d.log' % next(_FILES))))
    handler.__class__ = log_format.WatchedFileHandler
    return handler


def _written(handler):
    handler.flush()
    if isinstance(handler, logging.FileHandler):
        with open(handler.baseFilename) as f:
            return f.read()
    return handler.stream.getvalue()


@pytest.fixture
def logger():
    """A logger of its own (not propagating to pytest's handlers)."""
    made = logging.getLogger('placement.test.lean')
    made.propagate = False
    made.setLevel(logging.DEBUG)
    yield made
    for handler in list(made.handlers):
        made.removeHandler(handler)
        handler.close()
    made.filters.clear()
    made.propagate = True
    made.setLevel(logging.NOTSET)


@pytest.fixture
def records(logger, monkeypatch):
    """The records the standard way makes (the lean way makes none)."""
    made = []
    make = logger.makeRecord

    def counting(*args, **kwargs):
        record = make(*args, **kwargs)
        made.append(record)
        return record
    monkeypatch.setattr(logger, 'makeRecord', counting)
    return made


def _both_ways(logger, tmp_path, kind, conf, context, level=logging.INFO,
               when=TIMES[0], monkeypatch=None, datefmt=True):
    """(standard text, lean text) of one line, at the time ``when``."""
    monkeypatch.setattr(time, 'time', lambda: when)
    monkeypatch.setattr(time, 'time_ns', lambda: int(when * 1e9))
    texts = []
    for way in ('standard', 'lean'):
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        handler = _handler(kind, tmp_path / way)
        handler.setFormatter(log_format.ContextFormatter(
            config=conf, datefmt=conf.log_date_format if datefmt else None,
            project='placement',
            version='1'))
        logger.addHandler(handler)
        if context is not None:
            context.update_store()
        try:
            if way == 'standard':
                logger.handle(logger.makeRecord(
                    logger.name, level, '/x/y.py', 7, MESSAGE, ARGS, None,
                    'fn'))
            else:
                lean_log.log(logger, level, MESSAGE, ARGS, '/x/y.py', 7,
                             'fn')
        finally:
            requestlog.restore_log_context(None)
        texts.append(_written(handler))
    return texts


@pytest.fixture(autouse=True)
def _ways(tmp_path):
    (tmp_path / 'standard').mkdir()
    (tmp_path / 'lean').mkdir()
    yield
    # oslo.context makes even an overwrite=False context current when
    # none is: none of this module's may outlive its test.
    requestlog.restore_log_context(None)


LEAN_VARIANTS = ('defaults', 'custom names the line knows',
                 'identity of one name', 'identity of no name')
LEAN_CONTEXTS = ('placement, user and project',
                 'global id, domains, system scope', 'resource',
                 'no identity', 'instance uuid on the object',
                 'instance of its class', 'attributes of its own')


@pytest.mark.parametrize('kind', ('stream', 'colour', 'file'))
@pytest.mark.parametrize('variant', sorted(CONF_VARIANTS))
@pytest.mark.parametrize('context', sorted(CONTEXTS))
def test_the_same_text_either_way(logger, records, tmp_path, monkeypatch,
                                  kind, variant, context):
    conf = test_log_format.oslo_log_conf(CONF_VARIANTS[variant])
    for when in TIMES:
        del records[:]
        standard, lean = _both_ways(logger, tmp_path, kind, conf,
                                    CONTEXTS[context](), when=when,
                                    monkeypatch=monkeypatch)
        assert lean == standard
        assert standard.count('\n') == 1
        # Written without a record where it can be, and only there.
        lean_way = variant in LEAN_VARIANTS and context in LEAN_CONTEXTS
        assert len(records) == (1 if lean_way else 2), (variant, context)


def test_the_same_text_without_a_date_format(logger, records, tmp_path,
                                             monkeypatch):
    # logging's own date format then, with the milliseconds.
    for when in TIMES:
        standard, lean = _both_ways(
            logger, tmp_path, 'stream', test_log_format.oslo_log_conf({}),
            CONTEXTS['placement, user and project'](), when=when,
            monkeypatch=monkeypatch, datefmt=False)
        assert lean == standard
    assert len(records) == len(TIMES)


@pytest.mark.parametrize('level', (logging.DEBUG, logging.WARNING))
def test_debug_and_warning_lines_go_the_standard_way(
        logger, records, tmp_path, monkeypatch, level):
    conf = test_log_format.oslo_log_conf({})
    standard, lean = _both_ways(
        logger, tmp_path, 'stream', conf,
        CONTEXTS['placement, user and project'](), level=level,
        monkeypatch=monkeypatch)
    assert lean == standard
    assert len(records) == 2


def test_a_second_handler_or_a_filter_means_the_standard_way(
        logger, records, tmp_path, monkeypatch):
    conf = test_log_format.oslo_log_conf({})
    context = CONTEXTS['placement, user and project']
    standard, lean = _both_ways(logger, tmp_path, 'stream', conf, context(),
                                monkeypatch=monkeypatch)
    assert len(records) == 1
    logger.addFilter(lambda record: True)
    lean_log.log(logger, logging.INFO, MESSAGE, ARGS, '/x/y.py', 7, 'fn')
    assert len(records) == 2
    logger.filters.clear()
    logger.handlers[0].addFilter(lambda record: True)
    lean_log.log(logger, logging.INFO, MESSAGE, ARGS, '/x/y.py', 7, 'fn')
    assert len(records) == 3
    logger.handlers[0].filters.clear()
    logger.addHandler(logging.StreamHandler(io.StringIO()))
    lean_log.log(logger, logging.INFO, MESSAGE, ARGS, '/x/y.py', 7, 'fn')
    assert len(records) == 4


def test_a_failing_stream_goes_to_handle_error_with_the_record(
        logger, monkeypatch):
    class Broken(io.StringIO):
        def write(self, text):
            raise OSError('disk full')

    handler = logging.StreamHandler(Broken())
    handler.setFormatter(log_format.ContextFormatter(config=test_log_format.oslo_log_conf({})))
    got = []
    monkeypatch.setattr(handler, 'handleError', got.append)
    logger.addHandler(handler)
    CONTEXTS['placement, user and project']().update_store()
    try:
        lean_log.log(logger, logging.INFO, MESSAGE, ARGS, '/x/y.py', 7, 'fn')
    finally:
        requestlog.restore_log_context(None)
    (record,) = got
    assert record.getMessage() == MESSAGE % ARGS
    assert (record.pathname, record.lineno, record.funcName) == (
        '/x/y.py', 7, 'fn')


def test_times_are_the_records(monkeypatch):
    for when in TIMES + (1764000000.0005, 1764000000.999999):
        monkeypatch.setattr(time, 'time', lambda: when)
        monkeypatch.setattr(time, 'time_ns', lambda: int(when * 1e9))
        record = logging.LogRecord('x', logging.INFO, 'p', 1, 'm', (), None)
        assert lean_log._created() == (record.created, record.msecs)


def test_the_identity_names_are_oslo_contexts():
    context = oslo_context.RequestContext(
        user_id='u', project_id='p', domain_id='d', user_domain_id='ud',
        project_domain_id='pd', system_scope='all', overwrite=False)
    values = context.to_dict()
    for name, attribute in log_format.IDENTITY_ATTRIBUTES.items():
        assert values[name] == getattr(context, attribute), name


def test_the_request_line_is_written_the_lean_way(monkeypatch, tmp_path):
    """What the service logs per request takes the lean way with
    oslo.log's default configuration."""
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    try:
        log_format.setup(test_log_format.oslo_log_conf(
            {'log_file': str(tmp_path / 'p.log')}))
        made = []
        monkeypatch.setattr(requestlog.LOG, 'makeRecord',
                            lambda *a: made.append(a))

        def app(environ, start_response):
            start_response('200 OK', [('Content-Length', '0')])
            return [b'']
        requestlog.RequestLog(app)(
            {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/x',
             'REMOTE_ADDR': '10.0.0.1'}, lambda *a: None)
        assert made == []
        with open(tmp_path / 'p.log') as f:
            (line,) = f.read().splitlines()
        assert ' INFO placement.requestlog [None req-' in line
        assert '] 10.0.0.1 "GET /x" status: 200 len: 0 ' in line
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
