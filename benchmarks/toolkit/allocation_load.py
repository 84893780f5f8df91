"""Concurrent allocation writes, and what the server must hold after
them: the load ``allocation_writes`` and ``write_hosts`` send, which
the concurrency tests send too.

``AllocationLoad`` creates providers sized so that the planned demand
exceeds their capacity, sends the planned writes from client threads
(one keep-alive connection each), records every answer in an
``allocation_ledger.Ledger`` and reads everything back (``verify``);
``report`` prints what it did and what the read-back found.
"""

import collections
import dataclasses
import random
import re
import sys
import threading
import time
import uuid

from benchmarks.toolkit import allocation_ledger
from placement.tests import placement_http

RESOURCE_CLASS = 'VCPU'
_body = allocation_ledger.allocation_body
#: Share of consumers whose allocation is split over two providers.
SPLIT_SHARE = 0.25
#: Attempt kinds of the mixed mode and their weights.
MIXED_KINDS = {'put': 40, 'post': 20, 'move': 25, 'delete': 15}
#: Extra kinds of the mixed mode with ``provider_writes``.
PROVIDER_KINDS = {'inventory': 10, 'create': 5}
PROJECTS_PER_RUN = 3


@dataclasses.dataclass
class Attempt:
    """A planned write: ``demands`` are allocations of the consumers it
    creates or moves, as ``{provider index: amount}``."""

    kind: str
    demands: list


def _demand(rng, providers):
    if rng.random() < SPLIT_SHARE:
        first, second = rng.sample(range(providers), 2)
        return {first: rng.randint(1, 2), second: rng.randint(1, 2)}
    return {rng.randrange(providers): rng.randint(1, 4)}


def mixed_kinds(provider_writes):
    """``{kind: weight}`` of the mixed mode."""
    kinds = dict(MIXED_KINDS)
    if provider_writes:
        kinds.update(PROVIDER_KINDS)
    return kinds


def plan(mode, attempts, providers, rng, provider_writes=False):
    """The attempts of a run, decided up front so demand is known."""
    kinds = {'put': ['put'], 'post': ['post']}.get(mode)
    weights = mixed_kinds(provider_writes)
    planned = []
    for _ in range(attempts):
        kind = (kinds or rng.choices(list(weights),
                                     list(weights.values())))[0]
        count = {'put': 1, 'post': rng.randint(2, 3), 'move': 2,
                 'delete': 0, 'inventory': 1, 'create': 0}[kind]
        planned.append(Attempt(kind, [_demand(rng, providers)
                                      for _ in range(count)]))
    return planned


def capacity_per_provider(planned, providers):
    """VCPU per provider so that demand exceeds capacity by a third.

    Demand is what the attempts would leave allocated if all succeeded:
    the consumers created, less an average consumer per delete (moves
    replace allocations).
    """
    created = [sum(d.values()) for a in planned if a.kind in ('put', 'post')
               for d in a.demands]
    deletes = sum(1 for a in planned if a.kind == 'delete')
    demand = sum(created) * (1 - deletes / max(1, len(created)))
    return max(1, round(demand * 3 / 4 / providers))


def create_provider(client, name, capacity):
    """A provider with ``capacity`` VCPU; returns its uuid."""
    rp = client.checked('POST', '/resource_providers', {'name': name})
    client.checked(
        'PUT', '/resource_providers/%s/inventories' % rp['uuid'],
        {'resource_provider_generation': rp['generation'],
         'inventories': {RESOURCE_CLASS: {'total': capacity,
                                          'max_unit': capacity}}})
    return rp['uuid']


def _message_shape(detail):
    """An error detail without its ids and numbers, for counting."""
    shape = ' '.join(str(detail).split())
    shape = re.sub('[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}', '{uuid}',
                   shape)
    return re.sub(r'\b\d+\b', '{n}', shape)


