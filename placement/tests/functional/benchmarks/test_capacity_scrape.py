"""The scrape benchmark runs end to end on a small fleet."""

from benchmarks import capacity_scrape


def test_small_run_reports_every_page(capsys):
    capacity_scrape.main(['--providers', '20', '--aggregates', '3',
                          '--repeat', '1'])
    out = capsys.readouterr().out
    assert '20 providers loaded' in out
    for name in ('/metrics cold', '/capacity cold', '/metrics cached',
                 '/capacity cached'):
        assert name in out
