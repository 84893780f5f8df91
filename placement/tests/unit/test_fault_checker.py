"""The fault checker (``placement.tests.faults.checker``) on made-up
histories and commit streams, and the two stream parsers on samples of
what the databases print. The checker on real databases, broken on
purpose, is ``functional/test_faults.py``."""

from placement.tests.faults import checker
from placement.tests.faults import history as history_mod
from placement.tests.faults import stream
from placement.tests import placement_http

RP = 'a' * 8 + '-0000-0000-0000-' + '0' * 12


def _provider_txn(index, generation, total=8, reserved=0, ratio=1.0,
                  insert=False):
    changes = [stream.Change('resource_providers',
                             'insert' if insert else 'update',
                             {'id': 1, 'uuid': RP,
                              'generation': generation})]
    if total is not None:
        changes.append(stream.Change(
            'inventories', 'insert' if insert else 'update',
            {'id': 1, 'resource_provider_id': 1, 'resource_class_id': 0,
             'total': total, 'reserved': reserved,
             'allocation_ratio': ratio}))
    return stream.Transaction(index, changes)


def _inventory_write(history, generation, status, total=8):
    entry = history.begin(0, 'inventory', 'PUT', '/x', 'host')
    entry.intent = {'provider': RP, 'generation': generation,
                    'inventory': {'total': total, 'reserved': 0,
                                  'allocation_ratio': 1.0}}
    history.finish(entry, placement_http.Response(status))
    return entry


def test_an_inventory_write_of_the_same_values_is_its_generation_bump():
    """MariaDB logs no row for an UPDATE that changes nothing: the
    acknowledged write is the transaction that only bumped the
    generation."""
    history = history_mod.History()
    _inventory_write(history, 0, 200)
    _inventory_write(history, 1, 200)
    report = checker.Checker(history).check([
        _provider_txn(0, 0, total=None, insert=True),
        _provider_txn(1, 1),
        _provider_txn(2, 2, total=None)])
    assert report.ok, report.text()


def test_an_over_commit_after_an_inventory_change_is_reported_not_before():
    history = history_mod.History()
    _inventory_write(history, 0, 200)
    _inventory_write(history, 1, 200, total=2)
    claim = history.begin(0, 'claim', 'POST', '/claims', 'host')
    claim.intent = {'consumers': {'c1': {
        'user': checker.user_of(claim.id), 'allocations': {RP: 4},
        'generation': None}}}
    history.finish(claim, placement_http.Response(200))

    def allocation(index, used, user):
        return stream.Transaction(index, [
            stream.Change('users', 'insert',
                          {'id': index, 'external_id': user}),
            stream.Change('consumers', 'insert',
                          {'id': index, 'uuid': 'c1',
                           'user_id': index, 'generation': 1}),
            stream.Change('allocations', 'insert',
                          {'id': index, 'resource_provider_id': 1,
                           'consumer_id': 'c1',
                           'resource_class_id': 0, 'used': used})])

    early = allocation(2, 4, checker.user_of(claim.id))
    # Usage 4 of 8, then the inventory lowered to 2: allowed.
    created = _provider_txn(0, 0, total=None, insert=True)
    report = checker.Checker(history).check([
        created, _provider_txn(1, 1), early, _provider_txn(3, 2, total=2)])
    assert report.ok, report.text()
    # The same claim after the lowering over-commits.
    report = checker.Checker(history).check([
        created, _provider_txn(1, 1), _provider_txn(2, 2, total=2),
        allocation(3, 4, checker.user_of(claim.id))])
    assert len(report.anomalies['a']) == 1, report.text()
    assert 'from 0 to 4, capacity 2' in report.anomalies['a'][0]


def test_test_decoding_lines():
    txns = stream.parse_test_decoding([
        'BEGIN 700',
        "table public.allocations: INSERT: id[integer]:3 "
        "resource_provider_id[integer]:1 consumer_id[character varying]:"
        "'it''s' resource_class_id[integer]:0 used[integer]:2 "
        "created_at[timestamp without time zone]:'2026-12-07 10:00:00' "
        "updated_at[timestamp without time zone]:null",
        "table public.provider_change_log: INSERT: id[bigint]:9 "
        "resource_provider_id[integer]:1",
        'table public.inventories: UPDATE: id[integer]:1 '
        'allocation_ratio[double precision]:1.5',
        'table public.allocations: DELETE: id[integer]:2',
        'COMMIT 700',
        'BEGIN 701', 'COMMIT 701'])
    assert len(txns) == 1
    assert [(c.table, c.op) for c in txns[0].changes] == [
        ('allocations', 'insert'), ('inventories', 'update'),
        ('allocations', 'delete')]
    assert txns[0].changes[0].row == {
        'id': 3, 'resource_provider_id': 1, 'consumer_id': "it's",
        'resource_class_id': 0, 'used': 2,
        'created_at': '2026-12-07 10:00:00', 'updated_at': None}
    assert txns[0].changes[1].row['allocation_ratio'] == 1.5


def test_binlog_lines():
    columns = {'resource_providers': ['id', 'uuid', 'generation'],
               'allocations': ['id', 'consumer_id', 'used']}
    txns = stream.parse_binlog("""\
# at 100
BEGIN
/*!*/;
# at 200
### UPDATE `faults`.`resource_providers`
### WHERE
###   @1=1
###   @2='rp'
###   @3=4
### SET
###   @1=1
###   @2='rp'
###   @3=5
### DELETE FROM `faults`.`allocations`
### WHERE
###   @1=7
###   @2='c'
###   @3=-1 (4294967295)
### INSERT INTO `other`.`allocations`
### SET
###   @1=8
# at 300
#261207 10:00:00 server id 1  end_log_pos 400 CRC32 0x0 	Xid = 12
COMMIT/*!*/;
""".splitlines(), 'faults', columns)
    assert len(txns) == 1
    assert [(c.table, c.op, c.row) for c in txns[0].changes] == [
        ('resource_providers', 'update',
         {'id': 1, 'uuid': 'rp', 'generation': 5}),
        ('allocations', 'delete', {'id': 7, 'consumer_id': 'c',
                                   'used': -1})]
