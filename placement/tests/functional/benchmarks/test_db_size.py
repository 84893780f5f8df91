"""The database-size benchmark runs end to end on a real server."""

import re

from benchmarks import db_size


def test_a_small_run_reports_every_table_and_the_log(capsys):
    db_size.main(['--ours-only', '--nodes', '3', '--aggregates', '1',
                  '--seconds', '1', '--rate', '3', '--threads', '2'])
    out = capsys.readouterr().out
    for when in ('after loading flat 3', 'after 1 s of write cycles'):
        section = out[out.index(when):]
        for table in ('resource_providers', 'allocations',
                      'provider_change_log'):
            assert re.search(r'^%s +\d+$' % table, section, re.M), out
    logged = re.findall(r'^ours: change log (\d+) rows of (\d+) ever '
                        r'logged', out, re.M)
    assert len(logged) == 2, out
    # Three boot-and-delete cycles logged rows; nothing was pruned yet.
    assert int(logged[1][0]) > int(logged[0][0]) > 0, out
    assert re.search(r'^ours: 3 write cycles', out, re.M), out
