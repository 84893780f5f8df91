"""The body of GET /allocation_candidates, per microversion.

The engine (``placement.objects.allocation_candidate.find``) hands its
Result, the candidates as the search found them with the uuids and class
names they need, to ``body`` while it holds the provider index. This
module shapes them: candidates and summaries of the latest microversion,
then older versions derived from those by leaving members out.

A body can hold tens of thousands of candidates, so rendering avoids
repeated work: a partial candidate takes part in many candidates and is
rendered once per request; what a group's template places is one dict
shared by all candidates placing it; a summary's dict is kept between
requests for as long as the engine returns the same summary. Rendered
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
#: {uuid: (summary, b'"uuid":{...}')}.
_ENCODED = {}
#: Provider uuids as JSON strings: {uuid: b'"uuid"'}.
_QUOTED = {}


def encoded(result, version, requested):
    """``body(result, version, requested)`` as JSON bytes.

    From 1.29 the body is written as bytes directly, never as dicts:
    each partial, group template and summary is encoded once (summaries
    once per Summary, between requests) and every candidate is a join of
    those pieces. Older versions encode ``body``.
    """
    if version < microversion.NESTED_CANDIDATES:
        return orjson.dumps(body(result, version, requested))
    encoding = _Encoding(result,
                         version >= microversion.CANDIDATE_MAPPINGS)
    candidates = encoding.candidates()
    summaries = _encoded_summaries(result.summaries(encoding.contributing))
    return b''.join((b'{"allocation_requests":[', b','.join(candidates),
                     b'],"provider_summaries":{', b','.join(summaries),
                     b'}}'))


def _encoded_summaries(summaries):
    """[b'"uuid":{...}', ...] of Summaries, encoded once per Summary."""
    if len(_ENCODED) > MAX_KEPT_SUMMARIES:
        _ENCODED.clear()
    if len(_QUOTED) > MAX_KEPT_SUMMARIES:
        _QUOTED.clear()
    kept, dumps = _ENCODED, orjson.dumps
    encoded = []
    for summary in summaries:
        uuid = summary.uuid
        entry = kept.get(uuid)
        if entry is None or entry[0] is not summary:
            entry = kept[uuid] = (
                summary, b'%s:%s' % (dumps(uuid), dumps(_summary(summary))))
        encoded.append(entry[1])
    return encoded


class _Encoding:
    """Candidates as JSON texts, pieced together from fragments.

    A partial is encoded once per request as its allocations (members of
    the ``allocations`` object, ``b'"uuid":{"resources":{...}}'``, or
    b'' when it places nothing) and its mapped uuids (``b'"uuid",...'``);
    a candidate joins its partials' fragments into a text made once per
    combination of suffixes. Partials placing on one provider are summed
    as dicts (``_Rendering``), which is rare.
    """

    def __init__(self, result, mappings):
        self._found = result.candidates
        self._uuid, self._names = result.uuid, result.class_names
        self._mappings = mappings
        self._quoted = {}
        self._encoded = {}
        self._templates = {}
        self._forms = {}
        self._dicts = _Rendering(result)
        #: Providers placing something in some candidate.
        self.contributing = self._dicts.contributing

    def candidates(self):
        encoded, encode = self._encoded, self._encode
        forms, form = self._forms, self._form
        quoted, quote = self._quoted, self._quote
        resources = self._resources
        contributing = self.contributing
        mappings = self._mappings
        result = []
        append = result.append
        for suffixes, partials in self._found:
            shape = forms.get(suffixes) or form(suffixes)
            if len(partials) == 1:
                partial = partials[0]
                if partial.template is not None:
                    # One provider placing its group's amounts, in no
                    # other candidate: encoded here, not kept.
                    provider = partial.providers[0]
                    contributing.add(provider)
                    uuid = quoted.get(provider) or quote(provider)
                    placed = uuid + b':' + resources(partial.template)
                    append(shape % (placed, uuid) if mappings
                           else shape % placed)
                    continue
                _, placed, uuids = (encoded.get(id(partial))
                                    or encode(partial))
                append(shape % (placed, uuids) if mappings
                       else shape % placed)
                continue
            if len(partials) == 2:
                first = encoded.get(id(partials[0])) or encode(partials[0])
                second = encoded.get(id(partials[1])) or encode(partials[1])
                if not second[1]:
                    placed = first[1]
                elif not first[1]:
                    placed = second[1]
                elif first[0].isdisjoint(second[0]):
                    placed = first[1] + b',' + second[1]
                else:
                    placed = self._summed(partials)
                append(shape % (placed, first[2], second[2]) if mappings
                       else shape % placed)
                continue
            pieces = [encoded.get(id(partial)) or encode(partial)
                      for partial in partials]
            placing = [piece for piece in pieces if piece[1]]
            if len(frozenset().union(*[piece[0] for piece in placing])) \
                    == sum([len(piece[0]) for piece in placing]):
                placed = b','.join([piece[1] for piece in placing])
            else:
                placed = self._summed(partials)
            append(shape % (placed, *[piece[2] for piece in pieces])
                   if mappings else shape % placed)
        return result

    def _form(self, suffixes):
        """The text of a candidate of ``suffixes`` with ``%s`` for its
        allocations and, with mappings, each group's uuids."""
        if self._mappings:
            shape = b'{"allocations":{%%s},"mappings":{%s}}' % b','.join(
                orjson.dumps(suffix).replace(b'%', b'%%') + b':[%s]'
                for suffix in suffixes)
        else:
            shape = b'{"allocations":{%s}}'
        self._forms[suffixes] = shape
        return shape

    def _quote(self, provider):
        """b'"uuid"' of ``provider``."""
        uuid = self._uuid[provider]
        quoted = _QUOTED.get(uuid)
        if quoted is None:
            quoted = _QUOTED[uuid] = _string(uuid)
        self._quoted[provider] = quoted
        return quoted

    def _encode(self, partial):
        """(providers placing, allocations, mapped uuids) of one
        partial."""
        quote = self._quote
        providers = partial.providers
        if len(providers) == 1:
            uuids = self._quoted.get(providers[0]) or quote(providers[0])
        else:
            uuids = b','.join([quote(p) for p in providers])
        if partial.template is not None:
            self.contributing.add(providers[0])
            places = frozenset(providers)
            placed = uuids + b':' + self._resources(partial.template)
        elif partial.amounts:
            per_provider = collections.defaultdict(list)
            for provider, rc, amount in partial.amounts:
                per_provider[provider].append((rc, amount))
            self.contributing.update(per_provider)
            places = frozenset(per_provider)
            placed = b','.join([
                quote(provider) + b':' + self._placing(amounts)
                for provider, amounts in per_provider.items()])
        else:
            places, placed = _NOTHING, b''
        encoded = self._encoded[id(partial)] = (places, placed, uuids)
        return encoded

    def _resources(self, template):
        """``_placing`` of a group's template, once per template."""
        placed = self._templates.get(id(template))
        if placed is None:
            # The template is kept too, so that its id is not reused.
            placed = self._templates[id(template)] = (
                self._placing(template), template)
        return placed[0]

    def _placing(self, amounts):
        names = self._names
        return orjson.dumps({'resources': {names[rc]: amount
                                           for rc, amount in amounts}})

    def _summed(self, partials):
        """Allocations of partials placing on a common provider."""
        dicts = self._dicts
        pieces = [dicts._rendered.get(id(partial)) or dicts._render(partial)
                  for partial in partials]
        return orjson.dumps(_merged([placed for _, placed in pieces]))[1:-1]


_NOTHING = frozenset()


def _string(text):
    """``text`` as a JSON string.

    Many small texts kept alive cost orjson about a microsecond each
    (measured); a uuid needs no escaping, so it is quoted as it is.
    """
    if text.isascii() and text.replace('-', '').isalnum():
        return b'"%s"' % text.encode()
    return orjson.dumps(text)
