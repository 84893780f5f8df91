"""The overhead benchmark runs end to end."""

from benchmarks import metrics_overhead


def test_small_run_compares_every_path(capsys):
    metrics_overhead.main(['--requests', '3'])
    out = capsys.readouterr().out
    assert out.count('overhead') == 4
    assert 'middleware alone: metrics' in out
