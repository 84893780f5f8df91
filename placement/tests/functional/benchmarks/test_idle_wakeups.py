"""benchmarks.idle_wakeups measures every server, path and gap, also
with a variant's gunicorn options."""

import re
import subprocess
import sys

from placement.tests import gunicorn_server


def test_every_server_path_and_gap_gets_a_line():
    done = subprocess.run(
        [sys.executable, '-m', 'benchmarks.idle_wakeups', '--gaps', '0,1',
         '--requests', '3', '--rounds', '2', '--workers', '1',
         '--variant', 'rp=--reuse-port'],
        cwd=gunicorn_server.CHECKOUT, capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    expected = [(server, path) for suffix in ('', '-rp')
                for server, path in (('hello', '/'), ('ours', '/'),
                                     ('ours', 'inventories'))
                for server in [server + suffix]]
    for server, path in expected:
        for gap in ('0', '1'):
            pattern = r'^%s +%s +gap +%s ms  [\d.]+ ms CPU/req ' \
                r'\([\d.]+-[\d.]+\)  [\d.]+ switches/req$' % (
                    re.escape(server), re.escape(path), gap)
            assert [line for line in lines if re.match(pattern, line)], (
                pattern, done.stdout)
