"""A connection URL whose driver is missing is a configuration error."""

import pytest

from placement.db import drivers
from placement import deploy
from placement import conf as placement_conf


def test_installed_driver_is_fine(tmp_path):
    assert drivers.problem('sqlite:///%s' % (tmp_path / 'x.db')) is None
    assert drivers.problem('mysql+pymysql://u:p@h/d') is None


@pytest.mark.parametrize('url, words', [
    ('postgresql+pg8000://u:secret@h/d',
     ['"postgresql+pg8000://" is not installed', 'pg8000',
      'postgresql+psycopg2://']),
    ('mysql+mysqldb://u:secret@h/d',
     ['"mysql+mysqldb://" is not installed', 'mysql+pymysql://']),
    ('postgres://u:secret@h/d',
     ['unknown database type "postgres://"']),
    ('not a url', ['is not a database URL']),
])
def test_missing_or_unknown_driver_is_explained(url, words):
    message = drivers.problem(url)
    for word in words:
        assert word in message
    assert 'secret' not in message


def test_create_database_refuses_before_connecting(tmp_path):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\n'
                    'connection = postgresql+pg8000://u:secret@h/d\n')
    conf = placement_conf.build(['--config-file', str(path)],
                                config_files=[])
    with pytest.raises(deploy.ConfigurationError) as info:
        deploy.create_database(conf)
    assert 'pg8000' in str(info.value)
