"""``placement-manage``: database administration."""

import sys

from oslo_config import cfg
import prettytable

from placement import conf as placement_conf
from placement.db import data_migrations
from placement.db import migration
from placement import deploy
from placement import exception
from placement.observability import version

#: Batch size of ``db online_data_migrations`` without ``--max-count``.
BATCH = 50


def _db_sync(conf, db):
    migration.upgrade(db)
    return 0


def _db_version(conf, db):
    print(migration.version(db))
    return 0


def _db_downgrade(conf, db):
    try:
        reached = migration.downgrade(db, conf.command.version)
    except migration.DowngradeRefused as exc:
        print('placement-manage: db downgrade: %s' % exc, file=sys.stderr)
        return 1
    print(reached)
    return 0


def _db_stamp(conf, db):
    migration.stamp(db, conf.command.version)
    return 0


def _db_create_missing_triggers(conf, db):
    try:
        created = migration.create_missing_triggers(db)
    except migration.NotAtHead as exc:
        print('placement-manage: db create_missing_triggers: %s' % exc,
              file=sys.stderr)
        return 1
    if created:
        print('Created the missing change log triggers (%s); every worker '
              'reloads its provider data at its next request.'
              % ', '.join(created))
    else:
        print('No change log trigger is missing.')
    return 0


def _run_batch(conf, db, budget, totals):
    """Run every data migration within ``budget`` records.

    Returns (records migrated, whether a migration failed).
    """
    migrated, failed = 0, False
    for migrate in data_migrations.MIGRATIONS:
        name = migrate.__name__
        if budget - migrated <= 0:
            break
        try:
            found, done = migrate(db, conf, budget - migrated)
        except Exception:
            print('Error attempting to run %s' % name)
            failed = True
            continue
        totals[name][0] += found
        totals[name][1] += done
        if found:
            print('%d rows matched query %s, %d migrated' % (
                found, name, done))
        migrated += done
    return migrated, failed


def _db_online_data_migrations(conf, db):
    """Exit 0 when done, 1 when a limited run should be repeated, 2 when
    a migration failed without progress, 127 on a bad --max-count."""
    max_count = conf.command.max_count
    totals = {m.__name__: [0, 0] for m in data_migrations.MIGRATIONS}
    if max_count is not None:
        if max_count < 1:
            print('Must supply a positive value for max_count')
            return 127
        migrated, failed = _run_batch(conf, db, max_count, totals)
    else:
        print('Running batches of %d until complete' % BATCH)
        failed = False
        while True:
            migrated, batch_failed = _run_batch(conf, db, BATCH, totals)
            failed = failed or batch_failed
            if not migrated:
                break
    table = prettytable.PrettyTable(['Migration', 'Total Found',
                                     'Completed'])
    for name, (found, done) in totals.items():
        table.add_row([name, found, done])
    print(table)
    if migrated:
        return 1
    return 2 if failed else 0


def _add_db_commands(subparsers):
    db_parser = subparsers.add_parser('db', help='Database commands.')
    db_sub = db_parser.add_subparsers(dest='db_command')
    db_sub.add_parser('sync', help='Upgrade the schema to the latest '
                                   'revision.').set_defaults(func=_db_sync)
    db_sub.add_parser('version', help='Print the current schema revision.'
                      ).set_defaults(func=_db_version)
    down = db_sub.add_parser(
        'downgrade', help='Undo the migrations above a revision, at '
                          'the lowest %s (upstream Placement 16.0.0); '
                          'stop the service first.'
                          % migration.downgrade_floor())
    down.add_argument('version', help='Revision id to go down to.')
    down.set_defaults(func=_db_downgrade)
    stamp = db_sub.add_parser('stamp', help='Record a revision without '
                                            'running migrations.')
    stamp.add_argument('version', help='Revision id, or "head".')
    stamp.set_defaults(func=_db_stamp)
    online = db_sub.add_parser(
        'online_data_migrations',
        help='Repair old data in batches while the service runs.')
    online.add_argument('--max-count', type=int, dest='max_count',
                        help='Migrate at most this many records, then '
                             'exit 1 if anything was migrated.')
    online.set_defaults(func=_db_online_data_migrations)
    db_sub.add_parser(
        'create_missing_triggers',
        help='Create the change log triggers this database (Galera: '
             'this node) lacks, as "placement-status upgrade check" '
             'reports them.').set_defaults(func=_db_create_missing_triggers)
    db_parser.set_defaults(func=None, parser=db_parser)


PROG = 'placement-manage'
COMMAND = cfg.SubCommandOpt('command', title='Commands',
                            handler=_add_db_commands)


def _build_conf(argv):
    return placement_conf.build(
        argv, config_files=placement_conf.cli_config_files(),
        cli_opts=[COMMAND], prog=PROG, version=version.version_string())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if (not [a for a in argv if not a.startswith('-')]
            and '--version' not in argv):
        # No category: show the usage and fail, as operators expect.
        try:
            _build_conf(['--help'])
        except SystemExit:
            pass
        return 1
    conf = _build_conf(argv)
    if conf.command.func is None:
        conf.command.parser.print_help()
        return 0
    try:
        db = deploy.create_database(conf)
    except (deploy.ConfigurationError, exception.DatabaseUnavailable) as exc:
        print('placement-manage: %s' % exc, file=sys.stderr)
        return 1
    return conf.command.func(conf, db)


if __name__ == '__main__':
    sys.exit(main())
