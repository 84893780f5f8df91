"""Faults on a schedule the seed makes repeatable.

The schedule is a sequence of (pause before, kind, its own seed): kinds
take turns in an order shuffled per round, so every kind is injected as
often as the others. One fault at a time; each ends (the server back,
the node rejoined) before the next pause starts.
"""

import collections
import random
import time


def schedule(kinds, seed, gap=(0.5, 2.0)):
    """Endless (seconds to wait, kind, seed) from ``seed``."""
    rng = random.Random(seed)
    while True:
        order = list(kinds)
        rng.shuffle(order)
        for kind in order:
            yield rng.uniform(*gap), kind, rng.randrange(1 << 30)


class Nemesis:
    """Injects faults into ``topology`` in the calling thread (``run``):
    servers it starts again end with that thread (``child_process``), so
    it must be the main one."""

    def __init__(self, topology, seed, kinds=None, per_kind=None,
                 gap=(0.5, 2.0), log=None):
        self.topology = topology
        self.kinds = list(topology.FAULTS if kinds is None else kinds)
        self.seed = seed
        self.per_kind = per_kind
        self.gap = gap
        self.log = log
        self.counts = collections.Counter()
        self.failures = []
        self.events = []  # (start, end, kind, what)

    @property
    def done(self):
        return bool(self.per_kind) and all(
            self.counts[kind] >= self.per_kind for kind in self.kinds)

    def run(self, finished, deadline):
        """Inject until ``finished()`` or the monotonic ``deadline``;
        once every kind had its ``per_kind`` faults, only wait."""
        if not self.kinds:
            while not finished() and time.monotonic() < deadline:
                time.sleep(0.1)
            return
        for wait, kind, seed in schedule(self.kinds, self.seed, self.gap):
            end = time.monotonic() + wait
            while time.monotonic() < end:
                if finished() or time.monotonic() > deadline:
                    return
                time.sleep(0.1)
            if self.per_kind and self.counts[kind] >= self.per_kind:
                continue
            started = time.monotonic()
            try:
                what = self.topology.inject(kind, random.Random(seed))
            except Exception as exc:  # reported, never silent
                self.failures.append('%s: %r' % (kind, exc))
                if self.log:
                    self.log('fault %s failed: %r' % (kind, exc))
                continue
            self.counts[kind] += 1
            self.events.append((started, time.monotonic(), kind, what))
            if self.log:
                self.log('fault %s: %s' % (kind, what))
