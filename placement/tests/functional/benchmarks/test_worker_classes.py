"""benchmarks.worker_classes: one cloud-traffic run over ours under
several gunicorn worker classes."""

import re
import subprocess
import sys

from placement.tests import gunicorn_server


def test_each_worker_class_is_measured_in_one_run():
    done = subprocess.run(
        [sys.executable, '-m', 'benchmarks.worker_classes',
         '--worker', 'sync=', '--worker',
         'threads=--worker-class gthread --threads 2 --keep-alive 5',
         '--workers', '1', '--', '--quick', '--factors', '1',
         '--p99-bound', '60000', '--lag', '60'],
        cwd=gunicorn_server.CHECKOUT, capture_output=True, text=True,
        timeout=300)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr[-3000:]
    assert 'threads: gunicorn --workers 1 --worker-class gthread' in out
    for label in ('sync', 'threads'):
        assert re.search(r'^x1 +%s .* CPU/req server [\d.]+ ms .*sustained$'
                         % label, out, re.M), out
