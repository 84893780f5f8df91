"""The process identity prometheus-client's file-backed values use."""

import os

from placement.observability import metrics


def test_a_forked_child_is_told_its_own_pid():
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: report what it believes, and leave
        try:
            os.write(write, str(metrics.process_identifier()).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        told = int(os.read(read, 64))
    finally:
        os.close(read)
        os.waitpid(child, 0)
    assert told == child
    assert metrics.process_identifier() == os.getpid()
