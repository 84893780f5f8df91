"""The cloud-traffic benchmark's schedule and verdicts, without a server."""

import argparse
import collections
import json
import random
import socket
import threading
import time

from benchmarks import cloud_traffic
from placement.tests import placement_http


def _args(**kw):
    values = dict(period=10.0, duration=5.0, boots=2.0, migrations=0.0,
                  deletes=1.0, usages=0.5)
    values.update(kw)
    return argparse.Namespace(**values)


def test_schedule_refreshes_every_node_once_per_period_at_its_factor():
    topology = cloud_traffic.Topology('flat', 100, 10)
    events = cloud_traffic.schedule(topology, _args(), 4,
                                    random.Random(1))
    kinds = collections.Counter(name for _, name, _ in events)
    # Period 10 s / 4 = 2.5 s: every node twice in 5 s.
    assert kinds['refresh'] == 200
    assert collections.Counter(
        node for _, name, node in events if name == 'refresh') == {
            node: 2 for node in range(100)}
    assert kinds['boot'] == 40 and kinds['delete'] == 20
    assert kinds['usages'] == 10 and 'migrate' not in kinds
    times = [at for at, _, _ in events]
    assert times == sorted(times) and 0 <= times[0] and times[-1] < 5.0


def test_nested_instance_takes_disk_from_root_and_cpu_from_numa():
    topology = cloud_traffic.Topology('nested', 3, 2)
    allocation = topology.allocation(2)
    assert allocation[topology.root(2)] == {
        'resources': {'DISK_GB': 20}}
    assert len(allocation) == 2
    jobs = topology.jobs()
    # 3 trees of 5 providers, then 2 sharing providers.
    assert [len(job) for job in jobs] == [5, 5, 5, 1, 1]


def _step(seconds, statuses=(200,), lags=(0.0,), dropped=0):
    recorder = cloud_traffic.Recorder()
    for value in seconds:
        for status in statuses:
            recorder.add('GET x', status, value)
    for lag in lags:
        recorder.lag(lag)
    recorder.dropped = dropped
    return cloud_traffic.StepResult('ours', 1, 1, 1.0, recorder, None,
                                    None, 0.0, 100.0, 1.0)


def test_a_step_is_sustained_only_within_every_bound():
    assert _step([0.01] * 100).why_not() is None
    assert 'p99 200 ms' in _step([0.01] * 98 + [0.2] * 2).why_not()
    assert '5xx' in _step([0.01], statuses=(200, 503)).why_not()
    assert '5xx' in _step([0.01], statuses=(None,)).why_not()
    assert 'late' in _step([0.01], lags=(0.0, 2.5)).why_not()
    assert 'not done' in _step([0.01], dropped=3).why_not()
    # 409s are the expected answer to a lost race, not errors.
    assert _step([0.01], statuses=(409,)).why_not() is None


def test_same_load_comparison_uses_cpu_per_request():
    def cloud(label, cpu):
        result = _step([0.01] * 10)
        result.label, result.server_cpu = label, cpu
        holder = cloud_traffic.Cloud(label, 'http://x', None, None, None)
        holder.steps = [result]
        return holder
    lines = cloud_traffic.same_load_lines(cloud('ours', 0.1),
                                          cloud('upstream', 0.3))
    assert lines == ['x1: ours vs upstream: p99 10.0 vs 10.0 ms, '
                     'server CPU/request 3.00x less']


def test_recorder_keeps_a_few_error_texts():
    recorder = cloud_traffic.Recorder()
    recorder.add('GET x', 200, 0.01, b'fine')
    recorder.add('GET x', 409, 0.01, b'conflict')
    for _ in range(7):
        recorder.add('PUT y', 503, 0.01, b'database unavailable')
    recorder.add('GET x', None, 0.01, 'ConnectionResetError: reset')
    assert recorder.samples == [('PUT y', 503, "b'database unavailable'")
                                ] * 5
    assert recorder.errors() == 8


def test_plan_bisects_between_last_sustained_and_first_unsustained():
    plan = cloud_traffic.Plan([1, 2, 4, 8], refine=2)
    ran = []
    for sustained in (True, True, False, True, False):
        factor = plan.next()
        ran.append(factor)
        plan.record(factor, sustained)
    assert ran == [1, 2, 4, 2.83, 3.36]
    assert plan.next() is None
    assert (plan.low, plan.high) == (2.83, 3.36)


def test_plan_without_a_sustained_step_has_nothing_to_refine():
    plan = cloud_traffic.Plan([1, 2], refine=3)
    plan.record(plan.next(), False)
    assert plan.next() is None
    everything = cloud_traffic.Plan([1, 2], refine=3)
    for factor in (1, 2):
        assert everything.next() == factor
        everything.record(factor, True)
    assert everything.next() is None


