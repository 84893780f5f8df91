"""The in-process CPU benchmark's loop, with a stand-in application."""

import time

from benchmarks import request_cpu


def _app(environ, start_response):
    start_response('200 OK', [('content-length', '2')])
    return [b'{}']


def test_gap_sleeps_after_every_request_and_is_not_counted(monkeypatch):
    slept = []
    monkeypatch.setattr(time, 'sleep', slept.append)
    cpu = request_cpu.cpu_per_request(_app, '/', 4, gap=0.0005)
    assert slept == [0.0005] * 4
    assert cpu >= 0


def test_no_gap_never_sleeps(monkeypatch):
    slept = []
    monkeypatch.setattr(time, 'sleep', slept.append)
    request_cpu.cpu_per_request(_app, '/', 3)
    request_cpu.measure(_app, ['/'], 2, 1)
    assert slept == []


def test_measure_passes_the_gap_on(monkeypatch):
    slept = []
    monkeypatch.setattr(time, 'sleep', slept.append)
    found = request_cpu.measure(_app, ['/', '/x'], 2, 3, gap=0.001)
    assert [len(v) for v in found.values()] == [3, 3]
    assert slept == [0.001] * 12
