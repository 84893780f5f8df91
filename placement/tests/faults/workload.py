"""Concurrent writes as a cloud sends them, to few small providers.

Each client is bound to one API host (round-robin over them, so on
Galera over every database node) and, until the run stops it, picks an
operation by weight:

``claim``      POST /claims of a new consumer (the service picks);
``put``        GET /allocation_candidates, then PUT /allocations of a new
               consumer to one of them, as nova's scheduler does;
``move``       GET a consumer, then POST /allocations of two consumers:
               it moves to another provider and a new migration consumer
               takes what it held, as nova's cold migration does;
``delete``     DELETE /allocations of a consumer;
``inventory``  GET a provider's VCPU inventory, then PUT it with another
               total, reserved or allocation_ratio (lower than its usage
               at times);
``race``       GET a consumer, then two clients on two hosts PUT new
               allocations for it at once with the generation read: at
               most one may win.

Every request goes to the history with an ``intent`` the checker uses
to recognise its effect (a user id of its own per write).
"""

import random
import threading
import time
import uuid

from placement.tests.faults import checker
from placement.tests.faults import history as history_mod
from placement.tests import placement_http

RC = 'VCPU'
PROJECT = 'faults-project'
PROVIDERS = 3
TOTAL = 8
WEIGHTS = {'claim': 20, 'put': 20, 'move': 15, 'delete': 30,
           'inventory': 8, 'race': 15}
#: Seconds a client waits after a 5xx or no answer, as a scheduler
#: would before trying again (the faults last seconds).
BACKOFF = 0.5
#: Seconds a client waits for an answer before it counts as unknown.
TIMEOUT = 30


def _amounts(body):
    """{provider: VCPU} of an allocations body ({rp: {'resources'}})."""
    return {rp: item['resources'].get(RC, 0)
            for rp, item in (body or {}).items()}


def _consumer_generations(consumer):
    """What a consumer's allocations body (GET /allocations, a claim's
    answer) shows of generations, for the checker's stale reads."""
    def observe(body):
        if not body.get('allocations'):
            return []
        return [(('consumer', consumer), body['consumer_generation'])] + [
            (('provider', rp), item['generation'])
            for rp, item in body['allocations'].items()]
    return observe