def test_allocation_requests_read_without_the_summaries():
    body = {'provider_summaries': {'a': {'resources': {}}},
            'allocation_requests': [
                {'allocations': {'rp%d' % i: {'resources': {'VCPU': 1}}}}
                for i in range(5)]}
    for indent in (None, 2):
        data = json.dumps(body, indent=indent).encode()
        assert cloud_traffic.allocation_requests(data) == (
            body['allocation_requests'])
        assert cloud_traffic.allocation_requests(data, 3) == (
            body['allocation_requests'][:3])
    empty = json.dumps({'allocation_requests': [],
                        'provider_summaries': {}}).encode()
    assert cloud_traffic.allocation_requests(empty, 3) == []


def test_an_error_budget_admits_that_share_of_5xx():
    step = _step([0.01] * 999, statuses=(200,))
    step.recorder.add('PUT y', 500, 0.01)
    assert '1 5xx' in step.why_not()
    step.error_budget = 0.001
    assert step.why_not() is None
    step.recorder.add('PUT y', 500, 0.01)
    assert '2 5xx' in step.why_not()


def test_lateness_names_who_was_late():
    waited = _step([0.01], lags=(0.0, 2.5))
    waited.recorder.lag(0.2, own=True)
    assert waited.why_not() == (
        'tasks started up to 2.5 s late (0.2 s at most by the load '
        'generator, the rest waiting for answers)')
    own = _step([0.01], lags=(0.0,))
    own.recorder.lag(1.5, own=True)
    assert own.why_not() == ('tasks started up to 1.5 s late (1.5 s by '
                             'the load generator)')


class _SlowCloud:
    """A cloud whose every task is one GET, to a server answering each
    after ``delay`` seconds, one connection at a time."""

    label, pid, db, database, writes = 'ours', None, None, None, 0

    def __init__(self, delay):
        self.topology = cloud_traffic.Topology('flat', 4, 1)
        self.listener = socket.socket()
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(64)
        self.url = 'http://127.0.0.1:%d' % self.listener.getsockname()[1]
        self.delay = delay
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _addr = self.listener.accept()
            except OSError:
                return
            with conn:
                while b'\r\n\r\n' not in conn.recv(65536):
                    pass
                time.sleep(self.delay)
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'
                             b'Connection: close\r\n\r\n{}')

    def task(self, name, node, rng):
        yield cloud_traffic.Cloud.call('GET ' + name, 'GET', '/%d' % node)


def _run_step(cloud, clients):
    args = _args(period=1.0, duration=1.0, boots=0.0, deletes=0.0,
                 usages=0.0, token='admin', timeout=5.0, drain=5.0,
                 clients=clients, p99_bound=1000.0, lag=0.1,
                 error_budget=0.0)
    try:
        return cloud_traffic.run_step(cloud, 1, args, random.Random(1))
    finally:
        cloud.listener.close()


def test_a_step_paces_tasks_and_blames_the_server_it_waited_for():
    result = _run_step(_SlowCloud(0.4), clients=1)
    rec = result.recorder
    # 4 nodes due every 0.25 s, refreshed one at a time, 0.4 s each.
    assert rec.statuses['GET refresh'] == {200: 4}
    assert not rec.dropped and result.elapsed >= 1.0
    assert max(rec.lags) > 0.2
    assert max(rec.own_lags or [0]) < 0.1
    assert 'the rest waiting for answers' in result.why_not()
    fast = _run_step(_SlowCloud(0.0), clients=4)
    assert fast.recorder.statuses['GET refresh'] == {200: 4}
    assert fast.why_not() is None


def test_a_warm_up_runs_the_first_factor_for_its_own_duration(capsys):
    cloud = _SlowCloud(0.0)
    args = _args(period=1.0, duration=30.0, warm_up=1.0, factors=[1, 4],
                 seed=1, boots=0.0, deletes=0.0, usages=0.0,
                 token='admin', timeout=5.0, drain=5.0, clients=4,
                 p99_bound=1000.0, lag=0.1, error_budget=0.0)
    start = time.monotonic()
    try:
        cloud_traffic.warm_up(cloud, args)
    finally:
        cloud.listener.close()
    # 1 s, not the 30 s of a step; x1 refreshes the 4 nodes once.
    assert time.monotonic() - start < 10
    out = capsys.readouterr().out
    assert out.startswith('warm-up x1 '), out
    assert 'achieved' in out and out.rstrip().endswith('sustained'), out


def test_recorder_counts_the_writes_that_succeeded():
    recorder = cloud_traffic.Recorder()
    for endpoint, status in (('PUT allocations', 204), ('GET x', 200),
                             ('POST allocations', 409),
                             ('DELETE allocations', 204),
                             ('PUT inventories', 200),
                             ('PUT allocations', None)):
        recorder.add(endpoint, status, 0.01)
    assert recorder.writes() == 3


