"""The read-statement benchmark runs end to end on a database server."""

import io
import re

import pytest

from benchmarks import read_statements
from placement.tests import fixtures


@pytest.mark.skipif(fixtures.server_url() is None,
                    reason='needs a database server')
def test_a_small_run_reports_every_read():
    out = io.StringIO()
    assert read_statements.main(
        ['--nodes', '30', '--loops', '2', '--rounds', '2', '--explain'],
        out) == 0
    text = out.getvalue()
    held = int(re.search(r'project-0 holds (\d+) of them', text).group(1))
    assert 0 < held < 30, text
    for label in read_statements.reads([], [], None):
        line = re.search(r'^  %s +database CPU [\d.]+ \(.*\), client CPU '
                         % re.escape(label), text, re.M)
        assert line, (label, text)
    if fixtures.backend_name() == 'mysql':
        # The counters are the server's, global: other test processes on
        # the same server add to them, so only their presence is checked
        # here, not how many rows the join read.
        by_type = re.search(r'^  usages by type.*handler reads (.*)$',
                            text, re.M).group(1)
        assert re.search(r'\bnext=\d+', by_type), text
    assert text.count('-- usages') == 2, text
