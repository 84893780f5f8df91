"""Upstream Placement 16.0.0, installed and run as a black box.

The upgrade and rollback tests need the real upstream release on the
same database as ours. It lives in a virtualenv of its own, created on
first use (PyPI access needed, about two minutes) and reused afterwards
in ``$XDG_CACHE_HOME/placement-tests/upstream-16.0.0`` (``~/.cache`` when
unset). ``$PLACEMENT_TEST_UPSTREAM_VENV`` names an existing one instead,
which is used as it is. Upstream is only ever used through its commands
and over HTTP, always from a directory outside any checkout, with no
``PYTHONPATH``, so that it never imports our ``placement`` package.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys

import sqlalchemy as sa

from placement.tests import gunicorn_server

VERSION = '16.0.0'
VENV_ENV = 'PLACEMENT_TEST_UPSTREAM_VENV'
PACKAGES = ('openstack-placement==%s' % VERSION, 'gunicorn',
            'psycopg2-binary', 'PyMySQL')
# Creating the virtualenv must not hang a test run on a slow mirror.
INSTALL_TIMEOUT = 900
_READY = '.placement-tests-ready'
_CHECKOUT = gunicorn_server.CHECKOUT


class Unavailable(Exception):
    """Upstream cannot be installed here; the text says why."""


def venv_path():
    if os.environ.get(VENV_ENV):
        return os.environ[VENV_ENV]
    cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache')
    return os.path.join(cache, 'placement-tests', 'upstream-' + VERSION)


def clean_env(extra=None):
    """The environment for an upstream process: none of our settings."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith('OS_') and key != 'PYTHONPATH'}
    env.update(extra or {})
    return env


