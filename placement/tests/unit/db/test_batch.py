"""Chunks of values for IN lists and multi-row statements."""

import sqlalchemy as sa

from placement.db import batch


def test_chunks_cover_every_value_in_order():
    assert batch.chunks(range(7), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batch.chunks(iter('ab'), 3) == [['a', 'b']]
    assert batch.chunks([], 3) == []


def test_chunk_size_defaults_to_the_module_setting(monkeypatch):
    monkeypatch.setattr(batch, 'SIZE', 2)
    assert batch.chunks(range(5)) == [[0, 1], [2, 3], [4]]


def test_select_in_sends_one_statement_per_chunk():
    engine = sa.create_engine('sqlite://')
    table = sa.Table('t', sa.MetaData(), sa.Column('n', sa.Integer))
    sent = []
    sa.event.listen(engine, 'before_cursor_execute',
                    lambda *args: sent.append(args[2]))
    with engine.begin() as conn:
        table.create(conn)
        conn.execute(sa.insert(table), [{'n': n} for n in range(10)])
        del sent[:]
        rows = batch.select_in(conn, sa.select(table.c.n), table.c.n,
                               [1, 3, 5, 7, 9, 11], size=4)
        assert sorted(n for (n,) in rows) == [1, 3, 5, 7, 9]
        assert len(sent) == 2
        del sent[:]
        assert batch.select_in(conn, sa.select(table.c.n), table.c.n,
                               []) == []
        assert sent == []
