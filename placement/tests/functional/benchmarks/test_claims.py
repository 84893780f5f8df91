"""The claims benchmark runs end to end, both modes, on a real server."""

import io
import re

from benchmarks import claims
from placement.tests import gunicorn_server


def test_both_modes_place_everything_and_check_it(tmp_path_factory):
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'claims_bench', 2) as server:
        out = io.StringIO()
        assert claims.main(['--url', server.url, '--clients', '3',
                            '--providers', '3', '--capacity', '2'],
                           out=out) == 0
        assert server.errors() == ''
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ['claim', 'read-write']
    for line in lines:
        assert re.search(r'placed 6 of 6 in .* 5xx: 0, given up: 0, '
                         r'providers exactly full: True$', line), line
    # One request per claim, whatever the contention.
    assert '1.00 requests per placement' in lines[0]

