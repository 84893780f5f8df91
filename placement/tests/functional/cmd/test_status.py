"""placement-manage and placement-status against a real database."""

import json

import pytest
import sqlalchemy as sa

from placement.cmd import manage
from placement.cmd import status
from placement.db import api as db_api
from placement.db import tables
from placement.db import triggers
from placement.tests import fixtures

INCOMPLETE = '00000000-0000-0000-0000-000000000000'


@pytest.fixture
def database():
    db, cleanup = fixtures.new_database()
    yield db
    cleanup()


@pytest.fixture
def config_file(database, tmp_path):
    path = tmp_path / 'placement.conf'
    url = database.engine.url.render_as_string(hide_password=False)
    path.write_text('[placement_database]\nconnection = %s\n' % url)
    return str(path)


def _run(main, config_file, capsys, *args):
    code = main(['--config-file', config_file] + list(args))
    return code, capsys.readouterr().out


def _checked(config_file, capsys, name):
    """(exit code, the JSON result of the check ``name``) of an upgrade
    check."""
    code, out = _run(status.main, config_file, capsys, 'upgrade', 'check',
                     '--json')
    (check,) = [c for c in json.loads(out)['checks'] if c['check'] == name]
    return code, check


def _add_old_data(db):
    """Rows as an old release left them: a rootless provider, and three
    allocations of two consumers that have no consumers row."""
    now = db_api.utcnow()
    with db.transaction(write=True) as conn:
        rp_id = conn.execute(sa.insert(tables.resource_providers).values(
            uuid='11111111-1111-1111-1111-111111111111', name='old',
            generation=1, created_at=now)).inserted_primary_key[0]
        conn.execute(sa.insert(tables.allocations), [
            {'resource_provider_id': rp_id, 'consumer_id': consumer,
             'resource_class_id': rc, 'used': 1, 'created_at': now}
            for consumer, rc in (('c1', 0), ('c1', 1), ('c2', 0))])
        conn.execute(sa.insert(tables.inventories), [
            {'resource_provider_id': rp_id, 'resource_class_id': rc,
             'total': 10, 'reserved': 0, 'min_unit': 1, 'max_unit': 10,
             'step_size': 1, 'allocation_ratio': 1.0, 'created_at': now}
            for rc in (0, 1)])
    return rp_id


def test_clean_database_passes_every_check(config_file, capsys):
    code, out = _run(status.main, config_file, capsys, 'upgrade', 'check')
    assert code == 0
    assert out.count('Result: Success') == 6


def test_old_data_fails_checks_until_migrated(database, config_file,
                                              capsys):
    rp_id = _add_old_data(database)
    code, out = _run(status.main, config_file, capsys, 'upgrade', 'check')
    assert code == 2
    assert 'Result: Failure' in out and 'Result: Warning' in out
    code, out = _run(status.main, config_file, capsys,
                     'upgrade', 'check', '--json')
    assert code == 2
    details = {c['check']: (c['result'], c['details'])
               for c in json.loads(out)['checks']}
    assert details['Missing Root Provider IDs'][0] == 2
    assert 'misses its root provider id' in (
        details['Missing Root Provider IDs'][1])
    assert details['Incomplete Consumers'] == (1, (
        'There are 2 incomplete consumers table records for existing '
        'allocations. Run the "placement-manage db online_data_migrations" '
        'command.'))

    code, out = _run(manage.main, config_file, capsys,
                     'db', 'online_data_migrations', '--max-count', '2')
    assert code == 1  # something was migrated: run again
    assert '1 rows matched query set_root_provider_ids, 1 migrated' in out
    assert '1 rows matched query create_incomplete_consumers, 1 migrated' in (
        out)

    code, out = _run(manage.main, config_file, capsys,
                     'db', 'online_data_migrations')
    assert code == 0
    assert out.startswith('Running batches of 50 until complete\n')
    assert '| create_incomplete_consumers |      1      |     1     |' in out

    with database.transaction(write=False) as conn:
        root = conn.execute(sa.select(
            tables.resource_providers.c.root_provider_id)).scalar_one()
        consumers = conn.execute(sa.select(
            tables.consumers.c.uuid, tables.projects.c.external_id,
            tables.users.c.external_id).join(
                tables.projects,
                tables.projects.c.id == tables.consumers.c.project_id).join(
                    tables.users,
                    tables.users.c.id == tables.consumers.c.user_id)).all()
    assert root == rp_id
    assert sorted(consumers) == [('c1', INCOMPLETE, INCOMPLETE),
                                 ('c2', INCOMPLETE, INCOMPLETE)]
    assert _run(status.main, config_file, capsys, 'upgrade', 'check')[0] == 0


def test_max_count_must_be_positive(config_file, capsys):
    code, out = _run(manage.main, config_file, capsys,
                     'db', 'online_data_migrations', '--max-count', '0')
    assert (code, out) == (127, 'Must supply a positive value for '
                                'max_count\n')


def test_clean_database_as_json(config_file, capsys):
    code, out = _run(status.main, config_file, capsys,
                     'upgrade', 'check', '--json')
    assert code == 0
    assert json.loads(out) == {'name': 'Upgrade Check Results', 'checks': [
        {'check': name, 'result': 0, 'details': None}
        for name in ('Missing Root Provider IDs', 'Incomplete Consumers',
                     'Policy File JSON to YAML Migration',
                     'Invalid Inventory And Allocation Rows',
                     'Providers Over Capacity', 'Change Log Triggers')]}


