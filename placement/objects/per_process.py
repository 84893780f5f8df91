"""State kept once per process and database (the provider index, the
rows provider listings show)."""

import os
import threading
import weakref


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
