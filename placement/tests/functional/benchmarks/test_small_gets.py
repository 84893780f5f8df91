"""The small-GET benchmark runs end to end on a real server."""

import re

from benchmarks import small_gets
from benchmarks.toolkit import small_requests
from placement.tests import gunicorn_server


def test_every_path_with_its_share_of_get_root(tmp_path_factory, capsys):
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'small_gets', workers=1) as server:
        assert small_gets.main(['--url', 'ours=' + server.url,
                                '--requests', '4', '--rounds', '1',
                                '--concurrency', '2']) == 0
    out = capsys.readouterr().out
    lines = re.findall(r'^GET (\S+) +ours +median [\d.]+ ms .* c2 \d+ '
                       r'req/s .* ([\d.]+) of its GET /$', out, re.M)
    assert [path for path, _share in lines] == [
        path[:60] for path in small_requests.PATHS], out
    assert lines[0][1] == '1.00'
