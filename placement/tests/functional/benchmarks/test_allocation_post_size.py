"""The large-POST benchmark runs end to end on a fresh SQLite file."""

import re

from benchmarks import allocation_post_size


def test_reports_status_time_and_statements(capsys):
    assert allocation_post_size.main(['--sizes', '1,30', '--puts', '3']) == 0
    out = capsys.readouterr().out
    rows = re.findall(r'^(POST \d+ consumers|PUT 1 consumer)\s+(\d+)\s+'
                      r'[\d.]+\s+(\d+)$', out, re.M)
    assert re.search(r'^PUT round trips: 3, median [\d.]+ ms', out, re.M)
    assert [(name, status) for name, status, _ in rows] == [
        ('POST 1 consumers', '204'), ('PUT 1 consumer', '204'),
        ('POST 30 consumers', '204'), ('PUT 1 consumer', '204')]
    statements = [int(count) for _, _, count in rows]
    # The second POST reuses the project and user the first created.
    assert 0 < statements[2] <= statements[0]
