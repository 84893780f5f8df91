"""The one-thread request loop against a scripted loopback server."""

import socket
import threading
import time

from benchmarks.toolkit import http_loop

OK = b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s'


def _ok(body, close=False):
    return OK % (len(body), b'Connection: close\r\n' if close else b'',
                 body)


class Server:
    """Answers each request read with the next of ``answers``: bytes
    (sent in pieces of ``piece`` bytes), None (close without answering)
    or a number (seconds to wait before the next answer). Records the
    requests and how many connections it accepted."""

    def __init__(self, answers, piece=None):
        self.answers = list(answers)
        self.piece = piece
        self.requests = []
        self.connections = 0
        self.listener = socket.socket()
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(16)
        self.url = 'http://127.0.0.1:%d/placement' % (
            self.listener.getsockname()[1])
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.answers:
            try:
                conn, _addr = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                self._connection(conn)

    def _connection(self, conn):
        data = b''
        while self.answers:
            while b'\r\n\r\n' not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _sep, data = data.partition(b'\r\n\r\n')
            length = 0
            for line in head.split(b'\r\n')[1:]:
                name, _sep, value = line.partition(b':')
                if name.lower() == b'content-length':
                    length = int(value)
            while len(data) < length:
                data += conn.recv(65536)
            self.requests.append((head, data[:length]))
            data = data[length:]
            answer = self.answers.pop(0)
            while isinstance(answer, (int, float)):
                time.sleep(answer)
                answer = self.answers.pop(0)
            if answer is None:
                return
            step = self.piece or len(answer)
            try:
                for at in range(0, len(answer), step):
                    conn.sendall(answer[at:at + step])
                    if self.piece:
                        time.sleep(0.01)
            except OSError:         # the client gave up
                return
            if b'Connection: close' in answer:
                return

    def close(self):
        self.listener.close()
        self.thread.join(5)


def _run(url, flows, timeout=5):
    """Run ``flows`` to their end; the recorded (endpoint, status, text)."""
    recorded = []

    def record(endpoint, status, seconds, text):
        assert seconds >= 0
        recorded.append((endpoint, status, text))

    loop = http_loop.Loop(url, 'tok', timeout, record)
    try:
        for flow in flows:
            loop.start(flow)
        give_up = time.monotonic() + 10
        while loop.flows and time.monotonic() < give_up:
            loop.poll(0.1)
        assert not loop.flows
    finally:
        loop.close()
    return recorded


def test_a_flow_reads_answers_and_sends_the_next_request():
    server = Server([_ok(b'{"n": 1}'), _ok(b''), b'HTTP/1.1 204 No '
                     b'Content\r\n\r\n', _ok(b'plain', close=True)])
    seen = []

    def flow():
        seen.append((yield http_loop.Request('GET a', 'GET', '/a',
                                             decode=True)))
        seen.append((yield http_loop.Request('PUT b', 'PUT', '/b',
                                             {'x': [1]})))
        seen.append((yield http_loop.Request('DELETE c', 'DELETE', '/c')))
        seen.append((yield http_loop.Request('POST d', 'POST', '/d',
                                             decode=True)))

    recorded = _run(server.url, [flow()])
    server.close()
    assert seen == [(200, {'n': 1}), (200, b''), (204, b''),
                    (200, 'plain')]
    assert [r[:2] for r in recorded] == [
        ('GET a', 200), ('PUT b', 200), ('DELETE c', 204), ('POST d', 200)]
    # Kept alive until the server closed it: one connection.
    assert server.connections == 1
    heads = [head.split(b'\r\n') for head, _body in server.requests]
    assert [lines[0] for lines in heads] == [
        b'GET /placement/a HTTP/1.1', b'PUT /placement/b HTTP/1.1',
        b'DELETE /placement/c HTTP/1.1', b'POST /placement/d HTTP/1.1']
    assert b'X-Auth-Token: tok' in heads[0]
    assert b'OpenStack-API-Version: placement 1.39' in heads[0]
    assert b'Content-Type: application/json' in heads[1]
    assert server.requests[1][1] == b'{"x": [1]}'
    assert b'Content-Length: 0' in heads[3]
    assert not any(line.startswith(b'Content-Length')
                   for line in heads[0] + heads[2])