class Workload:
    """``prepare`` creates the providers; ``run`` sends operations from
    ``clients`` threads until ``stop`` is set (``sent`` counts the writes
    sent so far)."""

    def __init__(self, urls, history, seed=1, clients=6):
        self.urls = list(urls)
        self.history = history
        self.seed = seed
        self.clients = clients
        self.providers = []
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._live = []  # consumers that may hold allocations
        self.sent = 0  # write requests sent

    def prepare(self):
        """The providers, each with TOTAL VCPU, written as recorded
        writes: the checker explains their inventories as any other."""
        session = _Session(self, -1, self.urls[0], self.urls[0], None)
        values = {'total': TOTAL, 'reserved': 0, 'allocation_ratio': 1.0}
        try:
            for index in range(PROVIDERS):
                rp = session.client.checked('POST', '/resource_providers', {
                    'name': 'faults-%s-%d' % (uuid.uuid4().hex[:8], index)})
                path = '/resource_providers/%s/inventories' % rp['uuid']
                entry, _response = session._send(
                    'setup', 'PUT', path, lambda entry: (
                        {'resource_provider_generation': rp['generation'],
                         'inventories': {RC: dict(values, max_unit=TOTAL)}},
                        {'provider': rp['uuid'],
                         'generation': rp['generation'],
                         'inventory': values}))
                if entry.outcome != history_mod.ACK:
                    raise RuntimeError('could not set up %s: %s'
                                       % (path, entry.describe()))
                self.providers.append(rp['uuid'])
        finally:
            session.close()

    def run(self):
        threads = [threading.Thread(target=self._client, args=(i,),
                                    daemon=True)
                   for i in range(self.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    # -- shared state -----------------------------------------------------

    def _count(self, writes):
        with self._lock:
            self.sent += writes

    def _add_live(self, *consumers):
        with self._lock:
            self._live.extend(consumers)

    def _pick_live(self, rng, remove=False):
        with self._lock:
            if not self._live:
                return None
            index = rng.randrange(len(self._live))
            if remove:
                return self._live.pop(index)
            return self._live[index]

    # -- one client -------------------------------------------------------

    def _client(self, index):
        rng = random.Random(self.seed * 1000 + index)
        host = self.urls[index % len(self.urls)]
        peer = self.urls[(index + 1) % len(self.urls)]
        session = _Session(self, index, host, peer, rng)
        try:
            while not self.stop.is_set():
                kind = rng.choices(list(WEIGHTS), list(WEIGHTS.values()))[0]
                getattr(session, kind)()
        finally:
            session.close()


class _Session:
    """One client's connections (its host, and a peer host for races)."""

    def __init__(self, workload, index, host, peer, rng):
        self.w = workload
        self.index = index
        self.host = host
        self.peer = peer
        self.rng = rng
        self.client = placement_http.Client(host, timeout=TIMEOUT)
        self.peer_client = placement_http.Client(peer, timeout=TIMEOUT)

    def close(self):
        self.client.close()
        self.peer_client.close()

    def _send(self, kind, method, path, build=None, observe=None,
              client=None, host=None):
        """Send one request; ``build(entry)`` gives (body, intent) of a
        write, ``observe(body)`` the generations a read saw."""
        entry = self.w.history.begin(self.index, kind, method, path,
                                     host or self.host)
        body = None
        if build is not None:
            body, entry.intent = build(entry)
            self.w._count(1)
        response = (client or self.client).request(method, path, body)
        headers = response.headers
        self.w.history.finish(
            entry, response, headers.get('retry-after') if headers else None)
        if observe is not None and response.status == 200:
            entry.observed = observe(response.body)
        if response.status is None or response.status >= 500:
            time.sleep(BACKOFF)
        return entry, response

    def _consumer_body(self, entry, amounts, generation):
        return {'allocations': {rp: {'resources': {RC: n}}
                                for rp, n in amounts.items()},
                'project_id': PROJECT,
                'user_id': checker.user_of(entry.id),
                'consumer_generation': generation,
                'consumer_type': 'INSTANCE'}

    @staticmethod
    def _intent(entry, amounts, generation):
        return {'user': checker.user_of(entry.id), 'allocations': amounts,
                'generation': generation}

    def _read_consumer(self, consumer):
        """(generation, {rp: VCPU}) of a consumer, or None."""
        _entry, response = self._send(
            'read', 'GET', '/allocations/%s' % consumer,
            observe=_consumer_generations(consumer))
        if response.status != 200 or not response.body['allocations']:
            return None
        return (response.body['consumer_generation'],
                _amounts(response.body['allocations']))

    def _created(self, entry, consumer):
        if entry.outcome != history_mod.REFUSED:
            self.w._add_live(consumer)

    # -- operations -------------------------------------------------------

    def claim(self):
        consumer = str(uuid.uuid4())
        amount = self.rng.randint(1, 3)

        def build(entry):
            body = {'consumer_uuid': consumer, 'project_id': PROJECT,
                    'user_id': checker.user_of(entry.id),
                    'consumer_type': 'INSTANCE', 'consumer_generation': None,
                    'query': 'resources=%s:%d' % (RC, amount),
                    'strategy': self.rng.choice(('pack', 'spread'))}
            intent = self._intent(entry, None, None)
            intent['amount'] = amount
            return body, {'consumers': {consumer: intent}}

        entry, response = self._send('claim', 'POST', '/claims', build,
                                     observe=_consumer_generations(consumer))
        if entry.outcome == history_mod.ACK:
            entry.intent['consumers'][consumer]['allocations'] = _amounts(
                response.body['allocations'])
        self._created(entry, consumer)

    def put(self):
        amount = self.rng.randint(1, 3)
        _entry, response = self._send(
            'candidates', 'GET', '/allocation_candidates?resources=%s:%d'
            '&limit=5' % (RC, amount))
        if response.status != 200 or not response.body[
                'allocation_requests']:
            return
        chosen = _amounts(self.rng.choice(
            response.body['allocation_requests'])['allocations'])
        consumer = str(uuid.uuid4())
        entry, _response = self._send(
            'put', 'PUT', '/allocations/%s' % consumer, lambda entry: (
                self._consumer_body(entry, chosen, None),
                {'consumers': {consumer: self._intent(entry, chosen,
                                                      None)}}))
        self._created(entry, consumer)

    def move(self):
        consumer = self.w._pick_live(self.rng)
        read = consumer and self._read_consumer(consumer)
        if not read:
            return
        generation, held = read
        amount = sum(held.values())
        targets = [rp for rp in self.w.providers if rp not in held]
        if not targets:
            return
        dest = {self.rng.choice(targets): amount}
        migration = str(uuid.uuid4())

        def build(entry):
            return ({consumer: self._consumer_body(entry, dest, generation),
                     migration: self._consumer_body(entry, held, None)},
                    {'consumers': {
                        consumer: self._intent(entry, dest, generation),
                        migration: self._intent(entry, held, None)}})

        entry, _response = self._send('move', 'POST', '/allocations', build)
        self._created(entry, migration)

    def delete(self):
        consumer = self.w._pick_live(self.rng, remove=True)
        if consumer is None:
            return
        entry, response = self._send(
            'delete', 'DELETE', '/allocations/%s' % consumer,
            lambda entry: (None, {'deleted': consumer}))
        if entry.outcome == history_mod.UNKNOWN or response.status == 409:
            # Maybe still there: deleted again later, as an operator
            # would (a consumer left out would hold its capacity for
            # the rest of the run).
            self.w._add_live(consumer)

    def inventory(self):
        rp = self.rng.choice(self.w.providers)
        path = '/resource_providers/%s/inventories/%s' % (rp, RC)
        _entry, response = self._send(
            'read', 'GET', path, observe=lambda body: [
                (('provider', rp), body['resource_provider_generation'])])
        if response.status != 200:
            return
        total = self.rng.randint(TOTAL - 2, TOTAL + 2)
        values = {'total': total, 'reserved': self.rng.randint(0, 2),
                  'allocation_ratio': self.rng.choice((1.0, 1.5, 2.0))}
        generation = response.body['resource_provider_generation']
        self._send('inventory', 'PUT', path, lambda entry: (
            dict(values, resource_provider_generation=generation,
                 max_unit=total),
            {'provider': rp, 'generation': generation,
             'inventory': values}), observe=lambda body: [
                 (('provider', rp), body['resource_provider_generation'])])

    def race(self):
        consumer = self.w._pick_live(self.rng)
        read = consumer and self._read_consumer(consumer)
        if not read:
            return
        generation = read[0]
        start = threading.Barrier(2)
        wanted = [{self.rng.choice(self.w.providers): self.rng.randint(1, 3)}
                  for _ in range(2)]

        def one(client, host, amounts):
            start.wait()
            self._send('race', 'PUT', '/allocations/%s' % consumer,
                       lambda entry: (
                           self._consumer_body(entry, amounts, generation),
                           {'consumers': {consumer: self._intent(
                               entry, amounts, generation)}}),
                       client=client, host=host)

        other = threading.Thread(target=one, args=(
            self.peer_client, self.peer, wanted[1]))
        other.start()
        one(self.client, self.host, wanted[0])
        other.join()