class Tally:
    """Counts of answers, shared by all client threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.attempts = 0
        self.successes_by_kind = collections.Counter()
        self.conflicts = collections.Counter()
        self.conflict_messages = collections.Counter()
        self.server_errors = 0
        self.other_statuses = collections.Counter()
        self.unanswered = collections.Counter()

    @property
    def successes(self):
        return sum(self.successes_by_kind.values())

    def record(self, kind, response):
        with self._lock:
            self.attempts += 1
            status = response.status
            if status is not None and 200 <= status < 300:
                self.successes_by_kind[kind] += 1
            elif status == 409:
                self.conflicts[response.error_code] += 1
                self.conflict_messages[
                    _message_shape(response.error_detail)] += 1
            elif status is not None and status >= 500:
                self.server_errors += 1
            elif status is None:
                self.unanswered[response.failure_kind] += 1
            else:
                self.other_statuses[status] += 1


class _ClientLoad:
    """One client thread's consumers and how it writes them.

    A consumer is only ever written by the thread that created it, so
    its generation is known without reading it; after an uncertain write
    the thread forgets the consumer (its generation is unknown).
    """

    def __init__(self, load, rng, url):
        self._load = load
        self._rng = rng
        self._client = placement_http.Client(url, load.token)
        self._generations = {}  # live consumer -> generation

    def run(self, attempts):
        try:
            for attempt in attempts:
                getattr(self, '_' + attempt.kind)(attempt)
        finally:
            self._client.close()

    def _state(self, demand):
        uuids = self._load.providers
        project = self._rng.choice(self._load.projects)
        return allocation_ledger.ConsumerState(
            {uuids[i]: {RESOURCE_CLASS: n} for i, n in demand.items()},
            project)

    def _put(self, attempt):
        consumer = str(uuid.uuid4())
        state = self._state(attempt.demands[0])
        self._write('put', 'PUT', '/allocations/%s' % consumer,
                    _body(state, None), {consumer: state})

    def _post(self, attempt):
        changes = {str(uuid.uuid4()): self._state(d)
                   for d in attempt.demands}
        self._write('post', 'POST', '/allocations',
                    {c: _body(s, None) for c, s in changes.items()},
                    changes)

    def _move(self, attempt):
        """Move up to two own consumers elsewhere in one POST."""
        live = sorted(self._generations)
        if not live:
            return self._post(attempt)
        moved = self._rng.sample(live, min(2, len(live)))
        changes = {c: self._state(d) for c, d in zip(moved, attempt.demands)}
        self._write('move', 'POST', '/allocations',
                    {c: _body(s, self._generations[c])
                     for c, s in changes.items()}, changes)

    def _delete(self, attempt):
        live = sorted(self._generations)
        if not live:
            return
        consumer = self._rng.choice(live)
        self._write('delete', 'DELETE', '/allocations/%s' % consumer, None,
                    {consumer: allocation_ledger.ABSENT})

    def _inventory(self, attempt):
        """Read a provider, then replace its inventories: VCPU as it
        was, MEMORY_MB with a new total (capacity checks are on VCPU)."""
        rp = self._load.providers[next(iter(attempt.demands[0]))]
        path = '/resource_providers/%s/inventories' % rp
        current = self._client.request('GET', path)
        if current.status != 200:
            self._load.tally.record('inventory', current)
            return
        inventories = {RESOURCE_CLASS: {'total': self._load.capacity,
                                        'max_unit': self._load.capacity},
                       'MEMORY_MB': {'total': self._rng.randint(1, 64) * 1024}}
        response = self._client.request('PUT', path, {
            'resource_provider_generation':
                current.body['resource_provider_generation'],
            'inventories': inventories})
        self._load.tally.record('inventory', response)
        self._load.ledger.record_provider_write(rp, response)

    def _create(self, attempt):
        name = 'allocation-writes-extra-%s' % uuid.uuid4()
        response = self._client.request('POST', '/resource_providers',
                                        {'name': name})
        self._load.tally.record('create', response)
        if response.status == 200:
            # list.append is atomic: no lock needed between clients.
            self._load.created_providers.append(response.body['uuid'])

    def _write(self, kind, method, path, body, changes):
        response = self._client.request(method, path, body)
        self._load.tally.record(kind, response)
        self._load.ledger.record(changes, response)
        status = response.status
        for consumer, state in changes.items():
            if status is None or status >= 500:
                self._generations.pop(consumer, None)
            elif 200 <= status < 300:
                if state.allocations:
                    self._generations[consumer] = (
                        self._generations.get(consumer, 0) + 1)
                else:
                    self._generations.pop(consumer, None)


class AllocationLoad:
    """A run: ``prepare`` creates providers, ``run`` writes concurrently,
    ``verify`` reads everything back. ``tally`` may be watched from other
    threads while ``run`` is going."""

    def __init__(self, url, token='admin', mode='put', clients=10,
                 providers=10, attempts=400, seed=1, provider_writes=False):
        # One URL, or a list: clients are spread over them round-robin.
        self.urls = [url] if isinstance(url, str) else list(url)
        self.url = self.urls[0]
        self.token = token
        self.mode = mode
        self.clients = clients
        self.provider_count = providers
        self.seed = seed
        self._rng = random.Random(seed)
        self.provider_writes = provider_writes
        self.planned = plan(mode, attempts, providers, self._rng,
                            provider_writes)
        self.capacity = capacity_per_provider(self.planned, providers)
        # Fresh per run (never from the seed): project usages are checked
        # and a server may hold earlier runs.
        self.projects = [str(uuid.uuid4()) for _ in range(PROJECTS_PER_RUN)]
        self.providers = []  # uuids in the order demands index them
        self.created_providers = []  # by 'create' attempts
        self.tally = Tally()
        self.ledger = allocation_ledger.Ledger()
        self.seconds = None

    def prepare(self):
        """Create the providers, each with ``capacity`` VCPU."""
        client = placement_http.Client(self.url, self.token)
        run = uuid.uuid4().hex[:8]
        try:
            for index in range(self.provider_count):
                rp = create_provider(client, 'allocation-writes-%s-%d' % (
                    run, index), self.capacity)
                self.ledger.providers[rp] = allocation_ledger.ProviderStart(
                    {RESOURCE_CLASS: self.capacity}, client.checked(
                        'GET', '/resource_providers/%s' % rp)['generation'])
                self.providers.append(rp)
        finally:
            client.close()

    def run(self):
        """Send all planned attempts from ``clients`` threads."""
        loads = [_ClientLoad(self, random.Random(self.seed * 1000 + i),
                             self.urls[i % len(self.urls)])
                 for i in range(self.clients)]
        threads = [threading.Thread(target=load.run,
                                    args=(self.planned[i::self.clients],))
                   for i, load in enumerate(loads)]
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.seconds = time.monotonic() - start

    def verify(self, urls=None):
        """Read everything back through ``urls`` (default: the load's)."""
        return allocation_ledger.verify(urls or self.urls, self.token,
                                        self.ledger)


def report(load, verification, out=sys.stdout):
    tally = load.tally
    rate = tally.successes / load.seconds if load.seconds else 0.0
    print('mode %s: %d clients, %d providers x %d %s, %d attempts in '
          '%.1f s' % (load.mode, load.clients, len(load.providers),
                      load.capacity, RESOURCE_CLASS, tally.attempts,
                      load.seconds), file=out)
    print('successful writes: %d (%.1f/s) %s' % (
        tally.successes, rate, dict(tally.successes_by_kind)), file=out)
    print('409 by code: %s' % (', '.join(
        '%s=%d' % item for item in sorted(tally.conflicts.items())) or '-'),
        file=out)
    for message, count in tally.conflict_messages.most_common():
        print('  %d x %s' % (count, message), file=out)
    print('5xx: %d' % tally.server_errors, file=out)
    print('no answer: %s' % (dict(tally.unanswered) or 0), file=out)
    print('other statuses: %s' % (dict(tally.other_statuses) or 0),
          file=out)
    print('unacknowledged writes found applied: %d of %d' % (
        verification.uncertain_applied, verification.uncertain_writes),
        file=out)
    if verification.ok:
        print('verification: OK (no provider over capacity; usages equal '
              'the acknowledged allocations)', file=out)
    else:
        print('verification: FAILED', file=out)
        for problem in verification.problems:
            print('  ' + problem, file=out)
