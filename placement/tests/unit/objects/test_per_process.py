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
