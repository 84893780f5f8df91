"""Scheduling by atomic claim against scheduling by read-then-write.

Run from the checkout root against any running Placement server with
``POST /claims`` (the ``read-write`` mode alone works on any server)::

    python3 -m benchmarks.claims --url http://127.0.0.1:8000 \\
        [--token admin] [--mode claim|read-write|both] [--clients 10] \\
        [--providers 20] [--capacity 4] [--tries 10]

Each mode creates ``--providers`` fresh providers of ``--capacity`` VCPU
in a new aggregate, then ``--clients`` threads (one keep-alive
connection each) place new consumers of ``VCPU:1`` in that aggregate
until every unit is taken, as a scheduler would:

``claim``       ``POST /claims`` (strategy ``pack``) once per consumer;
``read-write``  ``GET /allocation_candidates`` then ``PUT`` of the first
                candidate, and on a ``409`` the next candidate, at most
                ``--tries`` writes before searching again (at most
                ``SEARCHES`` times).

Demand is exactly the capacity, so every consumer fits somewhere. It
prints, per mode, consumers placed per second, requests per placement,
409s, 5xx and placements given up, then checks that every provider is
exactly full; it exits 1 if any check fails. ``both`` runs the two modes
one after the other on one server, for ratios. Standard library only.
"""

import argparse
import collections
import sys
import threading
import time
import uuid

from placement.tests import placement_http

MODES = ('claim', 'read-write')
#: Searches a read-write placement makes before giving up.
SEARCHES = 50


class Tally:
    """Counts shared by the client threads of one mode."""

    def __init__(self):
        self._lock = threading.Lock()
        self.counts = collections.Counter()
        #: Why placements were given up: {error detail: count}.
        self.reasons = collections.Counter()

    def add(self, reason=None, **counts):
        with self._lock:
            self.counts.update(counts)
            if reason is not None:
                self.reasons[' '.join(str(reason).split())] += 1


class Run:
    """One mode over its own providers: ``remaining`` consumers still
    to place, taken one at a time by the client threads."""

    def __init__(self, url, token, mode, clients, providers, capacity,
                 tries):
        self.url, self.token, self.mode = url, token, mode
        self.clients, self.tries = clients, tries
        self.capacity = capacity
        self.provider_count = providers
        self.aggregate = str(uuid.uuid4())
        self.providers = []
        self.remaining = providers * capacity
        self._lock = threading.Lock()
        self.tally = Tally()
        self.seconds = None

    def prepare(self):
        client = placement_http.Client(self.url, self.token)
        for _ in range(self.provider_count):
            rp = client.checked('POST', '/resource_providers', {
                'name': 'claims-bench-%s' % uuid.uuid4().hex[:12]})
            path = '/resource_providers/%s' % rp['uuid']
            generation = client.checked('PUT', path + '/inventories', {
                'resource_provider_generation': rp['generation'],
                'inventories': {'VCPU': {'total': self.capacity}},
            })['resource_provider_generation']
            client.checked('PUT', path + '/aggregates', {
                'aggregates': [self.aggregate],
                'resource_provider_generation': generation})
            self.providers.append(rp['uuid'])
        client.close()

    @property
    def query(self):
        return 'resources=VCPU:1&member_of=%s' % self.aggregate

    def _take(self):
        with self._lock:
            if self.remaining == 0:
                return False
            self.remaining -= 1
            return True

    def run(self):
        threads = [threading.Thread(target=self._client)
                   for _ in range(self.clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.seconds = time.perf_counter() - started

    def _client(self):
        client = placement_http.Client(self.url, self.token)
        place = self._claim if self.mode == 'claim' else self._read_write
        while self._take():
            place(client, str(uuid.uuid4()))
        client.close()

    def _count(self, response):
        """Tally one answer; True if it was a success."""
        status = response.status
        if status is None or status >= 500:
            self.tally.add(requests=1, server_errors=1)
        elif status == 409:
            self.tally.add(requests=1, conflicts=1)
        else:
            self.tally.add(requests=1)
        return status in (200, 204)

    def _claim(self, client, consumer):
        response = client.request('POST', '/claims', {
            'consumer_uuid': consumer, 'project_id': 'bench',
            'user_id': 'bench', 'consumer_type': 'INSTANCE',
            'consumer_generation': None, 'query': self.query,
            'strategy': 'pack'})
        if self._count(response):
            self.tally.add(placed=1)
        else:
            self.tally.add(given_up=1, reason=response.error_detail
                           or response.failure or response.status)

    def _read_write(self, client, consumer):
        # Searches again while candidates remain, as schedulers do.
        for _ in range(SEARCHES):
            response = client.request(
                'GET', '/allocation_candidates?' + self.query)
            if not self._count(response):
                self.tally.add(given_up=1)
                return
            candidates = response.body['allocation_requests']
            if not candidates:
                self.tally.add(given_up=1)
                return
            for candidate in candidates[:self.tries]:
                written = client.request(
                    'PUT', '/allocations/%s' % consumer, {
                        'allocations': candidate['allocations'],
                        'project_id': 'bench', 'user_id': 'bench',
                        'consumer_type': 'INSTANCE',
                        'consumer_generation': None})
                if self._count(written):
                    self.tally.add(placed=1)
                    return
        self.tally.add(given_up=1)

    def usages(self):
        client = placement_http.Client(self.url, self.token)
        used = [client.checked('GET', '/resource_providers/%s/usages'
                               % uuid_)['usages']['VCPU']
                for uuid_ in self.providers]
        client.close()
        return used

    def report(self, out):
        """Print the figures; return whether every check passed."""
        counts = self.tally.counts
        placed = counts['placed']
        used = self.usages()
        full = used == [self.capacity] * self.provider_count
        out.write(
            '%-10s placed %d of %d in %.2f s (%.1f/s), %.2f requests per '
            'placement, 409: %d, 5xx: %d, given up: %d, providers exactly '
            'full: %s\n' % (
                self.mode, placed, self.provider_count * self.capacity,
                self.seconds, placed / self.seconds,
                counts['requests'] / max(placed, 1), counts['conflicts'],
                counts['server_errors'], counts['given_up'], full))
        for reason, count in self.tally.reasons.most_common(5):
            out.write('    given up %d x: %s\n' % (count, reason[:300]))
        return (full and placed == self.provider_count * self.capacity
                and counts['server_errors'] == 0)


def main(argv=None, out=sys.stdout):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True)
    parser.add_argument('--token', default='admin')
    parser.add_argument('--mode', choices=MODES + ('both',), default='both')
    parser.add_argument('--clients', type=int, default=10)
    parser.add_argument('--providers', type=int, default=20)
    parser.add_argument('--capacity', type=int, default=4)
    parser.add_argument('--tries', type=int, default=10)
    args = parser.parse_args(argv)
    modes = MODES if args.mode == 'both' else (args.mode,)
    ok = True
    for mode in modes:
        run = Run(args.url, args.token, mode, args.clients, args.providers,
                  args.capacity, args.tries)
        run.prepare()
        run.run()
        ok = run.report(out) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
