"""``placement-status upgrade check``: is this deployment ready?

Exit 0 when every check succeeds, 1 with a warning, 2 with a failure and
255 when the checks themselves could not run.
"""

import json
import sys

from oslo_config import cfg
import prettytable

from placement import conf as placement_conf
from placement.db import data_migrations
from placement import deploy

SUCCESS, WARNING, FAILURE = 'Success', 'Warning', 'Failure'
EXIT_CODES = {SUCCESS: 0, WARNING: 1, FAILURE: 2}
RUN_MIGRATIONS = ('Run the "placement-manage db online_data_migrations" '
                  'command.')


def check_root_provider_ids(conf, db):
    if data_migrations.missing_root_provider_count(db):
        return FAILURE, (
            'There is at least one resource provider table record which '
            'misses its root provider id. ' + RUN_MIGRATIONS)
    return SUCCESS, None


def check_incomplete_consumers(conf, db):
    count = data_migrations.incomplete_consumer_count(db)
    if count:
        return WARNING, (
            'There are %d incomplete consumers table records for existing '
            'allocations. %s' % (count, RUN_MIGRATIONS))
    return SUCCESS, None


def check_policy_json(conf, db):
    """JSON policy files are deprecated in favour of YAML."""
    path = conf.find_file(conf.oslo_policy.policy_file)
    if not path:
        return SUCCESS, None
    with open(path, encoding='utf-8') as f:
        try:
            json.load(f)
        except ValueError:
            return SUCCESS, None
    return WARNING, (
        'The policy file %s is in JSON format, which is deprecated. Convert '
        'it to YAML with "oslopolicy-convert-json-to-yaml".' % path)


CHECKS = (
    ('Missing Root Provider IDs', check_root_provider_ids),
    ('Incomplete Consumers', check_incomplete_consumers),
    ('Policy File JSON to YAML Migration', check_policy_json),
)


def upgrade_check(conf):
    db = deploy.create_database(conf)
    try:
        results = [(name, check(conf, db)) for name, check in CHECKS]
    finally:
        db.dispose()
    table = prettytable.PrettyTable(['Upgrade Check Results'],
                                    hrules=prettytable.HRuleStyle.ALL)
    table.align = 'l'
    for name, (result, details) in results:
        table.add_row(['Check: %s\nResult: %s\nDetails: %s' % (
            name, result, details)])
    print(table)
    return max(EXIT_CODES[result] for _n, (result, _d) in results)


def _add_commands(subparsers):
    upgrade = subparsers.add_parser('upgrade', help='Upgrade readiness.')
    upgrade_sub = upgrade.add_subparsers(dest='action')
    upgrade_sub.add_parser('check', help='Run the upgrade checks.')


COMMAND = cfg.SubCommandOpt('category', title='Commands',
                            handler=_add_commands)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = placement_conf.build(
        argv, config_files=placement_conf.cli_config_files(),
        cli_opts=[COMMAND], prog='placement-status')
    if conf.category.name != 'upgrade' or conf.category.action != 'check':
        print('usage: placement-status upgrade check', file=sys.stderr)
        return 1
    try:
        return upgrade_check(conf)
    except Exception as exc:
        print('placement-status: %s' % exc, file=sys.stderr)
        return 255


if __name__ == '__main__':
    sys.exit(main())
