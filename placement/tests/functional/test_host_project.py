"""A host project's functional tests with placement in its process
(``host_project``), run from the checkout, plain and under eventlet:
placement answers, and the host's CORS answers, policy decisions,
current request context and other process-wide state are unchanged.

``tools/check-host-project.sh`` runs the same on the installed wheel in a
virtualenv built with OpenStack's constraints (CI).
"""

import os
import subprocess
import sys

import pytest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..',
                                        '..', '..'))


@pytest.mark.parametrize('patching', [(), ('--eventlet',)],
                         ids=['threads', 'eventlet'])
def test_host_project_sees_placement_and_keeps_its_state(tmp_path, patching):
    env = dict(os.environ, PYTHONPATH=CHECKOUT)
    done = subprocess.run(
        [sys.executable, '-W', 'ignore', '-m',
         'placement.tests.functional.host_project', *patching],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.startswith('host project: '), done.stdout
