"""The cloud-traffic benchmark runs end to end, quick, on a real server."""

import re

from benchmarks import cloud_traffic
from placement.tests import fixtures
from placement.tests import gunicorn_server


def test_quick_run_reports_every_endpoint(tmp_path_factory, capsys):
    with gunicorn_server.on_fresh_database(
            tmp_path_factory, 'cloud_traffic', workers=1) as server:
        pid = server.worker_pids()[0]
        cloud_traffic.main(['--quick', '--url', 'ours=' + server.url,
                            '--pid', 'ours=%d' % pid, '--factors', '1',
                            '--p99-bound', '60000', '--lag', '60',
                            '--check'])
        assert not server.errors()
    out = capsys.readouterr().out
    # Read back after the run, the cloud holds together.
    assert re.search(r'^ours state after the run \(read in \d+ s\): '
                     r'consistent \(\d+ providers, \d+ consumers', out,
                     re.M), out
    step = re.search(r'^x1 +ours .* 5xx/none (\d+) .* other 4xx (\d+) +'
                     r'CPU/req server ([\d.]+) ms .*sustained$', out, re.M)
    assert step, out
    assert step.group(1) == '0' and step.group(2) == '0', out
    # The warm-up ran first, at the first factor, and is not a step.
    assert out.index('warm-up x1 ') < step.start(), out
    assert len(re.findall(r'^x1 +ours ', out, re.M)) == 1, out
    assert float(step.group(3)) > 0
    endpoints = set(re.findall(r'^    ([A-Z]+ [a-z_]+) +n +\d+', out, re.M))
    assert endpoints >= {
        'GET in_tree', 'GET inventories', 'GET traits', 'GET aggregates',
        'GET sharing', 'GET candidates', 'PUT allocations',
        'GET allocations', 'POST allocations', 'DELETE allocations',
        'GET usages', 'PUT inventories'}, out
    # The load generator's own share of a core, per step.
    assert re.search(r'client [\d.]+ ms \(\d+% of a core\)', step.group(0))
    # Then each kind alone: its latency and the server's CPU for it.
    probed = dict(re.findall(r'^  ([A-Z]+ [a-z_]+) median ms +([\d.]+)',
                             out, re.M))
    assert set(probed) == set(cloud_traffic.PROBED), out
    assert all(float(ms) > 0 for ms in probed.values()), out
    cpu = re.findall(r'^    service CPU ms +([\d.]+)', out, re.M)
    assert len(cpu) == len(cloud_traffic.PROBED), out


def test_endpoint_cpu_reports_the_servers_cpu_per_kind(capsys):
    cloud_traffic.main(['--quick', '--side-by-side', '--ours-only',
                        '--endpoint-cpu', '--factors', '1',
                        '--p99-bound', '60000', '--lag', '60'])
    out = capsys.readouterr().out
    summary = out[out.index('sustained ours'):]
    block = summary[summary.index('server CPU by kind of request'):]
    kinds = dict(re.findall(r'^    (\S+ \S+) +n +\d+ +([\d.]+) ms/req',
                            block, re.M))
    assert {'GET /resource_providers/{uuid}/inventories',
            'GET /resource_providers?in_tree',
            'GET /allocation_candidates?limit&resources'} <= set(kinds), out
    assert all(float(ms) > 0 for ms in kinds.values()), out
    # The report's readouts of the workers, and of the database server
    # where there is one.
    assert re.search(r'^worker RSS MB, sum +[\d.]+$', out, re.M), out
    if fixtures.backend_name() != 'sqlite':
        assert re.search(r'^ours database after the run \(\d+ writes\): '
                         r'[\d.]+ MB \(', out, re.M), out
        # Every table broken down, and the size with and without the
        # change log.
        assert re.search(r'^ +provider_change_log +[\d.]+ / ', out,
                         re.M), out
        assert re.search(r'^database MB, after the run +[\d.]+\n'
                         r'  without the change log +[\d.]+\n'
                         r'  writes served by then +\d+$', out, re.M), out
        assert re.search(r'^  database CPU ms/request +[\d.]+$', out,
                         re.M), out
