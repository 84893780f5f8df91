"""The candidates benchmark's side-by-side logic, without any server."""

import argparse
import json

import pytest

from benchmarks import allocation_candidates as bench
from placement.tests import placement_http


def _body(candidates):
    return json.dumps({'allocation_requests': [{}] * candidates,
                       'provider_summaries': {}}).encode()


class _FakeClient:
    """Answers GETs from a list of (status, body bytes or failure,
    seconds) and logs every call as its server label."""

    def __init__(self, label, log, answers):
        self.label, self.log, self.answers = label, log, list(answers)

    def get(self, path, timeout=None):
        self.log.append(self.label)
        status, data, seconds = self.answers.pop(0) if self.answers \
            else (200, _body(3), 0.01)
        if status is None:
            return placement_http.Response(None, failure=data), seconds
        return placement_http.Response(status, data), seconds


class _FakeServer:
    """``cpu``: seconds of server CPU each request adds (None: unread)."""

    def __init__(self, label, log, answers=(), cpu=None):
        self.label, self.log, self.cpu = label, log, cpu
        self.client = _FakeClient(label, log, answers)

    def get(self, path, timeout=None):
        return self.client.get(path, timeout)

    def cpu_seconds(self):
        if self.cpu is None:
            return None
        return 100 + self.cpu * len(self.log)


def _args(**kw):
    values = dict(rounds=3, requests=2, concurrency=1, timeout=60.0,
                  no_load=True, devices=[8, 21], warm_up=0,
                  decode_between=False)
    values.update(kw)
    return argparse.Namespace(**values)


def _result(label, times=(), counts=None, **kw):
    result = bench.Result(label)
    result.times = list(times)
    result.counts = list(counts if counts is not None else [5] * len(times))
    for name, value in kw.items():
        setattr(result, name, value)
    return result


def test_main_defaults_rounds_by_number_of_servers(monkeypatch):
    seen = []
    monkeypatch.setattr(bench, 'run', lambda servers, args: seen.append(
        ([s.label for s in servers], args.rounds)))
    bench.main(['--scenario', 'flat', '--url', 'http://h:1'])
    bench.main(['--scenario', 'flat', '--url', 'a=http://h:1',
                '--url', 'b=http://h:2'])
    bench.main(['--scenario', 'flat', '--url', 'a=http://h:1',
                '--url', 'b=http://h:2', '--rounds', '5'])
    assert seen == [(['h:1'], 1), (['a', 'b'], 3), (['a', 'b'], 5)]


def test_main_rejects_a_bad_url():
    with pytest.raises(SystemExit):
        bench.main(['--url', 'a=http://h:1', '--url', 'a=http://h:2'])


# Interleaving, medians, throughput

def test_rounds_interleave_servers_and_drop_one_that_failed():
    calls = []
    results = [_result('a'), _result('b'), _result('c')]

    def step(result):
        calls.append(result.label)
        if result.label == 'b':
            result.stop('no answer within 1 s', timed_out=1)

    bench.interleave(results, 3, step)
    assert calls == ['a', 'b', 'c', 'a', 'c', 'a', 'c']


def test_median_is_over_all_rounds_concatenated():
    log = []
    ms = [10, 11, 12, 1000, 1001, 1002]    # round 1 fast, rounds 2-3 slow
    server = _FakeServer('a', log, [(200, _body(4), t / 1000) for t in ms])
    result = bench.Result('a', server)
    bench.interleave([result], 3,
                     lambda r: bench.sequential_round(r, '/p', 2, 60))
    assert result.times == pytest.approx(ms)
    assert result.median() == pytest.approx(506)
    assert result.counts == [4] * 6


def test_throughput_sums_requests_and_time_over_rounds():
    result = _result('a', sent=30, elapsed=5.0)
    # 10 in 1 s and 20 in 4 s: 6 req/s, not the mean of 10 and 5.
    assert result.throughput() == pytest.approx(6.0)
    assert _result('b').throughput() is None


def test_timeout_and_other_failures_stop_a_server():
    log = []
    late = _FakeServer('late', log, [(200, _body(1), 0.5),
                                     (None, 'TimeoutError: timed out', 60)])
    broken = _FakeServer('broken', log, [
        (None, 'ConnectionRefusedError: [Errno 111] refused', 0.001)])
    error = _FakeServer('error', log, [
        (500, b'{"errors": [{"detail": "boom"}]}', 0.1)])
    results = [bench.Result(s.label, s) for s in (late, broken, error)]
    bench.interleave(results, 3,
                     lambda r: bench.sequential_round(r, '/p', 2, 60))
    assert log == ['late', 'late', 'broken', 'error']
    late, broken, error = results
    assert late.failure == 'no answer within 60 s'
    assert late.timed_out == 60 and late.times == [500.0]
    assert broken.failure.startswith('no answer after 0.0 s (Connection')
    assert broken.timed_out is None
    assert error.failure.startswith('HTTP 500: ') and 'boom' in error.failure


