"""Run the WSGI application under a real gunicorn for tests.

The service is configured exactly as an operator without a
configuration file would: ``OS_<GROUP>__<OPTION>`` environment variables
only (``OS_PLACEMENT_CONFIG_DIR`` names an empty directory so that no
stray ``placement.conf`` on the machine is read).
"""

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..',
                                        '..', '..'))
#: Ports test servers may use (shared machines reserve this range).
PORTS = range(8250, 8260)


def listening_socket():
    """A socket listening on the first free port of PORTS.

    gunicorn inherits it (``--bind fd://N``), so no other process can take
    the port between our choice and the server's start.
    """
    for port in PORTS:
        sock = socket.socket()
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            sock.close()
            continue
        sock.listen(128)
        return sock
    raise RuntimeError('no free port in %s' % PORTS)


class Server:
    """A gunicorn process serving placement on 127.0.0.1."""

    def __init__(self, port, process, log_path):
        self.port = port
        self.process = process
        self.log_path = log_path

    def request(self, method, path, body=None, token='admin', headers=None):
        """(status, headers, decoded JSON or None) of one HTTP request."""
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=30)
        all_headers = {'openstack-api-version': 'placement latest'}
        if token:
            all_headers['x-auth-token'] = token
        if body is not None:
            body = json.dumps(body)
            all_headers['content-type'] = 'application/json'
        all_headers.update(headers or {})
        try:
            conn.request(method, path, body=body, headers=all_headers)
            resp = conn.getresponse()
            data = resp.read()
            return (resp.status, resp.headers,
                    json.loads(data) if data else None)
        finally:
            conn.close()

    def log(self):
        with open(self.log_path, encoding='utf-8', errors='replace') as f:
            return f.read()


def _wait_until_serving(server, deadline):
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError('gunicorn exited:\n' + server.log())
        try:
            if server.request('GET', '/', token=None)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError('gunicorn did not serve in time:\n' + server.log())


@contextlib.contextmanager
def gunicorn(tmp_path, environment, workers=1, timeout=90):
    """Serve placement with ``workers`` processes; stop it afterwards."""
    config_dir = tmp_path / 'no-config'
    config_dir.mkdir(exist_ok=True)
    sock = listening_socket()
    port = sock.getsockname()[1]
    env = {key: value for key, value in os.environ.items()
           if not key.startswith('OS_')}
    env.update({'PYTHONPATH': CHECKOUT,
                'OS_PLACEMENT_CONFIG_DIR': str(config_dir)})
    env.update(environment)
    log_path = tmp_path / ('gunicorn-%d.log' % port)
    with sock, open(log_path, 'w') as log:
        process = subprocess.Popen(
            [sys.executable, '-m', 'gunicorn', '--workers', str(workers),
             '--bind', 'fd://%d' % sock.fileno(), '--graceful-timeout', '5',
             'placement.wsgi.api:application'],
            cwd=str(tmp_path), env=env, stdout=log, stderr=subprocess.STDOUT,
            pass_fds=[sock.fileno()])
    server = Server(port, process, log_path)
    try:
        _wait_until_serving(server, time.monotonic() + timeout)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
