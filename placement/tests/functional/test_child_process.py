"""A server started by a test process that is killed outright ends too:
nothing is left holding a port or a database after a CI timeout."""

import os
import subprocess
import sys
import time

from placement.tests import gunicorn_server

# The "test process": starts a server, reports its pid, then waits to be
# killed without a chance to stop it.
_STARTER = '''
import sys, time
from placement.tests import gunicorn_server
server = gunicorn_server.GunicornServer(sys.argv[1], sys.argv[2], workers=1)
server.start()
print(server._process.pid, flush=True)
time.sleep(600)
'''


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead: its parent (now init) has not reaped it yet.
    with open('/proc/%d/stat' % pid) as stat:
        return stat.read().rpartition(')')[2].split()[0] != 'Z'


def test_a_server_ends_with_the_killed_process_that_started_it(tmp_path):
    starter = subprocess.Popen(
        [sys.executable, '-c', _STARTER,
         'sqlite:///%s' % (tmp_path / 'placement.sqlite'),
         str(tmp_path / 'gunicorn.log')],
        stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=gunicorn_server.CHECKOUT))
    server = None
    try:
        server = int(starter.stdout.readline())
        assert _alive(server)
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 30
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(server), 'gunicorn outlived the test process'
    finally:
        starter.kill()
        if server is not None and _alive(server):
            os.kill(server, 9)
