"""What every client sent and learned.

Each request is one ``Entry``: when it started and ended (monotonic
seconds), what it sent, its status and body, and its outcome:

* ``ack``: a 2xx, the client may rely on the write;
* ``refused``: a 4xx, the write must have left nothing behind;
* ``unknown``: a 5xx or no answer (timeout, connection lost): the
  write may have been applied, but only entirely.

Writes carry ``intent``: what the checker needs to recognise their
effect in the database (see ``checker``).
"""

import dataclasses
import threading
import time

ACK = 'ack'
REFUSED = 'refused'
UNKNOWN = 'unknown'
READ = 'read'


def outcome(status, write):
    """The outcome of an answer ``status`` (None: no answer)."""
    if not write:
        return READ
    if status is not None and 200 <= status < 300:
        return ACK
    if status is not None and 400 <= status < 500:
        return REFUSED
    return UNKNOWN


@dataclasses.dataclass
class Entry:
    """One request and its answer."""

    id: int
    client: int
    kind: str            # operation kind (claim, move, ..., or a read)
    method: str
    path: str
    host: str
    start: float
    end: float = None
    status: int = None
    retry_after: str = None
    body: object = None
    failure: str = None
    outcome: str = None
    #: Writes: {'consumers': {uuid: {'user': ..., 'allocations':
    #: {rp: amount} or None (any)}}, 'provider': ..., 'generation': ...}
    intent: dict = None
    #: Reads: [(('provider'|'consumer', uuid), generation)] observed.
    observed: list = dataclasses.field(default_factory=list)

    @property
    def write(self):
        return self.intent is not None

    def describe(self):
        return '#%d %s %s %s (%s, client %d, %.3f-%.3f s) -> %s%s' % (
            self.id, self.kind, self.method, self.path, self.host,
            self.client, self.start, self.end or -1,
            self.status if self.status is not None else 'no answer',
            ' ' + self.failure if self.failure else '')


class History:
    """Entries of every client, thread-safe, in the order they started."""

    def __init__(self, clock=time.monotonic):
        self._lock = threading.Lock()
        self._clock = clock
        self.origin = clock()
        self.entries = []

    def now(self):
        return self._clock() - self.origin

    def begin(self, client, kind, method, path, host, intent=None):
        with self._lock:
            entry = Entry(len(self.entries), client, kind, method, path,
                          host, self.now(), intent=intent)
            self.entries.append(entry)
        return entry

    def finish(self, entry, response, retry_after=None):
        """Record ``response`` (a placement_http.Response) of ``entry``."""
        entry.end = self.now()
        entry.status = response.status
        entry.body = response.body
        entry.failure = response.failure
        entry.retry_after = retry_after
        entry.outcome = outcome(response.status, entry.write)

    def writes(self):
        return [e for e in self.entries if e.write and e.end is not None]
