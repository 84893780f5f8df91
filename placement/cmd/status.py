"""``placement-status upgrade check``: is this deployment ready?

Built on oslo.upgradecheck like every OpenStack service's ``*-status``
tool, so ``--json`` and the common checks behave the same everywhere.
Exit 0 when every check succeeds, 1 with a warning, 2 with a failure and
255 when the checks themselves could not run (no usable database
configuration: one line on stderr saying why).
"""

import sys

from oslo_config import cfg
from oslo_upgradecheck import common_checks
from oslo_upgradecheck import upgradecheck

from placement import conf as placement_conf
from placement import context
from placement.db import data_migrations
from placement.db import triggers
from placement import deploy
from placement import exception
from placement.objects.candidates import provider_index
from placement.objects import fleet_totals
from placement.objects import invalid_rows
from placement.observability import version

#: oslo.upgradecheck's exit code when the checks could not run.
CHECKS_DID_NOT_RUN = 255
#: Invalid rows named in the warning; the others are counted.
LISTED_ROWS = 20
RUN_MIGRATIONS = ('Run the "placement-manage db online_data_migrations" '
                  'command.')


class Checks(upgradecheck.UpgradeCommands):
    """Placement's checks; the database is opened on first use."""

    def __init__(self, conf):
        super().__init__()
        self.conf = conf
        self._db = None
        self._upgrade_checks = (
            ('Missing Root Provider IDs', Checks._check_root_provider_ids),
            ('Incomplete Consumers', Checks._check_incomplete_consumers),
            ('Policy File JSON to YAML Migration',
             Checks._check_policy_json),
            ('Invalid Inventory And Allocation Rows',
             Checks._check_invalid_rows),
            ('Providers Over Capacity', Checks._check_over_capacity),
            ('Change Log Triggers', Checks._check_change_log_triggers),
        )

    @property
    def db(self):
        if self._db is None:
            self._db = deploy.create_database(self.conf)
        return self._db

    def check(self):
        try:
            self.db
        except (deploy.ConfigurationError,
                exception.DatabaseUnavailable) as exc:
            # Not a check result: nothing could be checked. One line,
            # with oslo.upgradecheck's code for that, not its traceback.
            print('placement-status: %s' % exc, file=sys.stderr)
            return CHECKS_DID_NOT_RUN
        try:
            return super().check()
        finally:
            if self._db is not None:
                self._db.dispose()

    def _check_policy_json(self):
        # The library's shared check reports a JSON policy file as a
        # Failure; for Placement it is a Warning (the file still works),
        # with the library's own advice kept as the details.
        result = common_checks.check_policy_json(self, conf=self.conf)
        if result.code == upgradecheck.Code.FAILURE:
            return upgradecheck.Result(upgradecheck.Code.WARNING,
                                       result.details)
        return result

    def _check_root_provider_ids(self):
        if data_migrations.missing_root_provider_count(self.db):
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'There is at least one resource provider table record '
                'which misses its root provider id. ' + RUN_MIGRATIONS)
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_incomplete_consumers(self):
        count = data_migrations.incomplete_consumer_count(self.db)
        if count:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'There are %d incomplete consumers table records for '
                'existing allocations. %s' % (count, RUN_MIGRATIONS))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_invalid_rows(self):
        found = invalid_rows.find(context.AdminContext(self.db))
        if not found:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        lines = [str(row) for row in found[:LISTED_ROWS]]
        if len(found) > LISTED_ROWS:
            lines.append('... and %d more.' % (len(found) - LISTED_ROWS))
        return upgradecheck.Result(
            upgradecheck.Code.WARNING,
            'There are %d inventory or allocation rows no write of this '
            'service makes (written by hand or by another program); the '
            'service leaves them out of allocation candidates until they '
            'are corrected:\n%s' % (len(found), '\n'.join(lines)))

    def _check_over_capacity(self):
        # Upstream only logs it when a write leaves a provider so; an
        # operator lowering a ratio or reserving more is told here.
        rows = fleet_totals.read(
            context.AdminContext(self.db, self.conf)).over_capacity()
        if rows:
            shown = ', '.join('%s %s (%d used of %d)' % (
                row.provider_name or row.provider_uuid, row.resource_class,
                row.used, row.capacity) for row in rows[:5])
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                '%d provider inventories are over capacity (usage above '
                'int((total - reserved) * allocation_ratio)): %s%s. Nothing '
                'more is allocated from them until usage falls; GET '
                '/capacity lists them all.' % (
                    len(rows), shown, ', ...' if len(rows) > 5 else ''))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_change_log_triggers(self):
        # Every worker learns of writes from the log the triggers write;
        # a table without them (a Galera node that failed to apply the
        # replicated DDL, a restore without triggers) goes unseen.
        with self.db.transaction(write=False) as conn:
            absent = triggers.missing(conn)
        if not absent:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        return upgradecheck.Result(
            upgradecheck.Code.FAILURE,
            'The database lacks %d of the triggers that log changes to '
            'providers (%s). Writes to those tables are not logged, so '
            'allocation candidates miss them until each worker reloads '
            'everything (up to %d seconds later). Run "placement-manage '
            'db create_missing_triggers" against this database; on a '
            'Galera cluster run this check against every node.'
            % (len(absent), ', '.join(absent), provider_index.MAX_AGE))


class _VersionedConfigOpts(cfg.ConfigOpts):
    """A ConfigOpts whose command line has ``--version``:
    ``upgradecheck.main`` parses it without one."""

    def __call__(self, *args, **kwargs):
        kwargs.setdefault('version', version.version_string())
        return super().__call__(*args, **kwargs)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = _VersionedConfigOpts()
    placement_conf.register_opts(conf)
    return upgradecheck.main(
        conf, 'placement', Checks(conf), argv=argv,
        default_config_files=placement_conf.cli_config_files())


if __name__ == '__main__':
    sys.exit(main())
