"""The body of GET /allocation_candidates, per microversion.

The engine (``placement.objects.candidates.engine.find``) hands its
Result, the candidates as the search found them with the uuids and class
names they need, to ``body`` while it holds the provider index. This
module shapes them: candidates and summaries of the latest microversion,
then older versions derived from those by leaving members out.

A body can hold tens of thousands of candidates, so rendering avoids
repeated work: a partial candidate takes part in many candidates and is
rendered once per request; what a group's template places is one dict
shared by all candidates placing it; a summary's dict is kept between
requests for as long as the engine returns the same summary, and so is
its JSON text (``encoded``, which gives the body as bytes). Rendered
values are shared, never changed afterwards: older shapes copy what they
change.
"""

import collections

import orjson

from placement import microversion

#: Rendered summaries kept between requests: {uuid: (summary, dict)}.
#: An entry is replaced when its provider's summary changes; the whole
#: map is dropped when it grows past ``MAX_KEPT_SUMMARIES`` (providers
#: that were deleted leave their entries behind).
_SUMMARIES = {}
MAX_KEPT_SUMMARIES = 100000


def body(result, version, requested):
    """The response body for ``result`` at ``version``; ``requested`` are
    the class names the request asks for (older summaries show only
    those)."""
    candidates, summaries = latest(result)
    if version < microversion.CANDIDATE_MAPPINGS:
        candidates = [_older_candidate(c, version) for c in candidates]
    if version < microversion.NESTED_CANDIDATES:
        summaries = {uuid: _older_summary(summary, version, requested)
                     for uuid, summary in summaries.items()}
    return {'allocation_requests': candidates,
            'provider_summaries': summaries}


def latest(result):
    """(allocation requests, provider summaries) of ``result`` as the
    latest microversion shows them."""
    rendering = _Rendering(result)
    candidates = rendering.candidates()
    return candidates, _summaries(result.summaries(rendering.contributing))


def _summaries(summaries):
    """{uuid: summary dict} of Summaries, rendered once per Summary."""
    if len(_SUMMARIES) > MAX_KEPT_SUMMARIES:
        _SUMMARIES.clear()
    kept = _SUMMARIES
    rendered = {}
    for summary in summaries:
        uuid = summary.uuid
        entry = kept.get(uuid)
        if entry is None or entry[0] is not summary:
            entry = kept[uuid] = (summary, _summary(summary))
        rendered[uuid] = entry[1]
    return rendered


def _summary(summary):
    return {
        'resources': {name: {'capacity': capacity, 'used': used}
                      for name, capacity, used in summary.resources},
        'traits': list(summary.traits),
        'parent_provider_uuid': summary.parent_uuid,
        'root_provider_uuid': summary.root_uuid,
    }


def _older_candidate(candidate, version):
    """A latest-version candidate as an older version shows it (copied,
    not cut: its values are shared)."""
    if version >= microversion.DICT_ALLOCATIONS:
        return {'allocations': candidate['allocations']}
    return {'allocations': [
        {'resource_provider': {'uuid': uuid},
         'resources': placed['resources']}
        for uuid, placed in candidate['allocations'].items()]}


def _older_summary(summary, version, requested):
    data = {'resources': {
        rc: usage for rc, usage in summary['resources'].items()
        if version >= microversion.ALL_INVENTORIES_IN_SUMMARIES
        or rc in requested}}
    if version >= microversion.SUMMARY_TRAITS:
        data['traits'] = summary['traits']
    return data


class _Rendering:
    """Candidates in uuids and class names. A partial takes part in many
    candidates, so each is rendered once; what partials place is shared
    between those that place the same amounts."""

    def __init__(self, result):
        self._found = result.candidates
        self._uuid, self._names = result.uuid, result.class_names
        self._rendered = {}
        self._placed = {}
        #: Providers placing something in some candidate.
        self.contributing = set()

    def candidates(self):
        rendered, render = self._rendered, self._render
        uuid_of, resources = self._uuid, self._resources
        contributing = self.contributing
        result = []
        for suffixes, partials in self._found:
            if len(partials) == 1:
                partial = partials[0]
                if partial.template is not None:
                    # One provider placing its group's amounts, in no
                    # other candidate: rendered here, not cached.
                    provider = partial.providers[0]
                    contributing.add(provider)
                    uuid = uuid_of[provider]
                    result.append({
                        'allocations': {uuid: resources(partial.template)},
                        'mappings': {suffixes[0]: [uuid]}})
                    continue
                uuids, allocations = (rendered.get(id(partial))
                                      or render(partial))
                mappings = {suffixes[0]: uuids}
            elif len(partials) == 2:
                uuids, first = (rendered.get(id(partials[0]))
                                or render(partials[0]))
                others, second = (rendered.get(id(partials[1]))
                                  or render(partials[1]))
                allocations = {**first, **second}
                if len(allocations) < len(first) + len(second):
                    allocations = _merged([first, second])
                mappings = {suffixes[0]: uuids, suffixes[1]: others}
            else:
                pieces = [rendered.get(id(partial)) or render(partial)
                          for partial in partials]
                allocations = {}
                for _, placed in pieces:
                    allocations.update(placed)
                if len(allocations) < sum(len(p) for _, p in pieces):
                    allocations = _merged([placed for _, placed in pieces])
                mappings = {suffix: uuids for suffix, (uuids, _)
                            in zip(suffixes, pieces)}
            result.append({'allocations': allocations,
                           'mappings': mappings})
        return result

    def _render(self, partial):
        """([provider uuid, ...], {uuid: {'resources': {class: amount}}})
        of one partial."""
        if len(partial.providers) == 1:
            provider = partial.providers[0]
            uuid = self._uuid[provider]
            placed = {}
            if partial.template is not None:
                self.contributing.add(provider)
                placed[uuid] = self._resources(partial.template)
            elif partial.amounts:
                self.contributing.add(provider)
                placed[uuid] = self._placing(
                    (rc, amount) for _, rc, amount in partial.amounts)
            rendered = self._rendered[id(partial)] = ([uuid], placed)
            return rendered
        per_provider = collections.defaultdict(list)
        for provider, rc, amount in partial.amounts:
            per_provider[provider].append((rc, amount))
        self.contributing.update(per_provider)
        placed = {self._uuid[provider]: self._placing(amounts)
                  for provider, amounts in per_provider.items()}
        rendered = self._rendered[id(partial)] = (
            [self._uuid[p] for p in partial.providers], placed)
        return rendered

    def _resources(self, template):
        """``_placing`` of a group's template, shared by the partials of
        the group (its identity finds it; kept alive with it)."""
        placed = self._placed.get(id(template))
        if placed is None:
            placed = self._placed[id(template)] = (
                self._placing(template), template)
        return placed[0]

    def _placing(self, amounts):
        """{'resources': {class name: amount}} of ``(class, amount)``
        pairs."""
        return {'resources': {self._names[rc]: amount
                              for rc, amount in amounts}}


