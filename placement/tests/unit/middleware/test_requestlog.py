"""placement.middleware.requestlog: request ids as uuid.uuid4() would
write them."""

import random
import uuid

from placement.middleware import requestlog


def test_request_ids_are_version_4_uuids():
    draw = random.Random(16)
    samples = [b'\x00' * 16, b'\xff' * 16, bytes(range(16))] + [
        draw.randbytes(16) for _ in range(200)]
    for random_bytes in samples:
        found = requestlog.new_request_id(lambda n: random_bytes[:n])
        expected = uuid.UUID(bytes=random_bytes, version=4)
        assert found == 'req-%s' % expected, random_bytes
        assert requestlog._GLOBAL_ID.match(found)


def test_request_ids_differ():
    assert len({requestlog.new_request_id() for _ in range(100)}) == 100


def _logged_call(caplog, headers):
    """The headers the server got and the line logged for an application
    answering with ``headers``."""
    import logging

    def app(environ, start_response):
        start_response('201 Created', list(headers))
        return [b'']

    got = {}

    def start_response(status, response_headers, exc_info=None):
        got['status'], got['headers'] = status, response_headers

    environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/x',
               'REMOTE_ADDR': '10.0.0.1'}
    with caplog.at_level(logging.INFO, logger=requestlog.LOG.name):
        requestlog.RequestLog(app)(environ, start_response)
    line = [r.getMessage() for r in caplog.records
            if r.name == requestlog.LOG.name][-1]
    return got, line, environ[requestlog.ENVIRON_REQUEST_ID]


def test_our_request_id_replaces_the_applications_and_goes_last(caplog):
    got, line, request_id = _logged_call(caplog, [
        ('X-OpenStack-Request-ID', 'theirs'), ('Content-Type', 'a/b'),
        ('x-openstack-request-id', 'again'), ('Vary', 'x')])
    assert got['status'] == '201 Created'
    assert got['headers'] == [('Content-Type', 'a/b'), ('Vary', 'x'),
                              (requestlog.HEADER, request_id)]
    assert ' status: 201 len: - ' in line


def test_the_line_shows_the_first_content_length_in_any_case(caplog):
    got, line, _id = _logged_call(caplog, [
        ('Content-Type', 'a/b'), ('CONTENT-LENGTH', '12'),
        ('Content-Length', '99')])
    assert ' len: 12 ' in line
    assert [h for h in got['headers'] if h[0].lower() == 'content-length'
            ] == [('CONTENT-LENGTH', '12'), ('Content-Length', '99')]


def test_the_record_is_the_one_log_would_make(caplog):
    """The line's record, made without ``LOG.log``, has what ``LOG.log``
    called from ``RequestLog._log`` would give it: handlers and filters
    configured by an operator see no difference."""
    import logging

    _got, _line, _id = _logged_call(caplog, [('Content-Length', '3')])
    made = [r for r in caplog.records if r.name == requestlog.LOG.name][-1]
    expected = logging.LogRecord(
        made.name, logging.INFO, made.pathname, 0, made.msg, (made.args,),
        None, '_log')
    assert made.funcName == '_log'
    assert made.pathname == requestlog.__file__.replace('.pyc', '.py')
    assert made.args == expected.args and isinstance(made.args, dict)
    assert made.getMessage() == expected.getMessage()
    # What a new record holds (formatters add their own attributes to
    # the one logged), but the times and the line.
    compared = set(vars(expected)) - {'created', 'msecs', 'relativeCreated',
                                      'lineno'}
    assert ({k: getattr(made, k) for k in compared}
            == {k: getattr(expected, k) for k in compared})
