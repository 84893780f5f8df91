"""[placement] options."""

from oslo_config import cfg

GROUP = cfg.OptGroup('placement', title='Placement behaviour')

INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

# Bounds on the work of one candidates query (api-ref/behaviour-choices.rst,
# 'Bounded candidates queries').
#: About 2-4 seconds of one core when every step is a failed arrangement.
DEFAULT_MAX_CANDIDATE_SEARCH_STEPS = 2000000
#: The 300 granular groups the default request line is sized for, and
#: then some.
DEFAULT_MAX_REQUEST_GROUPS = 500
#: 300 groups of two classes and a few traits each.
DEFAULT_MAX_REQUEST_TERMS = 2000

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
    cfg.IntOpt('max_candidate_search_steps',
               default=DEFAULT_MAX_CANDIDATE_SEARCH_STEPS, min=-1,
               help='Most combinations one allocation candidates search '
                    '(GET /allocation_candidates, its explain, POST '
                    '/claims) may examine before it gives up with 400: '
                    'request groups that cannot be combined (more groups '
                    'than room) make the search try every arrangement, '
                    'which grows factorially. The default takes a few '
                    'seconds of CPU at most and still serves an '
                    'unlimited request of a million candidates. -1: '
                    'unbounded.'),
    cfg.IntOpt('max_request_groups', default=DEFAULT_MAX_REQUEST_GROUPS,
               min=1,
               help='Most request groups (the unsuffixed one and each '
                    'resources/required/member_of/in_tree suffix) one '
                    'allocation candidates query may name; more are '
                    'answered 400. Each group is matched against every '
                    'provider.'),
    cfg.IntOpt('max_request_terms', default=DEFAULT_MAX_REQUEST_TERMS,
               min=1,
               help='Most terms (resource amounts, trait names and '
                    'aggregate uuids, over all groups, root_required and '
                    'same_subtree) one allocation candidates query may '
                    'name; more are answered 400.'),
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
