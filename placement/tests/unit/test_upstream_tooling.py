"""The tooling that runs upstream Placement refuses anything else."""

import sys

import pytest

from placement.tests import upstream


@pytest.mark.parametrize('url, expected', [
    ('postgresql+psycopg://u@127.0.0.1:5432/p',
     'postgresql+psycopg2://u@127.0.0.1:5432/p'),
    ('mysql://root:pw@127.0.0.1:3306/p',
     'mysql+pymysql://root:pw@127.0.0.1:3306/p'),
    ('sqlite:////tmp/p.sqlite', 'sqlite:////tmp/p.sqlite'),
])
def test_driver_url_uses_drivers_installed_with_upstream(url, expected):
    assert upstream.driver_url(url) == expected


def test_a_virtualenv_without_the_release_is_unavailable(tmp_path):
    # The test virtualenv has our package, not openstack-placement.
    venv = sys.prefix
    with pytest.raises(upstream.Unavailable):
        upstream._check(venv, str(tmp_path))


def test_upstream_processes_get_none_of_our_settings(monkeypatch):
    monkeypatch.setenv('PYTHONPATH', '/somewhere/checkout')
    monkeypatch.setenv('OS_PLACEMENT_DATABASE__CONNECTION', 'sqlite://')
    env = upstream.clean_env({'OS_API__AUTH_STRATEGY': 'noauth2'})
    assert 'PYTHONPATH' not in env
    assert 'OS_PLACEMENT_DATABASE__CONNECTION' not in env
    assert env['OS_API__AUTH_STRATEGY'] == 'noauth2'


def test_a_named_virtualenv_is_checked_never_replaced(tmp_path,
                                                      monkeypatch):
    named = tmp_path / 'theirs'
    named.mkdir()
    (named / 'keep').write_text('x')
    monkeypatch.setenv(upstream.VENV_ENV, str(named))
    with pytest.raises(upstream.Unavailable):
        upstream.ensure_venv(str(tmp_path))
    assert (named / 'keep').read_text() == 'x'