def test_json_policy_file_is_a_warning(config_file, tmp_path, capsys):
    # oslo.upgradecheck's shared check finds it; the level is ours.
    policy = tmp_path / 'policy.json'
    policy.write_text(json.dumps({'placement:traits:list': '@'}))
    with open(config_file, 'a') as f:
        f.write('[oslo_policy]\npolicy_file = %s\n' % policy)
    code, out = _run(status.main, config_file, capsys, 'upgrade', 'check')
    assert code == 1
    assert 'Result: Warning' in out and 'JSON-formatted' in out


def test_yaml_policy_file_passes(config_file, tmp_path, capsys):
    policy = tmp_path / 'policy.yaml'
    policy.write_text('"placement:traits:list": "@"\n')
    with open(config_file, 'a') as f:
        f.write('[oslo_policy]\npolicy_file = %s\n' % policy)
    assert _run(status.main, config_file, capsys,
                'upgrade', 'check')[0] == 0


def test_unreachable_database_is_an_error(tmp_path, capsys):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\nconnection = sqlite:///%s\n'
                    'max_retries = 0\n' % (tmp_path / 'no' / 'such.db'))
    assert status.main(['--config-file', str(path), 'upgrade',
                        'check']) == 255


def test_version_sync_and_stamp(tmp_path, capsys):
    path = tmp_path / 'placement.conf'
    path.write_text('[placement_database]\nconnection = sqlite:///%s\n'
                    % (tmp_path / 'fresh.db'))
    config = str(path)
    assert _run(manage.main, config, capsys, 'db', 'version') == (0, 'None\n')
    assert _run(manage.main, config, capsys, 'db', 'sync')[0] == 0
    code, out = _run(manage.main, config, capsys, 'db', 'version')
    assert code == 0 and out.strip() not in ('', 'None')
    assert _run(manage.main, config, capsys,
                'db', 'stamp', '422ece571366')[0] == 0
    assert _run(manage.main, config, capsys, 'db', 'version') == (
        0, '422ece571366\n')


def test_providers_over_capacity_are_a_warning(database, config_file,
                                               capsys):
    app = fixtures.new_app(fixtures.new_conf(), database)
    rp = '22222222-2222-4222-8222-222222222222'
    for method, path, body in (
            ('POST', '/resource_providers', {'name': 'cn1', 'uuid': rp}),
            ('PUT', '/resource_providers/%s/inventories' % rp,
             {'resource_provider_generation': 0,
              'inventories': {'VCPU': {'total': 8}}}),
            ('PUT', '/allocations/33333333-3333-4333-8333-333333333333',
             {'allocations': {rp: {'resources': {'VCPU': 6}}},
              'project_id': 'p', 'user_id': 'u',
              'consumer_generation': None, 'consumer_type': 'INSTANCE'})):
        assert fixtures.call_as_admin(app, method, path,
                                      body).status_int < 300
    code, out = _run(status.main, config_file, capsys, 'upgrade', 'check')
    assert code == 0
    # Reserving more than is free leaves it over capacity.
    assert fixtures.call_as_admin(
        app, 'PUT', '/resource_providers/%s/inventories/VCPU' % rp,
        {'resource_provider_generation': 2, 'total': 8,
         'reserved': 4}).status_int == 200
    code, check = _checked(config_file, capsys, 'Providers Over Capacity')
    assert code == 1
    assert check['result'] == 1
    assert check['details'].startswith(
        '1 provider inventories are over capacity')
    assert 'cn1 VCPU (6 used of 4)' in check['details']


#: A trigger the tests drop: the same name in either form of them.
DROPPED = 'placement_log_allocations_delete'


@pytest.fixture
def dropped_trigger(database):
    """``DROPPED`` dropped, for the test; created again after it (on a
    database server the next test of this worker shares the schema)."""
    on = ' ON allocations' if database.dialect == 'postgresql' else ''
    with database.transaction(write=True) as conn:
        assert triggers.missing(conn) == []
        conn.exec_driver_sql('DROP TRIGGER %s%s' % (DROPPED, on))
    yield DROPPED
    with database.transaction(write=True) as conn:
        triggers.create_missing(conn)


def test_a_missing_change_log_trigger_is_a_failure(
        dropped_trigger, config_file, capsys):
    """As on a Galera node that failed to apply the replicated DDL:
    writes to that table would go unseen by every worker's index."""
    name = dropped_trigger
    code, check = _checked(config_file, capsys, 'Change Log Triggers')
    assert code == 2
    assert check['result'] == 2
    assert check['details'].startswith(
        'The database lacks 1 of the triggers that log changes to '
        'providers (allocations.%s).' % name)


def test_missing_triggers_are_created_and_readers_reload(
        database, dropped_trigger, config_file, capsys):
    """``placement-manage db create_missing_triggers`` restores what the
    check reports missing, and logs a NULL row: every reader reloads,
    since writes made meanwhile were logged nowhere."""
    name = dropped_trigger
    with database.transaction(write=False) as conn:
        before = conn.execute(sa.select(sa.func.max(
            tables.provider_change_log.c.id))).scalar() or 0
    code = manage.main(['--config-file', config_file, 'db',
                        'create_missing_triggers'])
    out = capsys.readouterr().out
    assert code == 0
    assert 'allocations.%s' % name in out
    with database.transaction(write=False) as conn:
        assert triggers.missing(conn) == []
        logged = conn.execute(
            sa.select(tables.provider_change_log.c.resource_provider_id)
            .where(tables.provider_change_log.c.id > before)).all()
    assert [row[0] for row in logged] == [None]
    code, check = _checked(config_file, capsys, 'Change Log Triggers')
    assert code == 0 and check['result'] == 0
    assert manage.main(['--config-file', config_file, 'db',
                        'create_missing_triggers']) == 0
    assert 'No change log trigger is missing.' in capsys.readouterr().out
