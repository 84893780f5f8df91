"""The candidates benchmark's perfload scenario runs end to end on a
real server: loaded over the API, every provider is a candidate."""

import re

from benchmarks import allocation_candidates
from placement.tests import gunicorn_server


def test_perfload_finds_every_provider(tmp_path_factory, capsys):
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'candidates_bench', workers=1) as server:
        allocation_candidates.main([
            '--url', 'ours=' + server.url, '--scenario', 'perfload',
            '--providers', '5', '--requests', '3', '--rounds', '1',
            '--concurrency', '2', '--warm-up', '2', '--threads', '2'])
    out = capsys.readouterr().out
    assert 'perfload-5: loaded 5 providers' in out, out
    assert re.search(r'^perfload-5 limit=1000 +candidates +5 +median +'
                     r'[\d.]+ ms +p90 [\d.]+ .* c2 [\d.]+ req/s$', out,
                     re.M), out
    assert 'WARNING' not in out
