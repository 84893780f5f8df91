"""RawClient's response reader, on byte streams cut anywhere."""

import socket
import threading

import pytest

from placement.tests import placement_http


def _recv(data, size):
    """A recv() that hands out ``data`` ``size`` bytes at a time."""
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    return lambda _limit: chunks.pop(0) if chunks else b''


@pytest.mark.parametrize('size', [1, 7, 65536])
def test_content_length_body_and_connection_close(size):
    data = (b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n'
            b'Connection: close\r\n\r\nhello')
    assert placement_http._read_response(_recv(data, size), 'GET') == (
        200, b'hello', False)


@pytest.mark.parametrize('size', [1, 5, 65536])
def test_chunked_body_kept_alive(size):
    data = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
            b'3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n')
    assert placement_http._read_response(_recv(data, size), 'GET') == (
        200, b'abcde', True)


def test_body_until_close_without_length():
    data = b'HTTP/1.0 409 Conflict\r\n\r\n{"errors": []}'
    assert placement_http._read_response(_recv(data, 4), 'PUT') == (
        409, b'{"errors": []}', False)


def test_no_content_has_no_body_to_wait_for():
    data = b'HTTP/1.1 204 No Content\r\n\r\n'
    assert placement_http._read_response(_recv(data, 3), 'DELETE') == (
        204, b'', True)


@pytest.mark.parametrize('data', [
    b'', b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort',
    b'nonsense\r\n\r\n'])
def test_truncated_or_foreign_answers_are_errors(data):
    with pytest.raises(ValueError):
        placement_http._read_response(_recv(data, 65536), 'GET')


def test_fetch_sends_one_request_and_reports_a_dead_server():
    """The bytes on the wire, then a status-less Response once the server
    is gone."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    seen = []

    def serve():
        conn, _addr = listener.accept()
        with conn:
            data = b''
            while not data.endswith(b'{"a": 1}'):
                data += conn.recv(65536)
            seen.append(data)
            conn.sendall(b'HTTP/1.1 201 Created\r\nContent-Length: 2\r\n'
                         b'Connection: close\r\n\r\n{}')

    thread = threading.Thread(target=serve)
    thread.start()
    client = placement_http.RawClient('http://127.0.0.1:%d/p' % port,
                                      token='tok', timeout=5)
    resp = client.fetch('POST', '/x?y=1', {'a': 1})
    thread.join()
    listener.close()
    assert (resp.status, resp.body) == (201, b'{}')
    head, _sep, body = seen[0].partition(b'\r\n\r\n')
    lines = head.split(b'\r\n')
    assert lines[0] == b'POST /p/x?y=1 HTTP/1.1'
    assert set(lines[1:]) == {
        b'Host: 127.0.0.1:%d' % port, b'X-Auth-Token: tok',
        b'Accept: application/json',
        b'OpenStack-API-Version: placement 1.39',
        b'Content-Type: application/json', b'Content-Length: 8'}
    assert body == b'{"a": 1}'
    failed = client.fetch('GET', '/')
    assert failed.status is None
    assert failed.failure_kind == 'ConnectionRefusedError'


def test_empty_body_by_content_length_needs_no_more_reads():
    data = b'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'
    # A recv after the headers would raise: nothing more is read.
    assert placement_http._read_response(_recv(data, 65536), 'PUT') == (
        200, b'', True)


@pytest.mark.parametrize('head,keep', [
    (b'HTTP/1.1 200 OK\r\nCONNECTION:  Close\r\n', False),
    (b'HTTP/1.1 200 OK\r\nX-Connection: close\r\n', True),
    (b'HTTP/1.0 200 OK\r\n', False)])
def test_keep_alive_read_from_the_connection_header_only(head, keep):
    parser = placement_http.ResponseParser('GET')
    data = head + b'Content-Length: 2\r\n\r\n{}'
    # Fed a byte at a time, the answer completes on its last byte.
    done = [parser.feed(data[i:i + 1]) for i in range(len(data))]
    assert done == [False] * (len(data) - 1) + [True]
    assert (parser.status, parser.body, parser.keep) == (200, b'{}', keep)


def test_a_close_ends_only_a_body_without_length():
    parser = placement_http.ResponseParser('GET')
    assert not parser.feed(b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab')
    with pytest.raises(ValueError):
        parser.closed()
    chunked = placement_http.ResponseParser('GET')
    assert not chunked.feed(b'HTTP/1.1 200 OK\r\n'
                            b'Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n')
    with pytest.raises(ValueError):
        chunked.closed()
