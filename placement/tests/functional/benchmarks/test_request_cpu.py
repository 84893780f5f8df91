"""The in-process CPU benchmark measures and profiles every small GET.

Run as a command, as it is used: it sets up oslo.log for the process,
which must not outlive it in the test runner's.
"""

import os
import subprocess
import sys

from benchmarks.toolkit import small_requests

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def _run(*args):
    env = dict(os.environ, PYTHONPATH=CHECKOUT)
    done = subprocess.run(
        [sys.executable, '-m', 'benchmarks.request_cpu', *args],
        cwd=CHECKOUT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_it_reports_every_path():
    out = _run('--requests', '3', '--rounds', '1')
    for path in small_requests.PATHS:
        assert 'GET %s' % path[:62] in out
    assert out.count('ms CPU') == len(small_requests.PATHS)


def test_it_profiles_one_path():
    out = _run('--requests', '3', '--profile',
               '/resource_providers/%s/traits')
    assert 'function calls' in out
    assert 'list_provider_traits' in out


def test_it_sleeps_between_requests_when_asked():
    out = _run('--requests', '2', '--rounds', '1', '--gap', '1')
    assert out.count('ms CPU') == len(small_requests.PATHS)


def test_it_measures_the_perfload_query_when_asked():
    out = _run('--requests', '2', '--rounds', '1', '--perfload', '3')
    assert 'GET /allocation_candidates?resources=VCPU:1' in out
    assert out.count('ms CPU') == len(small_requests.PATHS) + 1
