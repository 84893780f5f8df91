"""GET /allocation_candidates: parse, check, search, shape.

The query is validated in upstream Placement's order: schema, request-wide
parameters, request groups (keys in query order), group consistency,
trait conflicts, the ``group_policy`` requirement; unknown names are
reported by the engine during the search.
"""

import contextlib
import re

from placement import exception
from placement import microversion
from placement.handlers import candidate_rendering as rendering
from placement.handlers import params as filters
from placement.objects.candidates import engine as ac_obj
from placement.openapi import contract
from placement.schemas import allocation_candidate as schema
from placement.web import errors
from placement.web import negotiation
from placement.web import responses
from placement.web import validation

SCHEMAS = (('1.10', schema.V1_10), ('1.16', schema.V1_16),
           ('1.17', schema.V1_17), ('1.21', schema.V1_21),
           ('1.25', schema.V1_25), ('1.31', schema.V1_31),
           ('1.33', schema.V1_33), ('1.35', schema.V1_35),
           ('1.36', schema.V1_36))

_GROUP_KEY = re.compile('^(resources|required|member_of|in_tree)(.*)$')
_INVALID_QUERY = 'Invalid query string parameters: '


class _Group:
    """What the query says about one request group, while parsing."""

    def __init__(self, suffix):
        self.suffix = suffix
        self.resources = {}
        self.required = None
        self.member_of = None
        self.in_tree = None
        self.keys = set()

    def to_request_group(self):
        required = self.required or filters.RequiredTraits([], frozenset())
        member_of = self.member_of or filters.MemberOf([], frozenset())
        return ac_obj.RequestGroup(
            suffix=self.suffix, resources=self.resources,
            required=list(required.terms), forbidden=required.forbidden,
            member_of=list(member_of.terms),
            forbidden_aggregates=member_of.forbidden, in_tree=self.in_tree)


@contract.describe(
    {200: schema.CANDIDATES}, query=SCHEMAS)
@microversion.serves('1.10')
@negotiation.accept_json
def list_allocation_candidates(req):
    ctx = negotiation.context(req)
    ctx.can('placement:allocation_candidates:list')
    version = negotiation.version(req)
    conf = ctx.config.placement
    request = parsed_request(req, version, conf)
    options = ac_obj.Options(
        max_candidates=conf.max_allocation_candidates,
        randomize=conf.randomize_allocation_candidates,
        breadth_first=(conf.allocation_candidates_generation_strategy
                       == 'breadth-first'),
        max_search_steps=conf.max_candidate_search_steps)
    requested = {rc for g in request.groups for rc in g.resources}
    with unknown_names_rejected(), responses.collector_paused():
        # Encoded while the collector is paused: what is built for it
        # is freed before the collector runs again (it would otherwise
        # scan it all, see responses.collector_paused).
        body = ac_obj.find(ctx, request, options, present=(
            lambda result: rendering.encoded(result, version, requested)),
            rendering=rendering.fragments(version))
    return responses.json_response(req, body, last_modified=responses.now())


#: Queries that parsed, by (query string, microversion, bounds): a
#: scheduler asks the same few again and again, and parsing one costs
#: more than finding its candidates when they are kept (``memo``).
#: Requests are shared, never changed. Emptied when full.
_PARSED = {}
MAX_PARSED = 128


def parsed_request(req, version, conf):
    """``parse_request``, of a query string parsed before if it was,
    under the same microversion and bounds: the same text gives the
    same Request. One that fails is parsed (and fails) every time."""
    key = (req.query_string, version, conf.max_request_groups,
           conf.max_request_terms)
    request = _PARSED.get(key)
    if request is None:
        request = parse_request(req, version, conf)
        if len(_PARSED) >= MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = request
    return request


