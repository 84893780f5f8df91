"""``placement-manage``: database administration (spec 15 §1)."""

import sys

from oslo_config import cfg

from placement import conf as placement_conf
from placement.db import migration
from placement import deploy


def _db_sync(conf, db):
    migration.upgrade(db)
    return 0


def _db_version(conf, db):
    print(migration.version(db))
    return 0


def _db_stamp(conf, db):
    migration.stamp(db, conf.command.version)
    return 0


def _add_db_commands(subparsers):
    db_parser = subparsers.add_parser('db', help='Database commands.')
    db_sub = db_parser.add_subparsers(dest='db_command')
    db_sub.add_parser('sync', help='Upgrade the schema to the latest '
                                   'revision.').set_defaults(func=_db_sync)
    db_sub.add_parser('version', help='Print the current schema revision.'
                      ).set_defaults(func=_db_version)
    stamp = db_sub.add_parser('stamp', help='Record a revision without '
                                            'running migrations.')
    stamp.add_argument('version', help='Revision id, or "head".')
    stamp.set_defaults(func=_db_stamp)
    db_parser.set_defaults(func=None, parser=db_parser)


PROG = 'placement-manage'
COMMAND = cfg.SubCommandOpt('command', title='Commands',
                            handler=_add_db_commands)


def _build_conf(argv):
    return placement_conf.build(
        argv, config_files=placement_conf.cli_config_files(),
        cli_opts=[COMMAND], prog=PROG)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not [a for a in argv if not a.startswith('-')]:
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
    except deploy.ConfigurationError as exc:
        print('placement-manage: %s' % exc, file=sys.stderr)
        return 1
    return conf.command.func(conf, db)


if __name__ == '__main__':
    sys.exit(main())
