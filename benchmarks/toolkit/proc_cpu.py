"""CPU seconds used by a process tree, read from Linux ``/proc``.

A benchmark reads it before and after a load step to report server CPU
per request. The root's ``cutime``/``cstime`` count children that exited
and were reaped (a gunicorn worker restarted, a database backend whose
connection closed), so nothing the tree did during the step is lost.
"""

import os

_TICK = os.sysconf('SC_CLK_TCK') if hasattr(os, 'sysconf') else 100


def _stat(pid):
    """(ppid, utime, stime, cutime, cstime) in ticks, None if gone."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            # "pid (comm) state ppid ..."; comm may contain spaces.
            fields = stat.read().rsplit(')', 1)[1].split()
    except (OSError, ValueError):
        return None
    return (int(fields[1]),) + tuple(int(f) for f in fields[11:15])


def _all_stats():
    found = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat:
                found[int(entry)] = stat
    return found


def tree_seconds(root):
    """CPU seconds of ``root``, its reaped children and its live
    descendants; None when ``root`` does not exist (or no /proc)."""
    stats = _stats_with(root)
    if stats is None:
        return None
    # The root's reaped children, then every live process's own time.
    ticks = stats[root][3] + stats[root][4]
    for pid in _tree(root, stats):
        ticks += stats[pid][1] + stats[pid][2]
    return ticks / _TICK


def _stats_with(root):
    """Every process's stat, None when ``root`` is not among them."""
    try:
        stats = _all_stats()
    except OSError:
        return None
    return stats if root in stats else None


def listener_pid(port, names=('postgres', 'mysqld', 'mariadbd')):
    """The pid of a database server process started with ``port`` on its
    command line (``-p PORT`` or ``--port=PORT``), or None."""
    port = str(port)
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/comm' % entry) as comm:
                if comm.read().strip() not in names:
                    continue
            with open('/proc/%s/cmdline' % entry, 'rb') as cmd:
                args = cmd.read().decode(errors='replace').split('\0')
        except OSError:
            continue
        pairs = zip(args, args[1:])
        if '--port=' + port in args or ('-p', port) in pairs \
                or '-p' + port in args:
            return int(entry)
    return None


def _tree(root, stats):
    """``root`` and its live descendants."""
    children = {}
    for pid, stat in stats.items():
        children.setdefault(stat[0], []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree_exact_seconds(root):
    """CPU seconds of ``root`` and its live descendants, every thread,
    to the nanosecond (``schedstat``); processes and threads that ended
    are not counted. None when ``root`` does not exist."""
    stats = _stats_with(root)
    if stats is None:
        return None
    nanoseconds = 0
    for pid in _tree(root, stats):
        try:
            tasks = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for task in tasks:
            try:
                with open('/proc/%d/task/%s/schedstat' % (pid, task)) as f:
                    nanoseconds += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return nanoseconds / 1e9


def memory_kib(pid):
    """(RSS, PSS) of one process in KiB; PSS shares each page among the
    processes mapping it (forked workers share much), None if unknown."""
    found = {}
    for name, keys in (('status', ('VmRSS:',)),
                       ('smaps_rollup', ('Pss:',))):
        try:
            with open('/proc/%d/%s' % (pid, name)) as f:
                for line in f:
                    if line.startswith(keys):
                        found[line.split(':')[0]] = int(line.split()[1])
        except (OSError, ValueError):
            pass
    return found.get('VmRSS'), found.get('Pss')


def children(pid):
    """Live child pids of ``pid``."""
    try:
        stats = _all_stats()
    except OSError:
        return []
    return sorted(p for p, stat in stats.items() if stat[0] == pid)