# Ratios and lines

@pytest.mark.parametrize('ratio, text', [
    (12.34, '12.3x faster'), (1.0, '1.00x faster'), (0.5, '2.00x slower'),
    (1234.5, '1234x faster'), (1 / 150.0, '150x slower')])
def test_faster(ratio, text):
    assert bench.faster(ratio) == text


def test_ratios_say_how_the_first_server_fares():
    ours = _result('ours', [10, 10, 10], sent=100, elapsed=1.0)
    upstream = _result('upstream', [120, 130, 123], sent=10, elapsed=1.0)
    assert bench.compare(ours, upstream, 10) == (
        'ours vs upstream: ours is 12.3x faster (median), '
        '10.0x faster (c10 req/s)')
    assert bench.compare(upstream, ours, 10) == (
        'upstream vs ours: upstream is 12.3x slower (median), '
        '10.0x slower (c10 req/s)')


def test_a_timeout_gives_a_bound_other_failures_no_ratio():
    ours = _result('ours', [20.0])
    late = _result('upstream', failure='no answer within 60 s', timed_out=60)
    assert bench.compare(ours, late, 1) == (
        'ours vs upstream: ours is at least 3000x faster '
        '(median; upstream: no answer within 60 s)')
    assert bench.compare(late, ours, 1) == (
        'upstream vs ours: upstream is at least 3000x slower '
        '(median; upstream: no answer within 60 s)')
    broken = _result('upstream', failure='HTTP 500: x')
    assert bench.compare(ours, broken, 1) == (
        'ours vs upstream: no comparison')


def test_count_mismatches_are_warned_about():
    same = [_result('a', [1, 1], [5, 5]), _result('b', [1], [5])]
    assert bench.count_warnings('flat', same) == []
    differ = [_result('a', [1, 1], [5, 5]), _result('b', [1], [6]),
              _result('c', failure='no answer within 1 s')]
    assert bench.count_warnings('flat', differ) == [
        'WARNING flat: servers return different numbers of candidates: '
        'a 5, b 6']
    wobbly = [_result('a', [1, 1], [5, 6])]
    assert bench.count_warnings('flat', wobbly) == [
        'WARNING flat: a returned 5/6 candidates in different requests']


def test_one_server_prints_the_single_server_line():
    result = _result('h:1', [10.0, 30.0, 20.0], [7, 7, 7],
                     sent=50, elapsed=2.0, bad=1)
    assert bench.report('flat-1000', [result], 10) == [
        'flat-1000                    candidates      7  median    20.00 ms'
        '  p90 30.00 (min 10.00, max 30.0)  c10 25.0 req/s (1 non-200)']


def test_several_servers_print_a_label_column_and_ratios():
    ours = _result('ours', [10.0], [7], sent=20, elapsed=1.0)
    up = _result('upstream', [40.0], [8], sent=10, elapsed=1.0)
    assert bench.report('flat', [ours, up], 10) == [
        'flat                         ours     candidates      7  median'
        '    10.00 ms  p90 10.00 (min 10.00, max 10.0, n 1)  c10 20.0 req/s',
        'flat                         upstream candidates      8  median'
        '    40.00 ms  p90 40.00 (min 40.00, max 40.0, n 1)  c10 10.0 req/s',
        'flat                         ours vs upstream: ours is 4.00x '
        'faster (median), 2.00x faster (c10 req/s)',
        'WARNING flat: servers return different numbers of candidates: '
        'ours 7, upstream 8']


# Whole measurements over fake servers

def test_measure_alternates_servers_round_by_round(capsys):
    log = []
    servers = [_FakeServer('ours', log), _FakeServer('upstream', log)]
    results = bench.measure(servers, 'q', 'a=b', _args(concurrency=2))
    seq = ['ours'] * 2 + ['upstream'] * 2
    conc = ['ours'] * 2 + ['upstream'] * 2   # c2 x max(1, 2 // 4) each
    assert log == seq * 3 + conc * 3
    assert [len(r.times) for r in results] == [6, 6]
    assert [r.sent for r in results] == [6, 6]
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and 'ours vs upstream: ours is' in out[2]


