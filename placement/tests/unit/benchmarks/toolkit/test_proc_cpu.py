"""CPU of a process tree from /proc."""

import os
import subprocess
import sys
import time

from benchmarks.toolkit import proc_cpu


def test_counts_the_cpu_of_live_children():
    child = subprocess.Popen([sys.executable, '-c',
                              'import time\nend = time.process_time() + 0.6\n'
                              'while time.process_time() < end: pass\n'
                              'time.sleep(30)'])
    try:
        before = proc_cpu.tree_seconds(os.getpid())
        deadline = time.monotonic() + 20
        while proc_cpu.tree_seconds(child.pid) < 0.5:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert proc_cpu.tree_seconds(os.getpid()) - before >= 0.4
    finally:
        child.kill()
        child.wait()


def test_unknown_process_has_no_figure():
    assert proc_cpu.tree_seconds(2 ** 22 + 12345) is None
    assert proc_cpu.listener_pid(1) is None


def test_exact_seconds_count_every_thread_of_live_children():
    child = subprocess.Popen([sys.executable, '-c',
                              'import threading, time\n'
                              'def spin():\n'
                              '    end = time.thread_time() + 0.3\n'
                              '    while time.thread_time() < end: pass\n'
                              'threading.Thread(target=spin).start()\n'
                              'spin()\n'
                              'time.sleep(30)'])
    try:
        deadline = time.monotonic() + 20
        while proc_cpu.tree_exact_seconds(child.pid) < 0.55:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert child.pid in proc_cpu.children(os.getpid())
        rss, pss = proc_cpu.memory_kib(child.pid)
        assert rss > 1000 and 0 < pss <= rss
    finally:
        child.kill()
        child.wait()
    assert proc_cpu.tree_exact_seconds(child.pid) is None
