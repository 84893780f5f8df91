"""placement-manage: an unreachable database, db downgrade."""

import pytest

from placement.cmd import manage
from placement.db import migration
from placement.tests import fixtures


def test_unreachable_database_is_one_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\nconnection = sqlite:///%s\n'
                    'max_retries = 0\n' % (tmp_path / 'no' / 'such.db'))
    assert manage.main(['--config-file', str(path), 'db', 'version']) == 1
    err = capsys.readouterr().err
    assert err == (
        'placement-manage: Database unavailable (OperationalError: unable '
        'to open database file; gave up after 1 attempts)\n')


def _run(config_file, capsys, *args):
    code = manage.main(['--config-file', config_file] + list(args))
    return code, capsys.readouterr().out


@pytest.fixture
def fresh_config_file(tmp_path):
    """A configuration naming an empty database of this test's own (the
    shared test database must keep its schema)."""
    path = tmp_path / 'fresh.conf'
    url = fixtures.fresh_database_url(tmp_path, 'cmd_downgrade')
    path.write_text('[placement_database]\nconnection = %s\n' % url)
    return str(path)


def test_downgrade_to_upstream_head_and_back(fresh_config_file, capsys):
    assert _run(fresh_config_file, capsys, 'db', 'sync') == (
        0, '')
    assert _run(fresh_config_file, capsys,
                'db', 'downgrade', 'a082b8bb98d0') == (0, 'a082b8bb98d0\n')
    assert _run(fresh_config_file, capsys,
                'db', 'version') == (0, 'a082b8bb98d0\n')
    assert _run(fresh_config_file, capsys, 'db', 'sync') == (
        0, '')
    assert _run(fresh_config_file, capsys,
                'db', 'version') == (0, migration.head() + '\n')


@pytest.mark.parametrize('current, revision, message', [
    ('head', 'cafe', "unknown revision 'cafe'"),
    ('head', '422ece571366',
     'cannot downgrade below a082b8bb98d0 (upstream Placement 16.0.0)'),
    ('a082b8bb98d0', 'dabfd9010ed6',
     'revision dabfd9010ed6 is not below the current revision '
     'a082b8bb98d0'),
])
def test_downgrade_refusal_is_one_line_and_exit_1(
        fresh_config_file, capsys, current, revision, message):
    assert _run(fresh_config_file, capsys, 'db', 'sync')[0] == 0
    if current != 'head':
        _run(fresh_config_file, capsys,
             'db', 'downgrade', current)
    code = manage.main(['--config-file', fresh_config_file,
                        'db', 'downgrade', revision])
    out, err = capsys.readouterr()
    assert (code, out) == (1, '')
    assert err == 'placement-manage: db downgrade: %s\n' % message
    expected = migration.head() if current == 'head' else current
    assert _run(fresh_config_file, capsys,
                'db', 'version') == (0, expected + '\n')


def test_creating_missing_triggers_below_the_head_is_refused(
        fresh_config_file, capsys):
    """The triggers' form follows the revision: below the head the
    command says to sync first, in one line, and changes nothing."""
    code = manage.main(['--config-file', fresh_config_file,
                        'db', 'create_missing_triggers'])
    out, err = capsys.readouterr()
    assert (code, out) == (1, '')
    assert err == (
        'placement-manage: db create_missing_triggers: the schema is at '
        'no revision, not %s: run "db sync" first\n' % migration.head())
    assert _run(fresh_config_file, capsys, 'db', 'version') == (0, 'None\n')
