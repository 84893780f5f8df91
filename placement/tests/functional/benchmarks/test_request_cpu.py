"""The in-process CPU benchmark measures and profiles every small GET."""

from benchmarks import request_cpu
from benchmarks import small_gets


def test_it_reports_every_path(capsys):
    assert request_cpu.main(['--requests', '3', '--rounds', '1']) == 0
    out = capsys.readouterr().out
    for path in small_gets.PATHS:
        assert 'GET %s' % path[:62] in out
    assert out.count('ms CPU') == len(small_gets.PATHS)


def test_it_profiles_one_path(capsys):
    assert request_cpu.main(['--requests', '3', '--profile',
                             '/resource_providers/%s/traits']) == 0
    out = capsys.readouterr().out
    assert 'function calls' in out
    assert 'list_provider_traits' in out
