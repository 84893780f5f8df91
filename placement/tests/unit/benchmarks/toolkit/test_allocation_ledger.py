"""The load tests' verification must catch what it claims to catch."""

from benchmarks.toolkit import allocation_ledger as ledger_mod
from placement.tests import placement_http

RP1, RP2 = 'rp-1', 'rp-2'


def _state(rp, amount, project='p'):
    return ledger_mod.ConsumerState({rp: {'VCPU': amount}}, project)


def _ledger(*writes):
    """A ledger after ``(changes, status)`` writes (None: no answer)."""
    ledger = ledger_mod.Ledger()
    for changes, status in writes:
        ledger.record(changes, placement_http.Response(status))
    return ledger


def _resolve(ledger, actual):
    problems = []
    applied = ledger_mod._resolve(ledger, actual, problems)
    return problems, applied


def test_refused_write_must_leave_the_previous_state():
    ledger = _ledger(({'c1': _state(RP1, 2)}, 204),
                     ({'c1': _state(RP2, 3)}, 409))
    assert _resolve(ledger, {'c1': _state(RP1, 2)}) == ([], 0)
    problems, _ = _resolve(ledger, {'c1': _state(RP2, 3)})
    assert problems


def test_acknowledged_write_must_be_present():
    ledger = _ledger(({'c1': _state(RP1, 2)}, 204))
    problems, _ = _resolve(ledger, {'c1': ledger_mod.ABSENT})
    assert problems


def test_unanswered_write_may_be_entirely_applied_or_absent():
    changes = {'c1': _state(RP1, 1), 'c2': _state(RP2, 1)}
    ledger = _ledger((changes, None))
    absent = {'c1': ledger_mod.ABSENT, 'c2': ledger_mod.ABSENT}
    assert _resolve(ledger, absent) == ([], 0)
    assert _resolve(ledger, changes) == ([], 1)
    problems, _ = _resolve(ledger, dict(absent, c1=changes['c1']))
    assert problems


class _FakeClient:
    """Answers 200 with the body given for a path, else 500."""

    def __init__(self, bodies):
        self._bodies = bodies

    def checked(self, method, path):
        return self._bodies[path]

    def request(self, method, path):
        if path in self._bodies:
            return placement_http.Response(200, self._bodies[path])
        return placement_http.Response(500, {'errors': [{'status': 500}]})


def _provider_problems(used, holders, generation=3, uncertain=False):
    """Problems of provider rp-1 (capacity 4, generation 1 at the start)
    after one acknowledged write of ``c1`` and one to two more writes
    naming it, the last of them uncertain if asked."""
    ledger = _ledger(({'c1': _state(RP1, 1)}, 204),
                     ({'c1': _state(RP1, used)}, 204),
                     ({'c2': _state(RP1, 1)}, None if uncertain else 409))
    ledger.providers[RP1] = ledger_mod.ProviderStart({'VCPU': 4}, 1)
    client = _FakeClient({
        '/resource_providers/rp-1/usages': {
            'resource_provider_generation': generation,
            'usages': {'VCPU': used}},
        '/resource_providers/rp-1/allocations': {'allocations': holders}})
    problems = []
    ledger_mod._check_providers(client, ledger, {'c1': _state(RP1, used)},
                                problems)
    return problems


def test_provider_checks():
    assert _provider_problems(4, {'c1': {}}) == []
    # over capacity
    assert _provider_problems(5, {'c1': {}})
    # a consumer nobody wrote
    assert _provider_problems(4, {'c1': {}, 'stranger': {}})


def test_provider_generation_counts_every_write_naming_it():
    assert _provider_problems(4, {'c1': {}}, generation=2)
    assert _provider_problems(4, {'c1': {}}, generation=4)
    assert _provider_problems(4, {'c1': {}}, generation=4,
                              uncertain=True) == []
    assert _provider_problems(4, {'c1': {}}, generation=5, uncertain=True)


def test_provider_usage_must_equal_its_consumers():
    ledger = _ledger()
    ledger.providers[RP1] = ledger_mod.ProviderStart({'VCPU': 4}, 0)
    client = _FakeClient({
        '/resource_providers/rp-1/usages': {
            'resource_provider_generation': 0, 'usages': {'VCPU': 3}},
        '/resource_providers/rp-1/allocations': {'allocations': {}}})
    problems = []
    ledger_mod._check_providers(client, ledger, {'c1': _state(RP1, 2)},
                                problems)
    assert problems


def test_project_usages_must_equal_its_consumers():
    client = _FakeClient({'/usages?project_id=p': {'usages': {
        'INSTANCE': {'VCPU': 2, 'consumer_count': 1},
        'unknown': {'VCPU': 1, 'consumer_count': 1}}}})
    problems = []
    ledger_mod._check_projects(
        client, {'c1': _state(RP1, 2), 'c2': _state(RP2, 1)}, problems)
    assert problems == []
    ledger_mod._check_projects(client, {'c1': _state(RP1, 2)}, problems)
    assert problems


def test_a_failing_project_usages_read_is_a_problem_not_a_crash():
    problems = []
    ledger_mod._check_projects(_FakeClient({}), {'c1': _state(RP1, 2)},
                               problems)
    assert len(problems) == 1 and 'answered' in problems[0]


class _ProbedClient:
    """Answers the no-record probe as a server holding ``records``."""

    def __init__(self, records):
        self.records = records

    def request(self, method, path, body):
        if path.rsplit('/', 1)[1] in self.records:
            return placement_http.Response(409, {'errors': [
                {'code': 'placement.concurrent_update'}]})
        return placement_http.Response(409, {'errors': [
            {'code': 'placement.undefined_code'}]})


def test_refused_and_deleted_consumers_must_leave_no_record():
    ledger = _ledger(({'c1': _state(RP1, 9)}, 409),
                     ({'c2': _state(RP1, 1)}, 204),
                     ({'c2': ledger_mod.ABSENT}, 204),
                     ({'c3': _state(RP1, 1)}, 204))
    actual = {'c1': ledger_mod.ABSENT, 'c2': ledger_mod.ABSENT,
              'c3': _state(RP1, 1)}
    ledger.providers[RP1] = ledger_mod.ProviderStart({'VCPU': 4}, 0)
    for records, bad in (((), []), (('c3',), []),
                         (('c1', 'c2'), ['c1', 'c2'])):
        problems = []
        ledger_mod._check_no_records(_ProbedClient(records), ledger, actual,
                                     problems)
        assert [p.split()[1] for p in problems] == bad