def test_sizes_compare_after_the_last_step_all_ran_alike_and_sustained():
    def cloud(label, factors, sustained, sizes, writes):
        holder = cloud_traffic.Cloud(label, 'http://x', None, None, None)
        for factor, ok in zip(factors, sustained):
            step = _step([0.01], dropped=0 if ok else 1)
            step.label, step.factor = label, factor
            holder.steps.append(step)
        holder.sizes = {when: {'allocations': size * 1e6,
                               cloud_traffic.CHANGE_LOG: log * 1e6}
                        for when, (size, log) in sizes.items()}
        holder.writes_at = writes
        return holder
    ours = cloud('ours', [1, 2, 4, 8], [True] * 4, {
        'loaded': (2.0, 0.5), 'after x2': (2.5, 0.75),
        'after the run': (4.0, 2.0)},
        {'loaded': 0, 'after x2': 30, 'after the run': 900})
    upstream = cloud('upstream', [1, 2, 4, 2.83], [True, True, False, True],
                     {'loaded': (2.0, 0), 'after x2': (2.25, 0),
                      'after the run': (2.5, 0)},
                     {'loaded': 0, 'after x2': 30, 'after the run': 90})
    assert cloud_traffic.same_work([ours, upstream]) == 2
    assert cloud_traffic.size_rows([ours, upstream]) == [
        ('database MB, loaded', [2.5, 2.0], False),
        ('  without the change log', [2.0, 2.0], False),
        ('  writes served by then', [0, 0], True),
        ('database MB, after the same steps (to x2)', [3.25, 2.25], False),
        ('  without the change log', [2.5, 2.25], False),
        ('  writes served by then', [30, 30], True),
        ('database MB, after the run', [6.0, 2.5], False),
        ('  without the change log', [4.0, 2.5], False),
        ('  writes served by then', [900, 90], True)]
    # A first step not sustained by all: no equal work to compare.
    upstream.steps[0].recorder.dropped = 1
    assert cloud_traffic.same_work([ours, upstream]) is None


class _Clock:
    """A clock that ``sleep`` advances, and CPU that grows as told."""

    def __init__(self, growth):
        self.now = 0.0
        self.cpu = 0.0
        self.growth = list(growth)

    def sleep(self, seconds):
        self.now += seconds
        self.cpu += self.growth.pop(0) if self.growth else 0.0

    def busy(self):
        return self.cpu


def test_the_probe_waits_for_two_quiet_windows_after_the_work():
    """Busy windows (a database purging after writes) keep the probe
    waiting; one quiet window between busy ones is not enough."""
    busy, quiet = 0.003, 0.00005
    clock = _Clock([busy, busy, quiet, busy, quiet, quiet, busy])
    waited = cloud_traffic.settle(clock.busy, clock.sleep,
                                  lambda: clock.now)
    assert round(waited / cloud_traffic.SETTLE_WINDOW) == 6
    assert clock.growth == [busy]  # the last busy window never read


def test_the_probe_stops_waiting_at_the_limit():
    clock = _Clock([0.01] * 1000)
    waited = cloud_traffic.settle(clock.busy, clock.sleep,
                                  lambda: clock.now)
    assert cloud_traffic.SETTLE_LIMIT <= waited < (
        cloud_traffic.SETTLE_LIMIT + 2 * cloud_traffic.SETTLE_WINDOW)


class _Topology:
    nodes = 50

    def root(self, node):
        return 'root-%d' % node

    def aggregate(self, node):
        return 'agg-%d' % node

    def allocation(self, node):
        return {'root-%d' % node: {'resources': {'VCPU': 1}}}


def test_the_probe_sends_each_get_kind_uncounted_first(monkeypatch):
    """Each GET kind is sent WARM_UP_PER_WORKER times per worker before
    the counted requests; the writes only once each."""
    sent = []
    body = json.dumps({
        'resource_provider_generation': 1, 'allocations': {},
        'project_id': 'p', 'consumer_generation': 1,
        'inventories': {'DISK_GB': {'total': 10}}}).encode()

    class FakeClient:
        def __init__(self, *args, **kwargs):
            pass

        def fetch(self, method, path, body_=None):
            sent.append((method, path))
            return placement_http.Response(200, body)

        def request(self, method, path, body_=None):
            return placement_http.Response(200, json.loads(body))

        def close(self):
            pass

    monkeypatch.setattr(placement_http, 'Client', FakeClient)
    monkeypatch.setattr(cloud_traffic, 'settle', lambda busy: 0.0)
    cloud = argparse.Namespace(
        url='http://127.0.0.1:1', pid=None, db=None, database=None,
        label='ours', topology=_Topology(),
        instances={'c%d' % n: n for n in range(50)},
        args=argparse.Namespace(token='admin', timeout=5, workers=2))
    found = cloud_traffic.probe(cloud, 20, random.Random(1))
    assert all(result.count == 20 for result in found.values())
    warm = cloud_traffic.WARM_UP_PER_WORKER * 2
    kinds = collections.Counter()
    for method, path in sent:
        kinds[method, path.split('?')[0].split('/')[1]] += 1
    assert kinds['GET', 'allocations'] == 20 + warm, kinds
    assert kinds['GET', 'usages'] == 20 + warm, kinds
    assert kinds['PUT', 'allocations'] == 20, kinds
    assert kinds['DELETE', 'allocations'] == 20, kinds