def _run(command, cwd, timeout):
    try:
        done = subprocess.run(command, cwd=cwd, env=clean_env(),
                              capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable('%s: %s' % (command[0], exc))
    if done.returncode:
        raise Unavailable('%s failed (%d): %s' % (
            ' '.join(command[:3]), done.returncode,
            (done.stderr or done.stdout)[-1500:]))
    return done.stdout


def _check(venv, cwd):
    """Fail unless the venv imports the released package from itself."""
    if not os.path.exists(os.path.join(venv, 'bin', 'python')):
        raise Unavailable('%s has no bin/python' % venv)
    found = _run([os.path.join(venv, 'bin', 'python'), '-c',
                  'import importlib.metadata, placement\n'
                  'print(importlib.metadata.version("openstack-placement"),'
                  ' placement.__file__)'], cwd, 60).split()
    if found[0] != VERSION or not found[1].startswith(venv + os.sep):
        raise Unavailable('%s does not hold openstack-placement %s: %s'
                          % (venv, VERSION, ' '.join(found)))


def ensure_venv(workdir):
    """The path of a ready upstream virtualenv, creating it if needed.

    ``workdir`` is a directory outside any checkout to run commands in.
    Parallel test processes wait for the one that creates it.
    """
    venv = os.path.abspath(venv_path())
    if os.environ.get(VENV_ENV):
        # Someone else's virtualenv: used as it is, never made or removed.
        _check(venv, workdir)
        return venv
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    with open(venv + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(venv, _READY)):
            try:
                _check(venv, workdir)
                return venv
            except Unavailable:
                pass  # e.g. its Python was upgraded: make it again
        # A half-made one (interrupted run) is started over.
        shutil.rmtree(venv, ignore_errors=True)
        _run(['sh', os.path.join(_CHECKOUT, 'tools', 'make-venv.sh'),
              venv], workdir, INSTALL_TIMEOUT)
        # Few, short retries: without PyPI the test should be skipped
        # quickly, not after pip's default minutes of retrying.
        _run([os.path.join(venv, 'bin', 'pip'), 'install', '-q',
              '--disable-pip-version-check', '--retries', '2',
              '--timeout', '20'] + list(PACKAGES),
             workdir, INSTALL_TIMEOUT)
        _check(venv, workdir)
        open(os.path.join(venv, _READY), 'w').close()
    return venv


def driver_url(url):
    """``url`` with the database driver installed in the upstream venv."""
    parsed = sa.engine.make_url(url)
    drivers = {'postgresql': 'postgresql+psycopg2', 'mysql': 'mysql+pymysql'}
    backend = parsed.get_backend_name()
    if backend in drivers:
        parsed = parsed.set(drivername=drivers[backend])
    return parsed.render_as_string(hide_password=False)


def write_config(path, db_url):
    with open(path, 'w') as conf:
        conf.write('[placement_database]\nconnection = %s\n'
                   % driver_url(db_url))
    return path


def manage(venv, config_file, workdir, *args):
    """Upstream ``placement-manage --config-file F args``: its stdout.

    Raises AssertionError with its output when it exits non-zero.
    """
    command = [os.path.join(venv, 'bin', 'placement-manage'),
               '--config-file', config_file] + list(args)
    done = subprocess.run(command, cwd=workdir, env=clean_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, 'upstream %s: %d\n%s%s' % (
        ' '.join(args), done.returncode, done.stdout, done.stderr)
    return done.stdout


class UpstreamServer(gunicorn_server.GunicornServer):
    """Upstream's WSGI application under its own gunicorn (noauth2).

    It starts in ``workdir`` (gunicorn puts its working directory on
    ``sys.path``) and never migrates the schema itself: the tests run
    ``placement-manage db sync`` explicitly, as the runbook does.
    """

    def __init__(self, venv, db_url, workdir, log_path, workers=1,
                 gunicorn_args=()):
        super().__init__(driver_url(db_url), log_path, workers=workers,
                         gunicorn_args=gunicorn_args)
        self.venv = venv
        self.cwd = workdir

    def start(self, timeout=120):
        """Start and wait until a worker answers.

        Each upstream worker writes the standard traits and resource
        classes it lacks as it boots. Two doing it at once on one SQLite
        file can deadlock; the loser fails to boot and takes the whole
        gunicorn down (a side-by-side benchmark then meets "connection
        refused"). So on SQLite one worker boots first, alone, and the
        workers started after it find nothing left to write; with
        ``--preload`` the master loads the application once, before
        any worker starts, and needs no such boot.
        """
        if (self.workers > 1 and self.db_url.startswith('sqlite')
                and '--preload' not in self.gunicorn_args):
            workers, self.workers = self.workers, 1
            try:
                super().start(timeout)
                self.stop()
            finally:
                self.workers = workers
        super().start(timeout)

    def _command_and_env(self):
        # Upstream's WSGI entry point insists on a placement.conf in
        # OS_PLACEMENT_CONFIG_DIR when that is set.
        config_dir = os.path.join(self.cwd, 'upstream-config')
        os.makedirs(config_dir, exist_ok=True)
        with open(os.path.join(config_dir, 'placement.conf'), 'w') as conf:
            conf.write('[api]\nauth_strategy = noauth2\n'
                       '[placement_database]\nconnection = %s\n'
                       'sync_on_startup = False\n' % self.db_url)
        env = clean_env({'OS_PLACEMENT_CONFIG_DIR': config_dir})
        return [os.path.join(self.venv, 'bin', 'gunicorn'),
                '--workers', str(self.workers),
                '--bind', '127.0.0.1:%d' % self.port,
                *gunicorn_server.no_control_socket(
                    os.path.join(self.venv, 'bin', 'gunicorn')),
                *self.gunicorn_args, gunicorn_server.APPLICATION], env


@contextlib.contextmanager
def serving(server):
    """``server`` started for the block, stopped however it ends."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


def our_command(tool, config_file, *args):
    """Our ``placement-manage`` or ``placement-status`` (``tool``: the
    module in ``placement.cmd``) in a subprocess, as an operator runs it:
    (exit code, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, '-m', 'placement.cmd.' + tool,
         '--config-file', config_file] + list(args),
        env=clean_env({'PYTHONPATH': _CHECKOUT}), cwd=_CHECKOUT,
        capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def our_manage(config_file, *args):
    return our_command('manage', config_file, *args)
