"""Servers the tests start end with the process that started them.

They are stopped by pid when a test finishes, but a test process that is
killed (a CI timeout, SIGKILL) stops nothing: the kernel's parent-death
signal (Linux ``prctl(PR_SET_PDEATHSIG)``) then sends them SIGTERM.
Start servers from the main thread: the signal follows the thread that
forked them. A server that daemonises (PostgreSQL through ``pg_ctl``)
leaves its parent and is out of reach.
"""

import ctypes
import signal

_PR_SET_PDEATHSIG = 1

try:
    # Looked up before any fork: only the call runs in the child.
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def end_with_parent():
    """``preexec_fn`` of a server process: SIGTERM it when its parent
    dies."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
