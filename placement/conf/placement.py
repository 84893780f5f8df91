"""[placement] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('placement', title='Placement behaviour')

INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

OPTS = [
    cfg.BoolOpt('randomize_allocation_candidates', default=False,
                help='Return a random sample when "limit" truncates the '
                     'allocation candidates, and shuffle them otherwise.'),
    cfg.StrOpt('incomplete_consumer_project_id',
               default=INCOMPLETE_CONSUMER_ID,
               help='Project id recorded for allocations written below '
                    'microversion 1.8.'),
    cfg.StrOpt('incomplete_consumer_user_id',
               default=INCOMPLETE_CONSUMER_ID,
               help='User id recorded for allocations written below '
                    'microversion 1.8.'),
    cfg.IntOpt('allocation_conflict_retry_count', default=10, min=0,
               help='Server-side retries of an allocation write that lost '
                    'a provider generation race.'),
    cfg.IntOpt('max_allocation_candidates', default=-1, min=-1,
               help='Stop generating allocation candidates after this many '
                    '(-1: unlimited; 0 behaves like 1).'),
    cfg.StrOpt('allocation_candidates_generation_strategy',
               default='depth-first',
               choices=[('depth-first', 'All candidates of one root first'),
                        ('breadth-first', 'One candidate per root in turn')],
               help='Order in which trees are visited when generating '
                    'allocation candidates.'),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)
