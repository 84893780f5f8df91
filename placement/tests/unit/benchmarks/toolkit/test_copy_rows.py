"""Upstream's copy of our data keeps upstream's own schema."""

import sqlalchemy as sa

from benchmarks.toolkit import servers


def _database(path, tables):
    url = 'sqlite:///%s' % path
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    for name, columns in tables.items():
        sa.Table(name, metadata, sa.Column('id', sa.Integer,
                                           primary_key=True),
                 *(sa.Column(c, sa.String(20)) for c in columns))
    metadata.create_all(engine)
    return url, engine


def test_only_upstreams_tables_and_columns_are_filled(tmp_path):
    ours_url, ours = _database(tmp_path / 'ours.sqlite', {
        'traits': ['name', 'ours_only'], 'provider_change_log': [],
        'alembic_version': ['version_num']})
    theirs_url, theirs = _database(tmp_path / 'theirs.sqlite', {
        'traits': ['name'], 'alembic_version': ['version_num']})
    with ours.begin() as conn:
        conn.execute(sa.text("INSERT INTO traits VALUES (0, 'A', 'x'), "
                             "(7, 'B', 'y')"))
        conn.execute(sa.text("INSERT INTO provider_change_log VALUES (1)"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES "
                             "(1, 'ours')"))
    with theirs.begin() as conn:
        # What upstream's own migration wrote is replaced by our rows,
        # but its schema version stays.
        conn.execute(sa.text("INSERT INTO traits VALUES (3, 'C')"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES "
                             "(1, 'theirs')"))
    servers.copy_rows(ours_url, theirs_url)
    with theirs.connect() as conn:
        assert conn.execute(sa.text(
            'SELECT id, name FROM traits ORDER BY id')).all() == [
                (0, 'A'), (7, 'B')]
        assert conn.execute(sa.text(
            'SELECT version_num FROM alembic_version')).scalar() == 'theirs'
        assert sorted(sa.inspect(conn).get_table_names()) == [
            'alembic_version', 'traits']
    ours.dispose()
    theirs.dispose()