def _merged(pieces):
    """Allocations of pieces that share providers, summed per class."""
    result = {}
    for placed in pieces:
        for uuid, resources in placed.items():
            mine = result.setdefault(uuid, {'resources': {}})['resources']
            for name, amount in resources['resources'].items():
                mine[name] = mine.get(name, 0) + amount
    return result


# -- straight to JSON ---------------------------------------------------------

#: Encoded summaries kept between requests, like ``_SUMMARIES``:
#: {uuid: (summary, b'"uuid":{...},')}.
_ENCODED = {}


def encoded(result, version, requested):
    """``body(result, version, requested)`` as JSON bytes.

    From 1.29, where a summary shows all it has, each summary is
    encoded once for as long as the engine returns the same Summary, and
    only the candidates are encoded per request (measured: as dicts
    encoded by orjson they cost less than pieced together from encoded
    fragments), unless the engine kept them, and the summaries, encoded
    (``fragments``); a body made of those is kept with them
    (``result.presented``) until one of their trees changes, so the
    same query asked again with nothing changed costs no encoding.
    The body is joined once from its pieces: a few megabytes copied
    again and again cost page faults, not only copies.
    """
    if version < microversion.NESTED_CANDIDATES:
        return orjson.dumps(body(result, version, requested))
    if result.presented is not None:
        # The same answer as a request before (nothing changed in its
        # trees since): its body too.
        kept = result.presented.get(version)
        if kept is None:
            kept = result.presented[version] = _encoded(result, version)
        return kept
    return _encoded(result, version)


def _encoded(result, version):
    if result.rendered is not None:
        # Kept encoded between requests (see fragments): the trees of
        # their anchors are the trees of the providers they place on.
        pieces = [b'{"allocation_requests":[']
        pieces += result.rendered
        _last_comma_dropped(pieces)
        pieces.append(b'],"provider_summaries":{')
        summaries = result.described
        if summaries is None:
            summaries = _encoded_summaries(result.summaries(result.anchors))
    else:
        rendering = _Rendering(result)
        candidates = rendering.candidates()
        if version < microversion.CANDIDATE_MAPPINGS:
            candidates = [_older_candidate(c, version) for c in candidates]
        pieces = [b'{"allocation_requests":', orjson.dumps(candidates),
                  b',"provider_summaries":{']
        summaries = _encoded_summaries(
            result.summaries(rendering.contributing))
    if summaries:
        pieces += summaries
        _last_comma_dropped(pieces)
    pieces.append(b'}}')
    return b''.join(pieces)


def _last_comma_dropped(pieces):
    pieces[-1] = pieces[-1][:-1]


def fragments(version):
    """``(shape, render, describe)`` for ``engine.find``'s
    ``rendering`` from 1.29: each candidate and each summary encoded on
    its own and followed by a comma, as ``encoded`` joins them; None
    before 1.29, where a body also depends on the classes requested."""
    if version < microversion.NESTED_CANDIDATES:
        return None
    mappings = version >= microversion.CANDIDATE_MAPPINGS
    return ('mappings' if mappings else 'allocations',
            lambda result: _encoded_candidates(result, version),
            _encoded_summaries)


def _encoded_candidates(result, version):
    candidates = _Rendering(result).candidates()
    if version < microversion.CANDIDATE_MAPPINGS:
        candidates = [_older_candidate(c, version) for c in candidates]
    dumps = orjson.dumps
    return [dumps(candidate) + b',' for candidate in candidates]


def _encoded_summaries(summaries):
    """[b'"uuid":{...},', ...] of Summaries, encoded once per Summary."""
    if len(_ENCODED) > MAX_KEPT_SUMMARIES:
        _ENCODED.clear()
    kept, dumps = _ENCODED, orjson.dumps
    encoded = []
    for summary in summaries:
        uuid = summary.uuid
        entry = kept.get(uuid)
        if entry is None or entry[0] is not summary:
            entry = kept[uuid] = (
                summary, b'%s:%s,' % (dumps(uuid), dumps(_summary(summary))))
        encoded.append(entry[1])
    return encoded
