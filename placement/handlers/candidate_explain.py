"""GET /allocation_candidates/explain: why a candidates query finds
what it finds (api-ref/allocation-candidates-explain.rst).

The query is parsed and checked by the candidates handler itself, so
it earns the same 400s; the funnel comes from
``placement.objects.candidates.explain``; this module turns it into JSON
and the one-sentence reason.
"""

from placement import microversion
from placement.handlers import allocation_candidate as candidates
from placement.objects.candidates import explain
from placement.openapi import contract
from placement.schemas import allocation_candidate as schema
from placement.web import negotiation
from placement.web import responses


@contract.describe(
    {200: schema.EXPLAIN}, query=candidates.SCHEMAS,
    extension=True,
    summary='Why GET /allocation_candidates finds what it finds')
@microversion.serves('1.10')
@negotiation.accept_json
def explain_allocation_candidates(req):
    ctx = negotiation.context(req)
    ctx.can('placement:allocation_candidates:explain')
    conf = ctx.config.placement
    request = candidates.parse_request(req, negotiation.version(req), conf)
    with candidates.unknown_names_rejected():
        found = explain.explain(
            ctx, request, conf.max_candidate_search_steps)
    return responses.json_response(req, body(found, request))


def body(found, request):
    emptied = None
    if found.emptied_by is not None:
        emptied = {'group': (None if found.group is None
                             else found.group.suffix),
                   'filter': found.emptied_by.kind,
                   'subject': found.emptied_by.subject}
    return {
        'groups': [{'suffix': funnel.suffix,
                    'resources': funnel.resources,
                    'funnel': [_step(step) for step in funnel.steps]}
                   for funnel in found.groups],
        'combined': [_step(step) for step in found.steps],
        'candidates': found.steps[-1].count,
        'candidates_at_least': found.at_least,
        'emptied_by': emptied,
        'reason': reason(found, request),
    }


def _step(step):
    return {'filter': step.kind, 'subject': step.subject,
            'count': step.count}


# -- the sentence -------------------------------------------------------------

def reason(found, request):
    """One sentence naming the first condition that left nothing, or
    None when there are candidates."""
    step = found.emptied_by
    if step is None:
        return None
    if found.group is None:
        return _request_wide(step, request)
    funnel = found.group
    group = next(g for g in request.groups if g.suffix == funnel.suffix)
    position = next(i for i, s in enumerate(funnel.steps) if s is step)
    subject = _describe(group)
    if position == 0 or step.previous is None:
        return 'No provider with %s: none %s.' % (subject, _has(step))
    # The step that left the providers this one started from (a step
    # of the unsuffixed group's required traits narrows nothing).
    before = next((i for i in range(position - 1, -1, -1)
                   if funnel.steps[i].count == step.previous), position - 1)
    if step.kind == 'trees':
        return _no_tree(group, subject, funnel.steps[before],
                        _had(funnel, before))
    return 'No provider with %s: %s, %s.' % (
        subject, _counted(step.previous, _had(funnel, before)),
        _none(step, step.previous))


_SINGULAR = {'have': 'has', 'are': 'is', 'lack': 'lacks', 'exist': 'exists'}
# A verb, not a password (bandit's B105 cannot tell).
_SINGULAR['pass'] = 'passes'  # nosec B105


def _counted(count, had):
    """``count`` providers that ``had`` (a plural verb phrase), with the
    verb agreeing with the count."""
    if count == 1:
        verb, _, rest = had.partition(' ')
        had = ' '.join(filter(None, (_SINGULAR.get(verb, verb), rest)))
    return '%d %s' % (count, had)


def _describe(group):
    parts = [', '.join('%s:%d' % item for item in group.resources.items())
             or 'no resources']
    for term in group.required:
        parts.append(('trait %s' % next(iter(term))) if len(term) == 1
                     else 'one of traits %s' % ', '.join(sorted(term)))
    parts += ['without trait %s' % name for name in sorted(group.forbidden)]
    for term in group.member_of:
        parts.append(('aggregate %s' % next(iter(term))) if len(term) == 1
                     else 'one of aggregates %s' % ', '.join(sorted(term)))
    parts += ['outside aggregate %s' % uuid
              for uuid in sorted(group.forbidden_aggregates)]
    if group.in_tree is not None:
        parts.append('in the tree of %s' % group.in_tree)
    text = ' and '.join(parts)
    if group.suffix:
        text = '%s (group %s)' % (text, group.suffix)
    return text


