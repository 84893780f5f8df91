"""benchmarks.idle_wakeups: its options and report lines."""

from benchmarks import idle_wakeups


def test_the_line_gives_the_median_and_spread_of_the_rounds():
    line = idle_wakeups.summary('ours', '/', 20.0,
                                [(0.5, 2.0), (0.7, 3.0), (0.6, 2.5)])
    assert 'gap    20 ms  0.600 ms CPU/req (0.500-0.700)  2.50 ' \
           'switches/req' in line
    assert line.startswith('ours ')


def test_each_request_closes_its_connection():
    data = idle_wakeups.request_bytes('/resource_providers')
    assert data.startswith(b'GET /resource_providers HTTP/1.1\r\n')
    assert b'Connection: close\r\n' in data and data.endswith(b'\r\n\r\n')