def parse_request(req, version, conf):
    """The query of ``req`` as an ``engine.Request``, or
    the 400 its first error earns (unknown names are found later, by
    the engine: see ``unknown_names_rejected``). ``conf`` is the
    ``[placement]`` group, whose bounds the query must keep."""
    params = validation.validate_query(
        req, microversion.choose(version, SCHEMAS))
    _check_group_count(params, conf.max_request_groups)
    limit = _limit(params)
    isolate = params.getall('group_policy')[:1] == ['isolate']
    root_required, root_forbidden = _root_required(params)
    same_subtree = _same_subtree(params)
    groups = _groups(params, version)
    _check_groups(groups, same_subtree, version)
    _check_conflicts(groups, version)
    if (version >= microversion.GRANULAR_GROUPS
            and 'group_policy' not in params
            and sum(1 for g in groups if g.suffix) > 1):
        raise errors.BadRequest(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')
    request = ac_obj.Request(
        groups=[g.to_request_group() for g in groups], isolate=isolate,
        root_required=root_required, root_forbidden=root_forbidden,
        same_subtree=same_subtree, limit=limit,
        nested_aware=version >= microversion.NESTED_CANDIDATES)
    _check_term_count(request, conf.max_request_terms)
    return request


@contextlib.contextmanager
def unknown_names_rejected():
    """Unknown classes and traits the engine finds become 400s."""
    try:
        yield
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest(str(exc))
    except exception.CandidateSearchTooLarge as exc:
        raise errors.BadRequest(str(exc), code=errors.QUERY_TOO_LARGE)


# -- bounds on one query's work (behaviour-choices, 'Bounded candidates
# queries') ------------------------------------------------------------------

def _too_large(count, what, option, limit):
    raise errors.BadRequest(
        'The query names %d %s, more than [placement] %s (%d) allows.'
        % (count, what, option, limit), code=errors.QUERY_TOO_LARGE)


def _check_group_count(params, limit):
    """Before any group is parsed: each is matched against every
    provider."""
    suffixes = {match.group(2) for match in map(_GROUP_KEY.match, params)
                if match is not None}
    if len(suffixes) > limit:
        _too_large(len(suffixes), 'request groups', 'max_request_groups',
                   limit)


def _check_term_count(request, limit):
    count = (len(request.root_required) + len(request.root_forbidden)
             + sum(len(suffixes) for suffixes in request.same_subtree))
    for group in request.groups:
        count += (len(group.resources) + len(group.forbidden)
                  + len(group.forbidden_aggregates)
                  + sum(len(term) for term in group.required)
                  + sum(len(term) for term in group.member_of)
                  + (group.in_tree is not None))
    if count > limit:
        _too_large(count, 'terms', 'max_request_terms', limit)


# -- request-wide parameters --------------------------------------------------

def _limit(params):
    """The first ``limit`` (the schema checked only the last one)."""
    values = params.getall('limit')
    if not values:
        return None
    error = validation.validate_value({'limit': values[0]}, schema.FIRST_LIMIT)
    if error is not None:
        raise errors.BadRequest(_INVALID_QUERY + error)
    return int(values[0])


def _root_required(params):
    """``root_required`` -> (required names, forbidden names)."""
    values = params.getall('root_required')
    if not values:
        return (), ()
    if len(values) > 1:
        raise errors.BadRequest(
            "Query parameter 'root_required' may be specified only once.",
            code=errors.QUERY_DUPLICATE_KEY)
    value = values[0]
    if value.startswith('in:'):
        raise errors.BadRequest(
            _INVALID_QUERY + "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' "
            "only supported since microversion 1.39. Got: %s" % value)
    items = [item.strip() for item in value.split(',')]
    if not all(item.lstrip('!') for item in items):
        raise errors.BadRequest(
            _INVALID_QUERY + "Expected 'required' parameter value of the "
            "form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: %s"
            % value)
    required = [i for i in items if not i.startswith('!')]
    forbidden = [i.lstrip('!') for i in items if i.startswith('!')]
    conflicts = list(dict.fromkeys(f for f in forbidden if f in required))
    if conflicts:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in '
            'root_required: %s' % ', '.join(conflicts),
            code=errors.QUERY_BAD_VALUE)
    return (tuple(dict.fromkeys(required)), tuple(dict.fromkeys(forbidden)))


