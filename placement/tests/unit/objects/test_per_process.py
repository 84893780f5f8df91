"""When a change-log follower loads everything again (no database: the
log read is replaced)."""

import pytest

from placement.db import changes
from placement.objects import per_process


class _Follower(per_process.LogFollower):
    max_age = 100

    def __init__(self):
        super().__init__()
        self.whole_loads = 0

    def load_all(self, conn):
        self.whole_loads += 1

    def load_changed(self, conn, provider_ids):
        pass


@pytest.fixture
def quiet_log(monkeypatch):
    """A log in which nothing ever changes."""
    monkeypatch.setattr(changes, 'read', lambda conn, since: changes.Changes(
        changes.Cursor(1, ()), set(), None))


def test_the_periodic_whole_load_comes_within_max_age(quiet_log):
    follower = _Follower()
    follower.refresh(None, clock=lambda: 1000.0)
    assert follower.whole_loads == 1
    early = 1000.0 + follower.max_age * (1 - per_process.SPREAD) - 1
    follower.refresh(None, clock=lambda: early)
    assert follower.whole_loads == 1
    follower.refresh(None, clock=lambda: 1000.0 + follower.max_age + 1)
    assert follower.whole_loads == 2


def test_followers_reload_at_different_moments(quiet_log):
    """Workers started together do not all reload at once."""
    followers = [_Follower() for _ in range(20)]
    for follower in followers:
        follower.refresh(None, clock=lambda: 1000.0)
    waits = {follower.reload_after for follower in followers}
    assert len(waits) > 10
    assert all(100 * (1 - per_process.SPREAD) <= wait <= 100
               for wait in waits)


@pytest.fixture
def counted_reads(monkeypatch):
    """The cursors the log is read from (a log in which nothing
    changes)."""
    calls = []

    def read(conn, since):
        calls.append(since)
        return changes.Changes(since, set(), None)
    monkeypatch.setattr(changes, 'read', read)
    return calls


def test_followers_at_one_place_share_a_read_whatever_noticed_its_gaps(
        counted_reads):
    """Two followers whose cursors name the same id and open gaps, each
    gap noticed by a different read (another moment, another snapshot),
    are at one place in the log: a request refreshing both reads it once.
    Each read notices gaps anew, so comparing the whole cursors would make
    them read apart for as long as a gap stays open."""
    index, rows = _Follower(), _Follower()
    for follower, noticed, horizon in ((index, 5.0, 700), (rows, 6.0, 702)):
        follower.version = changes.Cursor(
            40, (changes.Gap(31, noticed, horizon),))
        follower.loaded_at, follower.reload_after = 1000.0, 100
    reads = {}
    index.refresh(None, clock=lambda: 1001.0, reads=reads)
    rows.refresh(None, clock=lambda: 1001.0, reads=reads)
    assert len(counted_reads) == 1
    assert rows.version == index.version


def test_followers_at_different_places_read_apart(counted_reads):
    index, rows = _Follower(), _Follower()
    index.version = changes.Cursor(40, (changes.Gap(31, 5.0, 700),))
    rows.version = changes.Cursor(40, ())
    for follower in (index, rows):
        follower.loaded_at, follower.reload_after = 1000.0, 100
    reads = {}
    for follower in (index, rows):
        follower.refresh(None, clock=lambda: 1001.0, reads=reads)
    assert len(counted_reads) == 2
