"""A real HAProxy load balancer in front of several API hosts, for tests
and benchmarks.

The configuration is generated into a directory of the caller's; HAProxy
listens on a free 127.0.0.1 port, balances each request round-robin over
the backends that pass ``GET /healthcheck`` (a request a backend refuses
is redispatched to another), and is stopped by its pid.
"""

import os
import shutil
import subprocess
import time

from placement.tests import child_process
from placement.tests import gunicorn_server
from placement.tests import placement_http

_CONFIG = '''\
global
    maxconn 2000

defaults
    mode http
    option http-server-close
    # A request whose host refuses the connection goes to another one.
    retries 3
    option redispatch 1
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout http-request 30s

frontend placement
    bind 127.0.0.1:%(port)d
    default_backend hosts

backend hosts
    balance roundrobin
    option httpchk GET /healthcheck
    http-check expect status 200
%(servers)s
'''


def installed():
    return shutil.which('haproxy') is not None


class HAProxy:
    """HAProxy on a free port in front of ``backend_urls``
    (``http://127.0.0.1:PORT``). A context manager."""

    def __init__(self, backend_urls, directory):
        self.backends = list(backend_urls)
        self.directory = str(directory)
        self.port = gunicorn_server.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.config_path = os.path.join(self.directory, 'haproxy-%d.cfg'
                                        % self.port)
        self.log_path = self.config_path[:-4] + '.log'
        self._process = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def _config(self):
        servers = '\n'.join(
            '    server host%d %s check inter 1s' % (
                index, url.split('://', 1)[1])
            for index, url in enumerate(self.backends))
        return _CONFIG % {'port': self.port, 'servers': servers}

    def start(self, timeout=30):
        """Start in the foreground (``-db``) and wait until every backend
        is up and a request goes through."""
        with open(self.config_path, 'w') as config:
            config.write(self._config())
        with open(self.log_path, 'ab') as log:
            self._process = subprocess.Popen(
                ['haproxy', '-db', '-f', self.config_path], stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=child_process.end_with_parent)
        deadline = time.monotonic() + timeout
        # Health checks run every second: after a few, all are up.
        while True:
            ready = self._answers()
            if ready:
                return
            if self._process.poll() is not None or (
                    time.monotonic() > deadline):
                self.stop()
                with open(self.log_path, errors='replace') as log:
                    raise RuntimeError('haproxy not ready: %s' % log.read())
            time.sleep(0.3)

    def _answers(self):
        client = placement_http.Client(self.url, timeout=5)
        try:
            # As many as there are backends, each must answer.
            return all(client.request('GET', '/').status == 200
                       for _ in self.backends * 2)
        finally:
            client.close()

    def stop(self, timeout=10):
        if self._process is None or self._process.poll() is not None:
            return
        gunicorn_server.terminate(self._process, timeout)
