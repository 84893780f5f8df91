"""State kept once per process and database (the provider index, the
rows provider listings show), and kept up to date by the change log."""

import os
import random
import threading
import time
import weakref

from placement.db import changes


class PerDatabase:
    """``of(db)``: the one ``factory()`` object of database ``db`` in
    this process, made on first use. A forked worker starts afresh: it
    may inherit a lock held by another thread of its parent."""

    def __init__(self, factory):
        self._factory = factory
        self._objects = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        if hasattr(os, 'register_at_fork'):
            os.register_at_fork(after_in_child=self._objects.clear)

    def of(self, db):
        found = self._objects.get(db)
        if found is None:
            with self._lock:
                found = self._objects.setdefault(db, self._factory())
        return found


#: Share of ``max_age`` by which a follower's periodic whole load may
#: come early (drawn at random after every whole load).
SPREAD = 0.25


class LogFollower:
    """State kept up to date from the provider change log
    (``placement.db.changes``): ``refresh`` loads it whole on first use,
    when the log says everything may have changed (or no longer holds
    what the follower missed), and at least every ``max_age`` seconds;
    otherwise it loads again only the providers logged since the last
    refresh.

    The periodic whole load comes after a random time between
    ``(1 - SPREAD) * max_age`` and ``max_age``: on a large cloud it keeps
    a worker busy for a good part of a second (10,000 hosts: a quarter
    of a second), and workers started together, which load on their
    first requests, would otherwise all reload at the same moment every
    ``max_age`` and leave no worker to answer meanwhile.

    Subclasses define ``max_age``, ``load_all(conn)`` and
    ``load_changed(conn, provider_ids)``.
    """

    max_age = None

    def __init__(self):
        self.lock = threading.Lock()
        self.version = None
        self.loaded_at = None
        self.reload_after = None

    def refresh(self, conn, clock=time.monotonic, reads=None):
        """Bring the state up to date with what ``conn`` sees.

        ``reads`` ({cursor place: log read}), shared by the followers
        one request refreshes, lets a follower at the place in the log
        another has just read from take that read instead of asking
        again: a filtered provider listing refreshes both the provider
        index and the listed rows, usually at the same place."""
        self._refresh(conn, clock, reads)

    def _refresh(self, conn, clock, reads=None):
        """``refresh``; return (the log read, whether everything was
        loaded)."""
        try:
            # A cursor's place names every open gap: worth building
            # only when there is a read to share (thousands of gaps on
            # Galera).
            place = None if reads is None else (
                self.version and self.version.place)
            log = None if reads is None else reads.get(place)
            if log is None:
                log = changes.read(conn, self.version)
                if reads is not None:
                    reads[place] = log
            now = clock()
            full = (log.provider_ids is None or self.loaded_at is None
                    or now - self.loaded_at > self.reload_after)
            if full:
                self.load_all(conn)
                self.loaded_at = now
                self.reload_after = self.max_age * (
                    1 - SPREAD * random.random())
            elif log.provider_ids:
                self.load_changed(conn, log.provider_ids)
        except BaseException:
            # Half loaded: the next refresh must start from scratch.
            self.version = self.loaded_at = None
            raise
        # Rows read after the log may be newer than its cursor; the next
        # refresh then loads those providers once more.
        self.version = log.version
        return log, full
