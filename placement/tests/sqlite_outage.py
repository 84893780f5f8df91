"""An SQLite database that a test can make unusable and usable again."""

from placement import context
from placement.db import api as db_api
from placement.db import migration
from placement.objects import resource_class
from placement.objects import trait


class SQLiteOutage:
    """An SQLite database whose directory can be taken away and back."""

    def __init__(self, tmp_path):
        self.home = tmp_path / 'home'
        self.away = tmp_path / 'away'
        self.home.mkdir()
        self.db = db_api.Database(
            'sqlite:///%s' % (self.home / 'placement.sqlite'))
        migration.create_schema_for_tests(self.db)
        ctx = context.AdminContext(self.db)
        resource_class.sync_standard(ctx)
        trait.sync_standard(ctx)

    def stop(self):
        # Open connections would keep working on the moved file.
        self.db.dispose()
        self.home.rename(self.away)

    def start(self):
        self.away.rename(self.home)
