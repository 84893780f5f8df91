"""The candidates benchmark's perfload scenario runs end to end on a
real server: loaded over the API, every provider is a candidate."""

import argparse
import contextlib
import re

from benchmarks import allocation_candidates
from benchmarks.toolkit import perfload
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


def test_the_static_floor_answers_ours_perfload_answer(tmp_path_factory):
    args = argparse.Namespace(providers=3, threads=2, timeout=60.0,
                              token='admin', http_client=False)
    path = perfload.path()
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'static_floor', workers=1) as server, \
            contextlib.ExitStack() as stack:
        ours = allocation_candidates.Server('ours', server.url, 'admin', 60)
        allocation_candidates.load_perfload([ours], args)
        static = allocation_candidates.static_floor(stack, ours, args)
        expected, _seconds = ours.get(path)
        answer, _seconds = static.get(path)
        assert static.label == allocation_candidates.STATIC
        assert (answer.status, answer.body) == (200, expected.body)
        assert b'allocation_requests' in answer.body
        assert static.cpu_seconds() > 0