def test_answers_in_pieces_and_chunked():
    chunked = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
               b'4\r\n{"a"\r\n3\r\n: 2\r\n1\r\n}\r\n0\r\n\r\n')
    server = Server([_ok(b'x' * 300), chunked], piece=7)
    seen = []

    def flow():
        seen.append((yield http_loop.Request('GET a', 'GET', '/a')))
        seen.append((yield http_loop.Request('GET b', 'GET', '/b',
                                             decode=True)))

    _run(server.url, [flow()])
    server.close()
    assert seen == [(200, b'x' * 300), (200, {'a': 2})]


def test_closed_connections_are_not_reused():
    server = Server([_ok(b'1', close=True), _ok(b'2', close=True)])
    seen = []

    def flow():
        for _ in range(2):
            seen.append((yield http_loop.Request('GET a', 'GET', '/a')))

    _run(server.url, [flow()])
    server.close()
    assert seen == [(200, b'1'), (200, b'2')]
    assert server.connections == 2


def test_failures_come_back_without_a_status_and_are_recorded():
    server = Server([None])
    seen = []

    def flow():
        seen.append((yield http_loop.Request('GET a', 'GET', '/a')))

    recorded = _run(server.url, [flow()])
    server.close()
    assert seen[0][0] is None and 'closed before the headers' in seen[0][1]
    assert recorded == [('GET a', None, seen[0][1])]
    # Nobody listening: refused, and the flow goes on.
    seen.clear()
    refused = _run(server.url, [flow(), flow()])
    assert [status for status, _text in seen] == [None, None]
    assert all(text.startswith('ConnectionRefusedError')
               for _endpoint, _status, text in refused)


def test_an_answer_later_than_the_timeout_fails():
    server = Server([3, _ok(b'late')])
    seen = []

    def flow():
        seen.append((yield http_loop.Request('GET a', 'GET', '/a')))

    start = time.monotonic()
    _run(server.url, [flow()], timeout=0.5)
    assert time.monotonic() - start < 2.9
    server.close()
    assert seen[0][0] is None and seen[0][1].startswith('TimeoutError')


def test_concurrent_flows_share_nothing_but_the_loop():
    """Each flow gets its own answers, whatever order they come in."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(16)
    url = 'http://127.0.0.1:%d' % listener.getsockname()[1]

    def serve():
        # Accept three requests, answer them in reverse order.
        conns = []
        for _ in range(3):
            conn, _addr = listener.accept()
            path = conn.recv(65536).split(b' ')[1]
            conns.append((conn, path))
        for conn, path in reversed(conns):
            conn.sendall(_ok(path, close=True))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    seen = {}

    def flow(name):
        seen[name] = yield http_loop.Request('GET', 'GET', '/' + name)

    _run(url, [flow('a'), flow('b'), flow('c')])
    thread.join(5)
    listener.close()
    assert seen == {name: (200, b'/' + name.encode()) for name in 'abc'}


def test_every_answer_of_a_poll_is_closed_before_a_flow_goes_on():
    """A gunicorn sync worker waits for the client's close: answers that
    came in together are all closed before any flow sends again."""
    server = Server([_ok(b'1', close=True), _ok(b'2', close=True)])
    still_open = []
    loop = None

    def record(endpoint, status, seconds, text):
        still_open.append(len(loop._exchanges))

    def flow():
        yield http_loop.Request('GET a', 'GET', '/a')

    loop = http_loop.Loop(server.url, 'tok', 5, record)
    try:
        loop.start(flow())
        loop.start(flow())
        give_up = time.monotonic() + 5
        while len(server.requests) < 2 and time.monotonic() < give_up:
            time.sleep(0.01)
        time.sleep(0.2)         # both answers are in before the poll
        while loop.flows and time.monotonic() < give_up:
            loop.poll(0.1)
    finally:
        loop.close()
        server.close()
    assert still_open == [0, 0]
