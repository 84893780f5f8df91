"""What clients were told about their allocation writes, and the proof
that the server's state agrees with it.

Every write a load client sends is recorded with the consumer states it
asks for. Its answer decides what the server must hold afterwards:

* 2xx: the new states (acknowledged);
* 4xx: the previous states (a refused write leaves nothing behind);
* 5xx or no answer (crash, timeout): *uncertain* - the server may hold
  either all previous or all new states of the request, never a mix.
  Load clients stop using such consumers, so a consumer has at most one
  uncertain write, which verification resolves by reading it back.

``verify`` then reads everything back through the API and checks that
consumers, provider usages, provider generations and project usages
agree with the ledger, that consumers refused or deleted left no record,
and that no provider is used beyond its capacity.
"""

import collections
import dataclasses
import threading
import urllib.parse

from placement.tests import placement_http


@dataclasses.dataclass
class ConsumerState:
    """A consumer's allocations ``{provider: {class: amount}}`` and
    project; no allocations means the consumer does not exist."""

    allocations: dict
    project_id: object = None


ABSENT = ConsumerState({})


def allocation_body(state, generation):
    """The 1.39 body writing one consumer's ``state``."""
    return {
        'allocations': {rp: {'resources': resources}
                        for rp, resources in state.allocations.items()},
        'project_id': state.project_id,
        'user_id': 'allocation-writes',
        'consumer_generation': generation,
        'consumer_type': 'INSTANCE',
    }


@dataclasses.dataclass
class ProviderStart:
    """A provider before the load: ``{class: capacity}`` and generation."""

    capacity: dict
    generation: int


class Ledger:
    """The load's providers, acknowledged consumer states, uncertain
    writes, and how many writes named each provider."""

    def __init__(self):
        self._lock = threading.Lock()
        self.providers = {}  # uuid -> ProviderStart
        # Every allocation write bumps the generation of each provider
        # its new allocations name, once.
        self.provider_writes = collections.Counter()
        self.uncertain_provider_writes = collections.Counter()
        self.acknowledged = {}
        # consumer -> (state it may have instead, index into uncertain_writes)
        self.uncertain = {}
        # one list of consumers per uncertain write
        self.uncertain_writes = []

    def record(self, changes, response):
        """Note a write asking for ``changes`` ({consumer: state})."""
        with self._lock:
            for consumer in changes:
                self.acknowledged.setdefault(consumer, ABSENT)
            named = {rp for state in changes.values()
                     for rp in state.allocations}
            status = response.status
            if status is not None and 200 <= status < 300:
                self.acknowledged.update(changes)
                self.provider_writes.update(named)
            elif status is None or status >= 500:
                self.uncertain_provider_writes.update(named)
                index = len(self.uncertain_writes)
                self.uncertain_writes.append(sorted(changes))
                for consumer, state in changes.items():
                    self.uncertain[consumer] = (state, index)

    def record_provider_write(self, rp, response):
        """Note a write that bumps provider ``rp``'s generation once
        (an inventory update) without changing any consumer."""
        with self._lock:
            status = response.status
            if status is not None and 200 <= status < 300:
                self.provider_writes[rp] += 1
            elif status is None or status >= 500:
                self.uncertain_provider_writes[rp] += 1

    def consumers(self):
        return sorted(self.acknowledged)


@dataclasses.dataclass
class Verification:
    problems: list
    uncertain_writes: int
    uncertain_applied: int

    @property
    def ok(self):
        return not self.problems


def read_consumer(client, consumer):
    body = client.checked('GET', '/allocations/%s' % consumer)
    allocations = {rp: dict(item['resources'])
                   for rp, item in body['allocations'].items()}
    if not allocations:
        return ABSENT
    return ConsumerState(allocations, body.get('project_id'))


def _read_consumers(urls, token, consumers, threads):
    """``{consumer: ConsumerState}`` as the servers report them now, each
    consumer read through one of ``urls`` (round-robin)."""
    found = {}
    chunks = [(urls[i % len(urls)], consumers[i::threads])
              for i in range(threads)]

    def read_chunk(url, chunk):
        client = placement_http.Client(url, token)
        try:
            for consumer in chunk:
                found[consumer] = read_consumer(client, consumer)
        finally:
            client.close()

    workers = [threading.Thread(target=read_chunk, args=chunk)
               for chunk in chunks]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    missing = set(consumers) - set(found)
    if missing:
        raise RuntimeError('could not read %d consumers back' % len(missing))
    return found


