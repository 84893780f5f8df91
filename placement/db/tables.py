"""Table definitions at the latest schema revision.

Names of tables, columns, unique constraints and indexes follow the
upstream layout so an existing upstream database can be taken over.
"""

import sqlalchemy as sa

metadata = sa.MetaData()


def _timestamps():
    return [sa.Column('created_at', sa.DateTime),
            sa.Column('updated_at', sa.DateTime)]


resource_providers = sa.Table(
    'resource_providers', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('uuid', sa.String(36), nullable=False),
    sa.Column('name', sa.Unicode(200)),
    sa.Column('generation', sa.Integer),
    sa.Column('root_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id')),
    sa.Column('parent_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id')),
    sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
    sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
    sa.Index('resource_providers_root_provider_id_idx', 'root_provider_id'),
    sa.Index('resource_providers_parent_provider_id_idx',
             'parent_provider_id'),
)

inventories = sa.Table(
    'inventories', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False),
    sa.Column('total', sa.Integer, nullable=False),
    sa.Column('reserved', sa.Integer, nullable=False),
    sa.Column('min_unit', sa.Integer, nullable=False),
    sa.Column('max_unit', sa.Integer, nullable=False),
    sa.Column('step_size', sa.Integer, nullable=False),
    sa.Column('allocation_ratio', sa.Float, nullable=False),
    sa.UniqueConstraint(
        'resource_provider_id', 'resource_class_id',
        name='uniq_inventories0resource_provider_resource_class'),
    sa.Index('inventories_resource_class_id_idx', 'resource_class_id'),
)

allocations = sa.Table(
    'allocations', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('consumer_id', sa.String(36), nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False),
    sa.Column('used', sa.Integer, nullable=False),
    sa.Index('allocations_resource_provider_class_used_idx',
             'resource_provider_id', 'resource_class_id', 'used'),
    sa.Index('allocations_resource_class_id_idx', 'resource_class_id'),
    # Usages read the class and amount of a consumer's rows from the
    # index alone (migration 8b870f51e68b).
    sa.Index('allocations_consumer_id_class_used_idx',
             'consumer_id', 'resource_class_id', 'used'),
)

consumer_types = sa.Table(
    'consumer_types', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('name', sa.Unicode(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_consumer_types0name'),
)

consumers = sa.Table(
    'consumers', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('uuid', sa.String(36), nullable=False),
    sa.Column('project_id', sa.Integer, nullable=False),
    sa.Column('user_id', sa.Integer, nullable=False),
    sa.Column('generation', sa.Integer, nullable=False, default=0,
              server_default=sa.text('0')),
    sa.Column('consumer_type_id', sa.Integer,
              sa.ForeignKey('consumer_types.id',
                            name='consumers_consumer_type_id_fkey')),
    sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
    # The type too, so that usages by type read the project's consumers
    # from the index alone (migration c6f209155b76).
    sa.Index('consumers_project_id_consumer_type_id_uuid_idx',
             'project_id', 'consumer_type_id', 'uuid'),
    sa.Index('consumers_project_id_user_id_uuid_idx',
             'project_id', 'user_id', 'uuid'),
    sa.Index('consumers_consumer_type_id_idx', 'consumer_type_id'),
)

projects = sa.Table(
    'projects', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('external_id', sa.String(255), nullable=False),
    sa.UniqueConstraint('external_id', name='uniq_projects0external_id'),
)

users = sa.Table(
    'users', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False),
    sa.Column('external_id', sa.String(255), nullable=False),
    sa.UniqueConstraint('external_id', name='uniq_users0external_id'),
)

resource_classes = sa.Table(
    'resource_classes', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False,
              autoincrement=False),
    sa.Column('name', sa.String(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_resource_classes0name'),
)

traits = sa.Table(
    'traits', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, nullable=False,
              autoincrement=True),
    sa.Column('name', sa.Unicode(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_traits0name'),
)

resource_provider_traits = sa.Table(
    'resource_provider_traits', metadata,
    *_timestamps(),
    sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'),
              primary_key=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'),
              primary_key=True, nullable=False),
    sa.Index('resource_provider_traits_resource_provider_trait_idx',
             'resource_provider_id', 'trait_id'),
)

placement_aggregates = sa.Table(
    'placement_aggregates', metadata,
    *_timestamps(),
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36)),
    sa.UniqueConstraint('uuid', name='uniq_placement_aggregates0uuid'),
)

resource_provider_aggregates = sa.Table(
    'resource_provider_aggregates', metadata,
    *_timestamps(),
    sa.Column('resource_provider_id', sa.Integer, primary_key=True,
              nullable=False),
    sa.Column('aggregate_id', sa.Integer, primary_key=True, nullable=False),
    sa.Index('resource_provider_aggregates_aggregate_id_idx',
             'aggregate_id'),
)

# -- the provider change log (ours, not upstream's; see db/changes.py) ------

#: One row per provider change, inserted by triggers (db/changes.py). A
#: NULL provider means "every provider". SQLite's AUTOINCREMENT keeps ids
#: from being reused once the newest rows are deleted.
provider_change_log = sa.Table(
    'provider_change_log', metadata,
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'),
              primary_key=True, autoincrement=True),
    sa.Column('resource_provider_id', sa.Integer, nullable=True),
    sqlite_autoincrement=True,
)