def _same_subtree(params):
    """Each ``same_subtree`` occurrence -> a list of suffixes."""
    result = []
    for value in params.getall('same_subtree'):
        suffixes = [item.strip() for item in value.split(',')]
        if not all(suffixes):
            raise errors.BadRequest(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', code=errors.QUERY_BAD_VALUE)
        result.append(suffixes)
    return result


# -- request groups -----------------------------------------------------------

def _groups(params, version):
    """Groups in order of first appearance. Keys are parsed in query
    order; ``resources`` values each as they come (the last wins), the
    other keys with all their values at their first appearance (as the
    reference reports errors)."""
    groups = {}
    for key, value in params.items():
        match = _GROUP_KEY.match(key)
        if match is None:
            continue
        prefix, suffix = match.groups()
        group = groups.setdefault(suffix, _Group(suffix))
        if prefix == 'resources':
            group.resources = filters.parse_resources(value)
        elif key not in group.keys:
            values = params.getall(key)
            if prefix == 'required':
                group.required = filters.parse_required(values, version, key)
            elif prefix == 'member_of':
                group.member_of = filters.parse_member_of(values, version,
                                                          key)
            else:
                group.in_tree = _in_tree(values[-1])
        group.keys.add(key)
    return list(groups.values())


def _in_tree(value):
    value = value.strip()
    if not validation.is_uuid_like(value):
        raise errors.BadRequest(
            _INVALID_QUERY + "Expected 'in_tree' parameter to be a format "
            "of uuid. Got: %s" % value)
    return validation.normalize_uuid(value)


def _check_groups(groups, same_subtree, version):
    """Group consistency: the rules before 1.36, and from 1.36 those
    that allow resourceless groups named in ``same_subtree``."""
    resourceless = [g for g in groups if not g.resources]
    if version >= microversion.SAME_SUBTREE:
        if len(resourceless) == len(groups):
            raise errors.BadRequest(
                'There must be at least one resources or resources[$S] '
                'parameter.', code=errors.QUERY_MISSING_VALUE)
        listed = [s for suffixes in same_subtree for s in suffixes]
        unlisted = [g.suffix for g in resourceless if g.suffix not in listed]
        if unlisted:
            raise errors.BadRequest(
                'Resourceless suffixed group request should be specified '
                'in `same_subtree` query param: bad group(s) - %s.'
                % unlisted, code=errors.QUERY_BAD_VALUE)
        known = [g.suffix for g in groups]
        missing = [s for s in listed if s not in known]
        if missing:
            raise errors.BadRequest(
                'Real suffixes should be specified in `same_subtree`: %s '
                'not found in %s.' % (missing, known),
                code=errors.QUERY_BAD_VALUE)
        return
    orphans = [(prefix, [prefix + g.suffix for g in resourceless
                         if prefix + g.suffix in g.keys])
               for prefix in ('required', 'member_of')]
    if orphans[0][1]:
        raise errors.BadRequest(
            'All traits parameters must be associated with resources.  '
            'Found the following orphaned traits keys: %s'
            % ', '.join(orphans[0][1]))
    if orphans[1][1]:
        raise errors.BadRequest(
            'All member_of parameters must be associated with resources. '
            'Found the following orphaned member_of keys: %s'
            % ', '.join(orphans[1][1]))
    if resourceless:
        raise errors.BadRequest('All request groups must specify resources.')
    if not groups:
        raise errors.BadRequest(
            'At least one request group (`resources` or `resources{$S}`) '
            'is required.')


def _check_conflicts(groups, version):
    """A required trait (or a whole ``in:`` term) also forbidden in the
    same group."""
    if version < microversion.FORBIDDEN_TRAITS:
        return
    items = []
    for group in groups:
        if not group.required:
            continue
        for term in group.required.terms:
            if term <= group.required.forbidden:
                items.append('required%s: (%s)'
                             % (group.suffix, ', '.join(sorted(term))))
    if items:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in the '
            'following traits keys: %s' % ', '.join(sorted(items)))