def _resolve(ledger, actual, problems):
    """Check consumers against the ledger; return how many uncertain
    writes turned out applied."""
    applied = 0
    for consumer in ledger.consumers():
        if consumer not in ledger.uncertain and (
                actual[consumer] != ledger.acknowledged[consumer]):
            problems.append('consumer %s holds %s, acknowledged %s' % (
                consumer, actual[consumer], ledger.acknowledged[consumer]))
    for index, consumers in enumerate(ledger.uncertain_writes):
        old = [actual[c] == ledger.acknowledged[c] for c in consumers]
        new = [actual[c] == ledger.uncertain[c][0] for c in consumers]
        if all(new) and not all(old):
            applied += 1
        elif not all(old) and not all(new):
            problems.append(
                'unacknowledged write %d over %s is partly applied: %s' % (
                    index, consumers, [actual[c] for c in consumers]))
    return applied


def _check_no_records(client, ledger, actual, problems):
    """Consumers that must not exist have no record without allocations
    either (invisible to reads, but the next ``null`` write would fail).

    The probe asks for more than a provider holds with generation null:
    without a record it is refused for the amount, which removes the
    record it created; with one, for the consumer generation.
    """
    rp, start = sorted(ledger.providers.items())[0]
    probe = allocation_body(ConsumerState(
        {rp: {rc: amount + 1 for rc, amount in start.capacity.items()}},
        'allocation-writes-probe'), None)
    for consumer in ledger.consumers():
        if (consumer in ledger.uncertain or actual[consumer] != ABSENT
                or ledger.acknowledged[consumer] != ABSENT):
            continue
        resp = client.request('PUT', '/allocations/%s' % consumer, probe)
        if (resp.status != 409
                or resp.error_code == 'placement.concurrent_update'):
            problems.append('consumer %s was left behind without '
                            'allocations: probe answered %r'
                            % (consumer, resp))


def _check_providers(client, ledger, actual, problems):
    """Usage within capacity, equal to the consumers' allocations, and
    held by no consumer the ledger does not know; generation bumped once
    per write naming the provider (none lost, none extra)."""
    expected = collections.Counter()
    for state in actual.values():
        for rp, resources in state.allocations.items():
            for rc, amount in resources.items():
                expected[rp, rc] += amount
    for rp, start in sorted(ledger.providers.items()):
        capacity = start.capacity
        body = client.checked('GET', '/resource_providers/%s/usages' % rp)
        lowest = start.generation + ledger.provider_writes[rp]
        highest = lowest + ledger.uncertain_provider_writes[rp]
        if not lowest <= body['resource_provider_generation'] <= highest:
            problems.append('provider %s has generation %d, expected %s' % (
                rp, body['resource_provider_generation'],
                lowest if lowest == highest else '%d-%d' % (lowest, highest)))
        for rc, used in sorted(body['usages'].items()):
            if used > capacity.get(rc, 0):
                problems.append('provider %s uses %d %s beyond capacity %s'
                                % (rp, used, rc, capacity.get(rc)))
            if used != expected[rp, rc]:
                problems.append(
                    'provider %s uses %d %s, its consumers hold %d'
                    % (rp, used, rc, expected[rp, rc]))
        holders = client.checked(
            'GET', '/resource_providers/%s/allocations' % rp)['allocations']
        strangers = sorted(set(holders) - set(actual))
        if strangers:
            problems.append('provider %s has allocations of unknown '
                            'consumers %s' % (rp, strangers))


def _check_projects(client, actual, problems):
    """``GET /usages`` per project equals its consumers' allocations."""
    expected = collections.defaultdict(collections.Counter)
    for state in actual.values():
        for resources in state.allocations.values():
            expected[state.project_id].update(resources)
    for project, totals in sorted(expected.items()):
        query = urllib.parse.urlencode({'project_id': project})
        resp = client.request('GET', '/usages?' + query)
        if resp.status != 200:
            problems.append('GET /usages?%s answered %r' % (query, resp))
            continue
        reported = collections.Counter()
        for group in resp.body['usages'].values():
            reported.update({rc: amount for rc, amount in group.items()
                             if rc != 'consumer_count'})
        if reported != totals:
            problems.append('project %s usages %s, its consumers hold %s'
                            % (project, dict(reported), dict(totals)))


def verify(url, token, ledger, threads=4):
    """Read the server's state back and compare it with ``ledger``.

    ``url`` may be a list of servers sharing one database: consumers are
    then read through all of them in turn, and provider and project
    usages through each of them.
    """
    urls = [url] if isinstance(url, str) else list(url)
    problems = []
    actual = _read_consumers(urls, token, ledger.consumers(),
                             max(threads, len(urls)))
    applied = _resolve(ledger, actual, problems)
    for index, server in enumerate(urls):
        client = placement_http.Client(server, token)
        found = []
        try:
            if index == 0:
                _check_no_records(client, ledger, actual, found)
            _check_providers(client, ledger, actual, found)
            _check_projects(client, actual, found)
        finally:
            client.close()
        if found and len(urls) > 1:
            found.insert(0, 'read through %s:' % server)
        problems.extend(found)
    return Verification(problems, len(ledger.uncertain_writes), applied)
