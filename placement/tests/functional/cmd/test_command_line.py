"""The installed commands as operators type them: ``--version``, and one
line rather than a traceback when there is nothing to work on."""

import os
import subprocess
import sys

import pytest

from placement.observability import version

COMMANDS = ('placement-api', 'placement-manage', 'placement-status')


def _run(tmp_path, *argv):
    """Run an installed command from an empty directory, with no
    ``OS_PLACEMENT_*`` variables (``.../bin`` beside this interpreter)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith('OS_')}
    command = os.path.join(os.path.dirname(sys.executable), argv[0])
    return subprocess.run([command, *argv[1:]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize('command', COMMANDS)
def test_version(tmp_path, command):
    done = _run(tmp_path, command, '--version')
    assert (done.returncode, done.stdout.strip()) == (
        0, version.version_string())
    assert done.stdout.strip() != 'unknown'


def test_status_without_a_database_is_one_line_and_fails(tmp_path):
    empty = tmp_path / 'placement.conf'
    empty.write_text('[DEFAULT]\n')
    done = _run(tmp_path, 'placement-status', '--config-file', str(empty),
                'upgrade', 'check')
    assert done.returncode == 255
    assert done.stdout == ''
    assert done.stderr.splitlines() == [
        'placement-status: [placement_database] connection is required '
        '(for example OS_PLACEMENT_DATABASE__CONNECTION=sqlite:////var/lib/'
        'placement/placement.sqlite)']