def test_wide_does_not_wait_again_for_a_server_that_timed_out(capsys):
    log = []
    ours = _FakeServer('ours', log)
    upstream = _FakeServer('upstream', log, [
        (None, 'TimeoutError: timed out', 60)])
    bench.wide([ours, upstream], _args())
    assert log == ['ours', 'upstream', 'ours', 'ours'] + ['ours'] * 3
    out = capsys.readouterr().out
    assert 'upstream no answer within 60 s' in out
    assert 'upstream skipped: no answer for wide-8 within 60 s' in out


def test_claim_between_claims_the_first_candidate_before_each_request():
    log = []
    first = {'allocations': {'rp1': {'resources': {'VCPU': 1}}},
             'mappings': {'': ['rp1']}}
    answer = json.dumps({'allocation_requests': [first, {}],
                         'provider_summaries': {}}).encode()
    server = _FakeServer('a', log, [(200, answer, 0.01)] * 3)
    writes = []
    server.client.write = lambda method, path, body, ok: writes.append(
        (method, path.split('/')[1], body, ok))
    result = bench.Result('a', server)
    bench.sequential_round(result, '/p', 3, 60, claim=True)
    assert len(result.times) == 3 and log == ['a'] * 3
    assert len(writes) == 2       # none before the first request
    method, collection, body, ok = writes[0]
    assert (method, collection, ok) == ('PUT', 'allocations', (204,))
    assert body['allocations'] == first['allocations']
    assert body['mappings'] == first['mappings']
    assert body['consumer_generation'] is None
    assert body['consumer_type'] == 'INSTANCE'


# Server CPU per request, the perfload scenario, --side-by-side

def test_server_cpu_per_request_is_read_around_each_whole_round():
    log = []
    ours = _FakeServer('ours', log, cpu=0.002)
    up = _FakeServer('upstream', log, cpu=0.05)
    results = [bench.Result(s.label, s) for s in (ours, up)]
    for result in results:
        bench.sequential_round(result, '/p', 4, 60)
    assert [r.cpu_requests for r in results] == [4, 4]
    assert results[0].cpu_ms() == pytest.approx(2.0)
    assert results[1].cpu_ms() == pytest.approx(50.0)
    lines = bench.report('q', results, 1)
    assert 'cpu 2.00 ms/req' in lines[0]
    assert '25.0x faster (server CPU per request)' in lines[2]


@pytest.mark.parametrize('decode_between', [False, True])
def test_answers_are_decoded_after_the_round_unless_asked(
        monkeypatch, decode_between):
    events = []
    server = _FakeServer('a', events, [(200, _body(n), 0.01)
                                       for n in (2, 3, 4)], cpu=0.001)
    decode = bench.placement_http.decode
    monkeypatch.setattr(bench.placement_http, 'decode', lambda body: (
        events.append('decode'), decode(body))[1])
    result = bench.Result('a', server)
    bench.sequential_round(result, '/p', 3, 60,
                           decode_between=decode_between)
    assert result.counts == [2, 3, 4] and len(result.times) == 3
    if decode_between:
        assert events == ['a', 'decode'] * 3
    else:
        # No client work between two of the server's requests.
        assert events == ['a'] * 3 + ['decode'] * 3


def test_no_cpu_figure_for_a_round_that_failed_or_claimed_or_unread():
    log = []
    broken = _FakeServer('broken', log, [(200, _body(1), 0.01),
                                         (None, 'refused', 0.0)], cpu=0.01)
    result = bench.Result('broken', broken)
    bench.sequential_round(result, '/p', 3, 60)
    assert result.cpu_requests == 0 and result.cpu_ms() is None
    unread = bench.Result('u', _FakeServer('u', log))
    bench.sequential_round(unread, '/p', 2, 60)
    assert unread.cpu_ms() is None and len(unread.times) == 2
    claimer = _FakeServer('c', log, cpu=0.01)
    claimer.client.write = lambda *a, **kw: None
    claimed = bench.Result('c', claimer)
    bench.sequential_round(claimed, '/p', 2, 60, claim=True)
    assert claimed.cpu_ms() is None


def test_perfload_asks_for_every_provider_up_to_the_limit(capsys):
    log, paths = [], []
    server = _FakeServer('ours', log)
    get = server.client.get
    server.client.get = lambda path, timeout=None: (
        paths.append(path), get(path, timeout))[1]
    bench.perfload([server], _args(providers=1000, rounds=1))
    query = paths[0].split('?', 1)[1].split('&')
    assert query[0] == 'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256'
    assert 'required=HW_CPU_X86_AVX2' in query and 'limit=1000' in query
    assert 'member_of=%s' % bench.cloud_api.ident('perfload-agg') in query
    assert 'perfload-1000 limit=1000' in capsys.readouterr().out


