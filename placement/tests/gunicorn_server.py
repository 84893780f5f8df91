"""A real multi-process Placement server (gunicorn) for black-box tests.

Only a server with several worker processes can show races between
processes and survive the death of one of them, which in-process apps
cannot.

By default it runs this checkout's ``placement.wsgi.api:application``
with the test virtualenv's gunicorn. ``PLACEMENT_TEST_GUNICORN`` replaces
the command (binary plus extra arguments, e.g.
``/opt/upstream/bin/gunicorn --preload``) to dry-run the same tests
against another Placement installation; the checkout is then kept off its
``PYTHONPATH``. ``PLACEMENT_TEST_PORTS`` (``first-last``) restricts the
ports it may bind, for shared machines.
"""

import contextlib
import functools
import http.client
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import time

from placement.tests import child_process
from placement.tests import fixtures
from placement.tests import placement_http

COMMAND_ENV = 'PLACEMENT_TEST_GUNICORN'
PORTS_ENV = 'PLACEMENT_TEST_PORTS'
APPLICATION = 'placement.wsgi.api:application'
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def free_port():
    """A port nobody listens on (in ``PLACEMENT_TEST_PORTS`` if set)."""
    first, _sep, last = os.environ.get(PORTS_ENV, '0-0').partition('-')
    ports = list(range(int(first), int(last or first) + 1))
    # Parallel test processes should not all try the same port first.
    random.shuffle(ports)
    for port in ports:
        with socket.socket() as sock:
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise RuntimeError('no free port in %s' % os.environ[PORTS_ENV])


def children(pid):
    """Pids of the live processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as stat:
                # "pid (comm) state ppid ..."; comm may contain spaces.
                fields = stat.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != 'Z':
            found.append(int(entry))
    return sorted(found)


def terminate(process, timeout):
    """SIGTERM ``process`` (started with ``start_new_session``), then
    SIGKILL its whole process group if it is not gone in ``timeout``
    seconds."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@functools.lru_cache(maxsize=None)
def no_control_socket(*command):
    """``['--no-control-socket']`` when the gunicorn ``command`` has that
    option (gunicorn 24+), else ``[]``.

    Every such gunicorn otherwise binds the same control socket
    (``~/.gunicorn/gunicorn.ctl``), each new master replacing the last
    one's: servers started side by side, or by several test runs on one
    machine, would answer each other's control commands.
    """
    try:
        done = subprocess.run(list(command) + ['--help'], env=_gunicorn_env(),
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ['--no-control-socket'] if (
        '--no-control-socket' in done.stdout) else []


def _gunicorn_env():
    return {key: value for key, value in os.environ.items()
            if key != 'PYTHONPATH'}


@contextlib.contextmanager
def on_fresh_database(tmp_path_factory, name, workers):
    """A started server on a database of its own, for a module fixture."""
    tmp_path = tmp_path_factory.mktemp('gunicorn')
    db_url = fixtures.fresh_database_url(tmp_path, name)
    with GunicornServer(db_url, tmp_path / 'gunicorn.log',
                        workers=workers) as server:
        yield server


class GunicornServer:
    """gunicorn with ``workers`` processes on ``db_url`` (noauth2).

    It is configured as an operator without a configuration file would
    configure it: ``OS_<GROUP>__<OPTION>`` variables only (``environment``
    adds more), with ``OS_PLACEMENT_CONFIG_DIR`` naming an empty directory
    so that no stray ``placement.conf`` on the machine is read. Use it as
    a context manager, or call ``start`` and ``stop``.
    """

    #: Working directory of gunicorn (None: ours), which it puts on
    #: ``sys.path``: another installation must start outside the checkout.
    cwd = None

    def __init__(self, db_url, log_path, workers=3, environment=None,
                 gunicorn_args=()):
        self.db_url = db_url
        self.gunicorn_args = list(gunicorn_args)
        self.log_path = log_path
        self.workers = workers
        self.environment = environment or {}
        self.port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self._process = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def _command_and_env(self):
        config_dir = os.path.join(os.path.dirname(self.log_path),
                                  'no-config')
        os.makedirs(config_dir, exist_ok=True)
        env = {key: value for key, value in os.environ.items()
               if not key.startswith('OS_')}
        env.update(OS_PLACEMENT_DATABASE__CONNECTION=self.db_url,
                   OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP='True',
                   OS_API__AUTH_STRATEGY='noauth2',
                   OS_PLACEMENT_CONFIG_DIR=config_dir)
        env.update(self.environment)
        custom = os.environ.get(COMMAND_ENV)
        if custom:
            env.pop('PYTHONPATH', None)
            command = shlex.split(custom)
        else:
            env['PYTHONPATH'] = CHECKOUT
            command = [sys.executable, '-m', 'gunicorn']
        return command + [
            '--workers', str(self.workers),
            '--bind', '127.0.0.1:%d' % self.port,
            *no_control_socket(*command),
            *self.gunicorn_args, APPLICATION], env

    def start(self, timeout=120):
        """Start and wait until a worker answers."""
        command, env = self._command_and_env()
        with open(self.log_path, 'ab') as log:
            self._process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=self.cwd,
                preexec_fn=child_process.end_with_parent)
        deadline = time.monotonic() + timeout
        client = placement_http.Client(self.url, timeout=10)
        try:
            while client.request('GET', '/').status != 200:
                if self._process.poll() is not None:
                    raise RuntimeError('gunicorn exited: %s' % self.log())
                if time.monotonic() > deadline:
                    raise RuntimeError('gunicorn not ready: %s' % self.log())
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise
        finally:
            client.close()

    def request(self, method, path, body=None, token='admin', headers=None):
        """(status, headers, decoded JSON or None) of one request on a new
        connection, with any headers (roles, origin) and token (None:
        anonymous)."""
        connection = http.client.HTTPConnection('127.0.0.1', self.port,
                                                timeout=30)
        sent = {'openstack-api-version': 'placement latest'}
        if token:
            sent['x-auth-token'] = token
        if body is not None:
            body = json.dumps(body)
            sent['content-type'] = 'application/json'
        sent.update(headers or {})
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            return (response.status, response.headers,
                    json.loads(data) if data else None)
        finally:
            connection.close()

    def worker_pids(self):
        return children(self._process.pid)

    def wait_for_workers(self, timeout=60):
        """Wait until gunicorn runs ``workers`` workers again."""
        deadline = time.monotonic() + timeout
        while len(self.worker_pids()) < self.workers:
            if time.monotonic() > deadline:
                raise RuntimeError('workers not respawned: %s' % self.log())
            time.sleep(0.2)

    def log(self, tail=4000):
        with open(self.log_path, 'rb') as log:
            return log.read()[-tail:].decode('utf-8', 'replace')

    def errors(self, limit=20):
        """The first error lines of the log, for assertion messages."""
        with open(self.log_path, encoding='utf-8', errors='replace') as log:
            found = [line for line in log
                     if ' ERROR ' in line or ' CRITICAL ' in line
                     or line.startswith('Traceback')]
        return ''.join(found[:limit])

    def stop(self, timeout=30):
        """Graceful stop, then kill the whole process group."""
        if self._process is None or self._process.poll() is not None:
            return
        terminate(self._process, timeout)
