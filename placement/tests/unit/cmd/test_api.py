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


@pytest.fixture
def served(monkeypatch, tmp_path):
    """Run placement-api up to the point of serving; return its conf.

    The environment holds no option variables and the configuration
    search finds nothing, unless a test adds some.
    """
    for name in list(__import__('os').environ):
        if name.startswith('OS_'):
            monkeypatch.delenv(name)
    empty = tmp_path / 'no-config'
    empty.mkdir()
    monkeypatch.setenv('OS_PLACEMENT_CONFIG_DIR', str(empty))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api.logging, 'setup', lambda conf, name: None)
    loaded = {}

    def loadapp(conf):
        loaded['conf'] = conf

    def make_server(*args, **kwargs):
        raise _Served()

    monkeypatch.setattr(api.deploy, 'loadapp', loadapp)
    monkeypatch.setattr(api.simple_server, 'make_server', make_server)

    def run(*argv):
        with pytest.raises(_Served):
            api.main(list(argv))
        return loaded['conf']
    yield run
    if 'conf' in loaded:
        # Overrides live in option groups shared by every ConfigOpts.
        loaded['conf'].reset()


def test_no_configuration_means_development_defaults(served, tmp_path):
    conf = served()
    assert conf.api.auth_strategy == 'noauth2'
    assert conf.placement_database.connection == (
        'sqlite:///%s' % (tmp_path / 'placement.sqlite'))
    assert conf.placement_database.sync_on_startup is True


def test_a_config_file_without_auth_strategy_means_keystone(served,
                                                            tmp_path):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\nconnection = sqlite:////x.db\n')
    conf = served('--config-file', str(path))
    assert conf.api.auth_strategy == 'keystone'
    assert conf.placement_database.sync_on_startup is False


def test_a_found_config_file_turns_defaults_off(served, monkeypatch,
                                                tmp_path):
    config_dir = tmp_path / 'etc'
    config_dir.mkdir()
    (config_dir / 'placement.conf').write_text('[DEFAULT]\n')
    monkeypatch.setenv('OS_PLACEMENT_CONFIG_DIR', str(config_dir))
    conf = served()
    assert conf.api.auth_strategy == 'keystone'
    assert conf.placement_database.connection is None


def test_an_option_variable_turns_defaults_off(served, monkeypatch):
    monkeypatch.setenv('OS_PLACEMENT_DATABASE__CONNECTION', 'sqlite:////x')
    conf = served()
    assert conf.api.auth_strategy == 'keystone'
    assert conf.placement_database.connection == 'sqlite:////x'


def test_noauth2_is_chosen_explicitly(served, monkeypatch):
    monkeypatch.setenv('OS_API__AUTH_STRATEGY', 'noauth2')
    monkeypatch.setenv('OS_PLACEMENT_DATABASE__CONNECTION', 'sqlite:////x')
    assert served().api.auth_strategy == 'noauth2'