def test_perfload_puts_every_provider_in_the_queried_aggregate(monkeypatch):
    loaded = []
    monkeypatch.setattr(bench, 'load_each', lambda servers, jobs, threads,
                        name: loaded.extend(jobs))
    bench.load_perfload([None], _args(providers=3, threads=1))
    assert len(loaded) == 3
    for [((name, inventories), extra)] in loaded:
        assert set(inventories) == {'VCPU', 'MEMORY_MB', 'DISK_GB'}
        assert 'HW_CPU_X86_AVX2' in extra['traits']
        assert extra['aggregates'] == [bench.cloud_api.ident('perfload-agg')]


@pytest.mark.parametrize('argv', [
    ['--side-by-side', '--url', 'http://h:1'],
    ['--side-by-side', '--no-load'],
    ['--static-floor', '--scenario', 'perfload'],
    ['--side-by-side', '--static-floor'],
    ['--side-by-side', '--static-floor', '--scenario', 'perfload',
     '--scenario', 'flat']])
def test_side_by_side_refuses_servers_data_or_floor_it_cannot_serve(argv):
    with pytest.raises(SystemExit):
        bench.main(argv)


def test_side_by_side_loads_ours_and_measures_both_with_pids(monkeypatch):
    import contextlib
    calls = []

    @contextlib.contextmanager
    def fake_side_by_side(timeout, prepare):
        prepare('ours', 'http://o:1')
        yield [bench.servers_kit.Served('ours', 'http://o:1', 11),
               bench.servers_kit.Served('upstream', 'http://u:2', 22)]

    monkeypatch.setattr(bench.servers_kit, 'side_by_side',
                        fake_side_by_side)
    monkeypatch.setitem(bench.SCENARIOS, 'perfload', (
        lambda servers, args: calls.append(
            ('load', [s.url for s in servers])),
        lambda servers, args: calls.append(
            ('measure', [(s.label, s.pid) for s in servers], args.rounds))))
    bench.main(['--side-by-side', '--scenario', 'perfload'])
    assert calls == [('load', ['http://o:1']),
                     ('measure', [('ours', 11), ('upstream', 22)], 3)]


# Timed GETs over a bare socket

@pytest.fixture
def http_server():
    """A local server answering every GET with a fixed JSON body, and a
    listening socket that never answers."""
    import http.server
    import socket
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = _body(2)
            self.send_response(200)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    silent = socket.socket()
    silent.bind(('127.0.0.1', 0))
    silent.listen(1)
    yield ('http://127.0.0.1:%d' % server.server_port,
           'http://127.0.0.1:%d' % silent.getsockname()[1])
    server.shutdown()
    server.server_close()
    silent.close()


@pytest.mark.parametrize('raw', [True, False])
def test_timed_gets_read_the_whole_body(http_server, raw):
    server = bench.Server('a', http_server[0], 'admin', 5, raw=raw)
    resp, seconds = server.get('/allocation_candidates?x=1')
    assert resp.status == 200 and resp.body == _body(2)
    assert 0 < seconds < 5


@pytest.mark.parametrize('raw', [True, False])
def test_a_raw_get_without_answer_counts_as_a_timeout(http_server, raw):
    server = bench.Server('a', http_server[1], 'admin', 5, raw=raw)
    result = bench.Result('a', server)
    bench.sequential_round(result, '/p', 2, 0.2)
    assert result.failure == 'no answer within 0.2 s'
    assert result.timed_out == 0.2 and result.times == []


def test_warm_up_requests_come_first_and_are_not_timed(capsys):
    log = []
    ours = _FakeServer('ours', log, cpu=0.001)
    up = _FakeServer('upstream', log, [
        (200, _body(3), 0.01), (None, 'TimeoutError: timed out', 60)])
    results = bench.measure([ours, up], 'q', 'a=b', _args(warm_up=2))
    assert log[:4] == ['ours', 'ours', 'upstream', 'upstream']
    assert log[4:] == ['ours'] * 6
    assert len(results[0].times) == 6 and results[0].cpu_requests == 6
    assert results[1].failure == 'no answer within 60 s'
    assert results[1].times == []


def test_wide_is_not_warmed_up(capsys):
    log = []
    bench.wide([_FakeServer('ours', log)], _args(warm_up=5, rounds=1))
    assert log == ['ours', 'ours']     # one request per device count