def _had(funnel, position):
    """What the providers counted at ``position`` have in common."""
    step = funnel.steps[position]
    if step.kind == 'capacity':
        if funnel.suffix or len(funnel.resources) == 1:
            return 'have %s capacity' % step.subject.split(':')[0]
        return 'have capacity for one of the classes'
    return {
        'providers': 'exist',
        'inventory': 'have %s inventory',
        'required': 'pass the required trait %s',
        'forbidden': 'lack the forbidden trait %s',
        'member_of': 'pass member_of %s',
        'forbidden_member_of': 'are outside aggregate %s',
        'in_tree': 'are in the tree of %s',
        'one_provider': 'have capacity for %s on their own',
    }[step.kind].replace('%s', step.subject)


def _has(step):
    """What none of the remaining providers did."""
    subject = step.subject
    if step.kind == 'inventory':
        return 'has %s inventory' % subject
    if step.kind == 'capacity':
        return 'has room for %s (min_unit, max_unit, step_size and usage ' \
            'considered)' % subject
    if step.kind == 'providers':
        return 'exists'
    if step.kind == 'required':
        return ('has the trait' if not subject.startswith('in:')
                else 'has any of those traits')
    if step.kind == 'member_of':
        return ('is in the aggregate' if not subject.startswith('in:')
                else 'is in any of those aggregates')
    if step.kind == 'in_tree':
        return 'is in that tree'
    if step.kind == 'one_provider':
        return 'has room for all of %s (a suffixed group takes ' \
            'everything from one provider)' % subject
    raise ValueError(step.kind)


def _none(step, count):
    """The clause saying that ``step`` removed every one of the
    ``count`` providers left."""
    if step.kind == 'forbidden':
        return '%s the forbidden trait %s' % (
            'it has' if count == 1 else 'all of them have', step.subject)
    if step.kind == 'forbidden_member_of':
        return '%s in the forbidden aggregate %s' % (
            'it is' if count == 1 else 'all of them are', step.subject)
    if count == 1:
        return 'it %s' % _negated(_has(step))
    return 'none of them %s' % _has(step)


def _negated(phrase):
    """``phrase`` (from ``_has``) said of one provider that fails it."""
    for positive, negative in (('has ', 'does not have '),
                               ('is ', 'is not '),
                               ('exists', 'does not exist')):
        if phrase.startswith(positive):
            return negative + phrase[len(positive):]
    return 'does not satisfy this'


def _no_tree(group, subject, previous, had):
    """The group's providers exist but no tree serves the whole group."""
    if not group.resources and not (group.required or group.member_of):
        return ('No provider with %s: a group without resources needs a '
                'required trait or member_of to match anything.' % subject)
    return ('No tree can serve %s: %s, but no tree (with the sharing '
            'providers it may use) offers the whole group.'
            % (subject, _counted(previous.count, had)))


def _request_wide(step, request):
    if step.kind == 'trees':
        return ('No tree can serve every request group: each group has '
                'providers, but no tree (with the sharing providers it is '
                'associated with) offers all of them together.')
    if step.kind == 'root_required':
        return ('No candidate tree has a root with root_required %s: '
                '%d trees serve every group, none of their roots '
                'qualifies.' % (step.subject, step.previous))
    rules = []
    if request.isolate:
        rules.append('group_policy=isolate')
    if request.same_subtree:
        rules.append('same_subtree')
    if not request.nested_aware:
        rules.append('one provider per tree (before microversion 1.29)')
    if len(request.groups) > 1:
        rules.append('the capacity the groups share')
    if any(g.required and not g.suffix for g in request.groups):
        rules.append('the required traits of the unsuffixed group among '
                     'its chosen providers')
    return ('No combination of the groups fits: %d trees serve every group '
            'on its own, none of them satisfies %s.'
            % (step.previous, ' and '.join(rules) or 'the search'))
