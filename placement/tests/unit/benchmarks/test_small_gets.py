"""The small-GET rounds against a scripted loopback server."""

import http.client
import threading

import pytest

from benchmarks import small_gets
from placement.tests.unit.benchmarks.toolkit import test_http_loop

Server = test_http_loop.Server


def _closing_answers(count, body=b'{}'):
    # As gunicorn's sync workers: one answer per connection.
    return [test_http_loop._ok(body, close=True)] * count


def test_concurrent_round_sends_every_request_from_this_thread(monkeypatch):
    server = Server(_closing_answers(7))

    def no_thread(thread):
        raise AssertionError('a client thread was started')

    monkeypatch.setattr(threading.Thread, 'start', no_thread)
    try:
        rate = small_gets.concurrent_round(server.url, '/x', 7, 3)
    finally:
        monkeypatch.undo()
        server.close()
    assert rate > 0
    assert len(server.requests) == 7
    assert {head.split(b'\r\n')[0] for head, _body in server.requests} == {
        b'GET /placement/x HTTP/1.1'}


def test_concurrent_round_fails_on_an_answer_other_than_200():
    server = Server(_closing_answers(1) + [
        b'HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n'
        b'Connection: close\r\n\r\nno'])
    try:
        with pytest.raises(RuntimeError, match="/x -> 404 b'no'"):
            small_gets.concurrent_round(server.url, '/x', 2, 1)
    finally:
        server.close()


def test_one_round_reads_without_http_client(monkeypatch):
    # http.client's header parsing is client CPU taken from the servers.
    server = Server(_closing_answers(3))
    monkeypatch.setattr(http.client, 'HTTPConnection', None)
    try:
        assert small_gets.one_round(server.url, '/x', 3) >= 0
    finally:
        server.close()
    assert len(server.requests) == 3
