"""Upstream serves a copy of the database a benchmark filled through ours."""

import http.client
import urllib.parse
import uuid

import pytest

from benchmarks.toolkit import servers
from placement.tests import fixtures
from placement.tests.functional.test_upstream_upgrade_rollback import (
    upstream_venv)  # noqa: F401 (a fixture)
from placement.tests import gunicorn_server
from placement.tests import placement_http

PROJECT = str(uuid.uuid4())


def _fill(url):
    client = placement_http.Client(url)
    rp = str(uuid.uuid4())
    client.checked('POST', '/resource_providers',
                   {'uuid': rp, 'name': 'copied'}, expect=(200,))
    client.checked('PUT', '/resource_providers/%s/inventories' % rp, {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 8}}})
    client.checked('PUT', '/allocations/%s' % uuid.uuid4(), {
        'allocations': {rp: {'resources': {'VCPU': 3}}},
        'project_id': PROJECT, 'user_id': PROJECT,
        'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        expect=(204,))
    client.close()
    return rp


@pytest.mark.skipif(not servers.can_copy(),
                    reason='no database copy on this backend')
def test_upstream_starts_on_a_copy_of_what_ours_was_given(
        upstream_venv, capsys):  # noqa: F811 (the fixture)
    prepared = []

    def prepare(label, url):
        prepared.append((label, _fill(url)))

    # Both gunicorns get the same extra options: here a worker class
    # that keeps connections open, which the sync worker never does.
    with servers.side_by_side(
            workers=1, prepare=prepare, gunicorn_args=(
                '--worker-class', 'gthread', '--threads', '2')) as started:
        ours, theirs = started
        assert [label for label, _rp in prepared] == ['ours']
        rp = prepared[0][1]
        # (upstream's /usages answers 500 on PostgreSQL)
        client = placement_http.Client(ours.url)
        assert client.checked(
            'GET', '/usages?project_id=' + PROJECT)['usages'] == {
                'INSTANCE': {'VCPU': 3, 'consumer_count': 1}}
        for served in started:
            connection = http.client.HTTPConnection(
                urllib.parse.urlsplit(served.url).netloc, timeout=30)
            connection.request('GET', '/')
            answer = connection.getresponse()
            answer.read()
            assert answer.getheader('connection', '').lower() != 'close', (
                served.label)
            connection.close()
            client = placement_http.Client(served.url)
            assert client.checked(
                'GET', '/resource_providers/%s/usages' % rp)['usages'] == {
                    'VCPU': 3}, served.label
            client.close()
    assert '1 providers read back alike' in capsys.readouterr().out


def test_the_copy_check_tells_different_clouds_apart(tmp_path):
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    with gunicorn_server.GunicornServer(
            fixtures.fresh_database_url(tmp_path / 'a', 'copy_a'),
            tmp_path / 'a.log', workers=1) as first, \
            gunicorn_server.GunicornServer(
                fixtures.fresh_database_url(tmp_path / 'b', 'copy_b'),
                tmp_path / 'b.log', workers=1) as second:
        assert servers.check_same_cloud(first.url, second.url) == 0
        _fill(first.url)
        with pytest.raises(RuntimeError):
            servers.check_same_cloud(first.url, second.url)


def test_options_for_one_server_reach_its_gunicorn():
    with servers.side_by_side(
            workers=1, with_upstream=False, own_args={
                'ours': ('--worker-class', 'gevent', '--keep-alive', '5'),
                'upstream': ('--this-option-does-not-exist',)}) as started:
        (ours,) = started
        connection = http.client.HTTPConnection(
            urllib.parse.urlsplit(ours.url).netloc, timeout=30)
        try:
            for _request in range(2):
                connection.request('GET', '/')
                answer = connection.getresponse()
                answer.read()
                assert answer.status == 200
                # gunicorn's default (sync) worker closes every connection.
                assert answer.getheader('connection', '').lower() != 'close'
        finally:
            connection.close()
