"""[placement_database] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('placement_database', title='Placement database')

OPTS = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the placement database, e.g. '
                    'sqlite:////var/lib/placement/placement.db or '
                    'postgresql://placement:secret@db/placement.'),
    cfg.StrOpt('connection_parameters', default='',
               help='Extra query parameters appended to the connection URL.'),
    cfg.BoolOpt('sqlite_synchronous', default=True,
                help='Run SQLite with synchronous=FULL (True) or NORMAL.'),
    cfg.StrOpt('slave_connection', secret=True,
               help='Accepted for compatibility; all queries use '
                    '"connection".'),
    cfg.StrOpt('mysql_sql_mode', default='TRADITIONAL',
               help='sql_mode set on every MySQL session.'),
    cfg.IntOpt('mysql_wsrep_sync_wait', default=1, min=0, max=15,
               help='wsrep_sync_wait set on every session with a MariaDB '
                    'Galera node; ignored by other servers. The default, '
                    '1, makes each read wait until the node has applied '
                    'every write committed anywhere in the cluster before '
                    'the read began, so that a write acknowledged through '
                    'one node is seen by the next request through any '
                    'other. 0 leaves reads to the node\'s replication lag.'),
    cfg.BoolOpt('postgresql_prepared_statements', default=True,
                help='On PostgreSQL (psycopg2), prepare the most frequent '
                     'reads on the server once per connection instead of '
                     'having it parse and plan them at every request. '
                     'Turn off behind a pooler that hands each '
                     'transaction a different server session (PgBouncer '
                     'in transaction pooling mode): prepared statements '
                     'belong to a session. Ignored by other databases.'),
    cfg.IntOpt('connection_recycle_time', default=3600,
               help='Seconds after which a pooled connection is replaced.'),
    cfg.IntOpt('max_pool_size', help='Connection pool size.'),
    cfg.IntOpt('max_retries', default=10,
               help='Connection attempts at start-up (-1 = forever).'),
    cfg.IntOpt('retry_interval', default=10,
               help='Seconds between connection attempts at start-up.'),
    cfg.IntOpt('max_overflow', help='Connection pool overflow.'),
    cfg.IntOpt('connection_debug', default=0, min=0, max=100,
               help='SQL logging verbosity: 0 none, 50+ statements, '
                    '100 everything.'),
    cfg.BoolOpt('connection_trace', default=False,
                help='Accepted for compatibility; has no effect.'),
    cfg.IntOpt('pool_timeout', help='Seconds to wait for a pooled '
                                    'connection.'),
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Upgrade the schema to the latest revision when the '
                     'web service starts (same as "placement-manage db '
                     'sync").'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
