"""placement-api takes its options from the command line it was run with."""

import sys

import pytest

from placement.cmd import api


class _Served(Exception):
    pass


def test_host_and_port_come_from_sys_argv(monkeypatch):
    bound = {}

    def make_server(host, port, app, **kwargs):
        bound.update(host=host, port=port)
        raise _Served()

    monkeypatch.setattr(sys, 'argv', ['placement-api', '--host', '127.0.0.2',
                                      '--port', '8257'])
    monkeypatch.setattr(api.deploy, 'loadapp', lambda conf: None)
    monkeypatch.setattr(api.simple_server, 'make_server', make_server)
    with pytest.raises(_Served):
        api.main()
    assert bound == {'host': '127.0.0.2', 'port': 8257}
