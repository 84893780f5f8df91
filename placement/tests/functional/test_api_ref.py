"""The os-api-ref tables and samples of api-ref/ are what
tools/gen-api-ref.py makes of today's routes, schemas and application."""

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')


def test_generated_api_ref_is_current():
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'tools', 'gen-api-ref.py'),
         '--check'], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (
        'run "python tools/gen-api-ref.py" and commit the result:\n'
        + result.stdout[-4000:] + result.stderr[-2000:])
