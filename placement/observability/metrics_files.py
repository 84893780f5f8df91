"""Where worker processes of one server share their metrics.

prometheus-client sums the metrics of several processes from memory-mapped
files in one directory (``PROMETHEUS_MULTIPROC_DIR``). An operator may
name that directory; otherwise every worker of one gunicorn or uwsgi
master finds the same private directory under the system's temporary
directory, named after the master's pid and start time, so that a
restarted server never adds up the counters of its predecessor. Several
workers may start at once: creating the directory tolerates a concurrent
creator, and removing the directories of masters that are gone tolerates
a concurrent remover. A single-process server needs no directory.
"""

import contextlib
import errno
import fcntl
import glob
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time

ENV = 'PROMETHEUS_MULTIPROC_DIR'
_PREFIX = 'placement-metrics-'
_OWN = re.compile(r'^placement-metrics-(\d+)-(\d+)$')
_LIVE_FILE = re.compile(r'^gauge_live\w*_(\d+)\.db$')


class UnsafeDirectory(Exception):
    pass


def _start_time(pid):
    """The start time of ``pid`` in clock ticks since boot, or None."""
    try:
        with open('/proc/%d/stat' % pid) as stat_file:
            return int(stat_file.read().rsplit(')', 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as cmdline:
            return cmdline.read().decode('utf-8', 'replace')
    except OSError:
        return ''


def master_pid():
    """The pid of the prefork master serving this process, or None when
    it serves alone (development server, tests)."""
    uwsgi = sys.modules.get('uwsgi')
    if uwsgi is not None and getattr(uwsgi, 'masterpid', None):
        return uwsgi.masterpid() or None
    if 'gunicorn' not in sys.modules:
        return None
    parent = os.getppid()
    if 'gunicorn' in _cmdline(parent):
        return parent
    # gunicorn --preload: the master itself loads the application and
    # its workers inherit the directory through the environment.
    return os.getpid()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(base):
    """Remove our directories whose master has exited."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        match = _OWN.match(name)
        if not match:
            continue
        pid, started = int(match.group(1)), int(match.group(2))
        path = os.path.join(base, name)
        try:
            if os.lstat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        if _start_time(pid) != started:
            shutil.rmtree(path, ignore_errors=True)


def _check_private(path):
    info = os.lstat(path)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & 0o077):
        raise UnsafeDirectory(
            '%s is not a private directory of this user; refusing to '
            'keep metrics there' % path)


def choose_directory():
    """The shared directory of this process's server, created and
    exported in ``PROMETHEUS_MULTIPROC_DIR``; None for a lone process."""
    given = os.environ.get(ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        return given
    master = master_pid()
    started = _start_time(master) if master else None
    if started is None:
        return None
    base = tempfile.gettempdir()
    _remove_stale(base)
    path = os.path.join(base, '%s%d-%d' % (_PREFIX, master, started))
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    _check_private(path)
    os.environ[ENV] = path
    return path


def forget_dead_processes(path):
    """Drop the live gauges (in-flight requests, open connections) of
    workers that have exited; their counters stay, so that sums never
    go backwards."""
    from prometheus_client import multiprocess
    dead = set()
    for name in os.listdir(path):
        match = _LIVE_FILE.match(name)
        if match and not _alive(int(match.group(1))):
            dead.add(int(match.group(1)))
    for pid in dead:
        multiprocess.mark_process_dead(pid, path)


class MergedFiles:
    """Every process's metrics files of ``path`` summed, as
    prometheus-client's multiprocess collector does, skipping files a
    worker is creating at this very moment: prometheus-client creates a
    file empty and sizes it just after, and reading it in between fails
    the whole exposition (a scrape answered 500)."""

    _HEADER = 8  # bytes: the used-length word and its padding

    def __init__(self, path):
        self.path = path

    def collect(self):
        from prometheus_client import multiprocess
        files = []
        for name in glob.glob(os.path.join(self.path, '*.db')):
            try:
                if os.path.getsize(name) >= self._HEADER:
                    files.append(name)
            except OSError:
                continue  # a dead worker's live gauge, just removed
        return multiprocess.MultiProcessCollector.merge(files, accumulate=True)


class SharedCache:
    """Bytes computed at most once per ``max_age`` seconds by all the
    processes sharing ``directory`` (in memory when it is None): the
    first process to find the value missing or too old computes it
    under a file lock while the others wait, then read its result."""

    def __init__(self, directory, name):
        self.directory = directory
        self.name = name
        self._memory = None
        self._lock = threading.Lock()

    def get(self, compute, max_age, clock=time.time):
        if self.directory is None:
            with self._lock:
                return self._get_in_memory(compute, max_age, clock)
        path = os.path.join(self.directory, self.name + '.cache')
        cached = self._read(path, max_age, clock)
        if cached is not None:
            return cached
        with self._lock, self._locked(path + '.lock'):
            # Another process may have computed it while we waited.
            cached = self._read(path, max_age, clock)
            if cached is not None:
                return cached
            value = compute()
            fd, temporary = tempfile.mkstemp(dir=self.directory,
                                             prefix='.' + self.name)
            with os.fdopen(fd, 'wb') as out:
                out.write(b'%r\n' % clock())
                out.write(value)
            os.replace(temporary, path)
            return value

    def _get_in_memory(self, compute, max_age, clock):
        cached = self._memory
        if cached is not None and clock() - cached[0] < max_age:
            return cached[1]
        value = compute()
        self._memory = (clock(), value)
        return value

    @staticmethod
    def _read(path, max_age, clock):
        try:
            with open(path, 'rb') as cached:
                at = float(cached.readline())
                if clock() - at >= max_age:
                    return None
                return cached.read()
        except (OSError, ValueError):
            return None

    @staticmethod
    @contextlib.contextmanager
    def _locked(path):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    break
                except OSError as exc:
                    if exc.errno != errno.EINTR:
                        raise
            yield
        finally:
            os.close(fd)
