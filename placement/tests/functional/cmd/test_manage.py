"""placement-manage when its database cannot be reached."""

from placement.cmd import manage


def test_unreachable_database_is_one_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\nconnection = sqlite:///%s\n'
                    'max_retries = 0\n' % (tmp_path / 'no' / 'such.db'))
    assert manage.main(['--config-file', str(path), 'db', 'version']) == 1
    err = capsys.readouterr().err
    assert err == (
        'placement-manage: Database unavailable (OperationalError: unable '
        'to open database file; gave up after 1 attempts)\n')
