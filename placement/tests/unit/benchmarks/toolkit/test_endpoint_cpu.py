"""Server CPU per kind of request: naming, the hooks' files, reading."""

import json
import types

from benchmarks.toolkit import endpoint_cpu

UUID = '9922bdbb-78d2-5740-b365-1a0c4646e0dd'


def test_kind_names_the_route_and_query_parameters_not_values():
    assert endpoint_cpu.kind(
        'GET', '/resource_providers/%s/traits' % UUID, '') == (
        'GET /resource_providers/{uuid}/traits')
    assert endpoint_cpu.kind(
        'GET', '/resource_providers',
        'required=X&member_of=in:%s&required=Y' % UUID) == (
        'GET /resource_providers?member_of&required')
    assert endpoint_cpu.kind('PUT', '/allocations/' + UUID.replace('-', ''),
                             '') == 'PUT /allocations/{uuid}'


def _request(method, path, query=''):
    return types.SimpleNamespace(method=method, path=path, query=query)


def test_hooks_add_up_cpu_per_kind_and_write_it(tmp_path, monkeypatch):
    monkeypatch.setenv(endpoint_cpu.ENV, str(tmp_path))
    monkeypatch.setattr(endpoint_cpu, '_totals', {})
    monkeypatch.setattr(endpoint_cpu, '_state', {'written': 0.0})
    for path in ('/resource_providers/%s/traits' % UUID, '/'):
        req = _request('GET', path)
        endpoint_cpu.pre_request(None, req)
        sum(range(20000))   # some CPU for the hook to count
        endpoint_cpu.post_request(None, req, {}, None)
    # The first request wrote the totals; the second came too soon.
    [written] = tmp_path.glob('*.json')
    assert set(json.loads(written.read_text())) == {
        'GET /resource_providers/{uuid}/traits'}
    endpoint_cpu.worker_exit(None, None)
    totals = json.loads(written.read_text())
    assert set(totals) == {'GET /resource_providers/{uuid}/traits', 'GET /'}
    assert all(count == 1 and seconds > 0
               for count, seconds in totals.values())


def test_snapshot_sums_the_workers_of_one_master(tmp_path):
    for name, totals in (('10-11', {'GET /': [2, 0.5]}),
                         ('10-12', {'GET /': [1, 0.25], 'PUT /x': [1, 1.0]}),
                         ('20-21', {'GET /': [9, 9.0]})):
        (tmp_path / (name + '.json')).write_text(json.dumps(totals))
    assert endpoint_cpu.snapshot(str(tmp_path), 10) == {
        'GET /': (3, 0.75), 'PUT /x': (1, 1.0)}


def test_difference_keeps_the_kinds_that_ran_and_lines_rank_them():
    before = {'GET /': (3, 0.75), 'PUT /x': (1, 1.0)}
    after = {'GET /': (7, 1.75), 'PUT /x': (1, 1.0), 'GET /y': (1, 3.0)}
    spent = endpoint_cpu.difference(after, before)
    assert spent == {'GET /': (4, 1.0), 'GET /y': (1, 3.0)}
    first, second = endpoint_cpu.lines(spent)
    assert first.split()[:5] == ['GET', '/y', 'n', '1', '3000.000']
    assert first.endswith('75.0%')
    assert second.split()[:5] == ['GET', '/', 'n', '4', '250.000']


def test_each_thread_measures_its_own_request(tmp_path, monkeypatch):
    """A threaded worker interleaves requests: a request's CPU is its
    own thread's, from its own pre_request."""
    import threading
    monkeypatch.setattr(endpoint_cpu, '_totals', {})
    monkeypatch.setattr(endpoint_cpu, '_state', {'written': 0.0})
    long_started, short_done = threading.Event(), threading.Event()

    def long_request():
        req = _request('GET', '/long')
        endpoint_cpu.pre_request(None, req)
        long_started.set()
        short_done.wait(10)
        sum(range(200000))
        endpoint_cpu.post_request(None, req, {}, None)

    thread = threading.Thread(target=long_request)
    thread.start()
    long_started.wait(10)
    req = _request('GET', '/short')
    endpoint_cpu.pre_request(None, req)
    endpoint_cpu.post_request(None, req, {}, None)
    short_done.set()
    thread.join(10)
    totals = endpoint_cpu._totals
    assert totals['GET /long'][1] > 10 * totals['GET /short'][1] > 0
