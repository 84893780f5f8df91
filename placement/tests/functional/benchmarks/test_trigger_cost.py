"""The trigger-cost benchmark runs end to end on a database server."""

import io
import re

import pytest

from benchmarks import trigger_cost
from placement.tests import fixtures


@pytest.mark.skipif(fixtures.server_url() is None,
                    reason='needs a database server')
def test_a_small_run_reports_both_forms_and_their_log_rows(monkeypatch):
    monkeypatch.setattr(trigger_cost, 'COMPUTES', 2)
    out = io.StringIO()
    assert trigger_cost.main(['--writes', '4', '--rounds', '2'], out) == 0
    text = out.getvalue()
    rows = {label: re.search(
        r'^%s triggers: .*log rows per claim ([\d.]+); '
        r'log rows per delete ([\d.]+)$' % label, text, re.M)
        for label in trigger_cost.FORMS}
    assert all(rows.values()), text
    # Row triggers: three allocation rows and the bump, three deleted.
    assert rows['row'].groups() == ('4.000', '3.000'), text
    expected = (('2.000', '1.000') if fixtures.backend_name() == 'postgresql'
                else ('4.000', '3.000'))
    assert rows['head'].groups() == expected, text
    assert len(re.findall(r'^head / row, ', text, re.M)) == 3, text
