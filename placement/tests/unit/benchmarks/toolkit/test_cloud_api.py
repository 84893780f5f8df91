"""The API client benchmarks load and time with."""

import json

from benchmarks.toolkit import cloud_api
from placement.tests import placement_http


def _body(candidates):
    return json.dumps({'allocation_requests': [{}] * candidates,
                       'provider_summaries': {}}).encode()


def test_latency_clock_stops_before_the_body_is_decoded(monkeypatch):
    fetched = []

    class _Http:
        def __init__(self, url, token, timeout):
            pass

        def fetch(self, method, path):
            fetched.append((method, path))
            return placement_http.Response(200, _body(2))

        def close(self):
            pass

    monkeypatch.setattr(placement_http, 'Client', _Http)
    resp, seconds = cloud_api.Client('http://h:1', 'admin', 5).get('/x')
    assert fetched == [('GET', '/x')]
    assert isinstance(resp.body, bytes) and seconds >= 0
