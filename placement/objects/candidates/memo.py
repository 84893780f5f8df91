"""Rendered candidates kept between requests, tree by tree.

When no sharing provider can take part in a query (none holds a class
it requests, and every group requests some), the candidates it finds
at one anchor (tree root) depend on that tree alone: its providers'
inventories, usage, traits, aggregates and shape. A scheduler asks the
same few queries again and again while claims change one or two trees
between them, so each query's candidates are kept per anchor, as the
caller rendered them (opaque values: this module knows nothing of their
form), with the rendered summaries of the anchor's tree, and only the
anchors of the trees the provider index saw change since
(``ProviderIndex.changed_roots_since``) are searched and rendered
again, with those that entered or left the set of trees a sharing
provider serves (``Memo.get``'s ``served``). A whole index load voids
everything.

A query is kept under its names resolved to ids, its rules and the
caller's shape (e.g. the microversion's form of a candidate), never its
limit: the answer is the kept candidates in anchor order, cut at the
cap, which is what the search would give.

Memory: each kept candidate costs its rendered value (for a nested
candidate with two providers, about 300 bytes of JSON) plus about 90
bytes of references; each kept anchor about 160 bytes, plus 65 per
further provider of its tree, for its summaries (their encoded form is
shared with the caller's own cache while the provider is unchanged).
At most ``MAX_CANDIDATES`` are kept per process and database, over at
most ``MAX_QUERIES`` queries (least recently used dropped first); a
query with more candidates is not kept.

The same query asked again with nothing changed in its trees (the
common case between a scheduler's claims on a large cloud, and the
whole of a benchmark's repeated query) gets the same ``Answer``: the
candidates, anchors and summaries taken for its cap the last time,
with what the caller made of them (``Answer.presented``, e.g. the
encoded body: about the size of the kept values once more, one cap per
query), until one of its trees changes. And while nothing at all has
changed in the index, the very same request object (callers keep
parsed queries) gets the caller's last result without its names being
looked up again (``Memo.repeated``; such results are bounded as the
kept queries are, and mostly share their values).
"""

import bisect
import collections
import itertools
import operator

from placement.objects import per_process

MAX_QUERIES = 16
MAX_CANDIDATES = 100000
#: Queries too large to keep, remembered (at most this many) so that
#: their candidates are not rendered one by one for nothing.
MAX_TOO_LARGE = 64


class Answer:
    """What ``Kept.answer`` gives for one cap: ``rendered`` candidates
    in anchor order, the ``anchors`` they come from, their trees'
    ``described`` summaries in provider id order, and ``presented``,
    a dict the caller may keep its own derived values in (e.g. a body
    per microversion): the same Answer, with it, comes back for as long
    as none of the kept trees changes."""

    __slots__ = ('rendered', 'anchors', 'described', 'presented')

    def __init__(self, rendered, anchors, described):
        self.rendered, self.anchors = rendered, anchors
        self.described = described
        self.presented = {}


class Kept:
    """One query's candidates: ``by_anchor`` {root: tuple of rendered
    candidates}, ``anchors`` their roots in id order, valid as of the
    index's (``epoch``, ``serial``) and for the set of ``served`` roots
    (see ``Memo.get``)."""

    def __init__(self, epoch, serial, served=frozenset()):
        self.epoch, self.serial = epoch, serial
        self.served = served
        self.by_anchor = {}
        self._described = {}
        self.anchors = []
        self.count = 0
        #: (cap, Answer) of the last ``answer``, until ``replace``.
        self._answer = None

    def replace(self, roots, by_anchor, described=None):
        """The candidates of the anchors ``roots`` are now ``by_anchor``
        (anchors without any are absent), and ``described`` {anchor:
        tuple of (provider, described summary)} those of their trees'
        providers, in provider id order."""
        self._answer = None
        for root in roots:
            self._described.pop(root, None)
            old = self.by_anchor.pop(root, None)
            if old is not None:
                self.count -= len(old)
                index = bisect.bisect_left(self.anchors, root)
                del self.anchors[index]
        for root, values in by_anchor.items():
            self.by_anchor[root] = values
            self.count += len(values)
            bisect.insort(self.anchors, root)
        if described:
            self._described.update(described)

    def answer(self, cap):
        """The Answer for ``cap`` (None: all candidates): the last one
        while nothing was replaced since and the cap is the same."""
        last = self._answer
        if last is not None and last[0] == cap:
            return last[1]
        rendered, anchors = self.take(cap)
        answer = Answer(rendered, anchors, self.described(anchors))
        self._answer = (cap, answer)
        return answer

    def take(self, cap):
        """(rendered candidates in anchor order, at most ``cap`` (None:
        all), and the anchors they come from)."""
        by_anchor = self.by_anchor
        if cap is None or cap >= self.count:
            return (list(itertools.chain.from_iterable(
                map(by_anchor.__getitem__, self.anchors))),
                list(self.anchors))
        rendered, anchors = [], []
        for root in self.anchors:
            if cap is not None and len(rendered) >= cap:
                break
            rendered.extend(by_anchor[root])
            anchors.append(root)
        if cap is not None:
            del rendered[cap:]
        return rendered, anchors

    def described(self, anchors):
        """The described summaries of the providers of the trees of
        ``anchors`` (as ``take`` gives them), in provider id order."""
        pairs = list(itertools.chain.from_iterable(
            map(self._described.__getitem__, anchors)))
        # In order already unless trees' ids interleave (nested trees
        # created side by side).
        pairs.sort(key=_FIRST)
        return [value for _, value in pairs]


_FIRST = operator.itemgetter(0)


class Memo:
    """The kept queries of one database in this process. Used under
    the provider index's lock."""

    def __init__(self, max_queries=None, max_candidates=None):
        """Bounds other than the module's ``MAX_QUERIES`` and
        ``MAX_CANDIDATES``, if given."""
        self._kept = collections.OrderedDict()
        self._too_large = collections.OrderedDict()
        #: {id(request): (request, extra, (epoch, serial), result,
        #: size)}, and the candidates those results hold in all.
        self._results = {}
        self._results_size = 0
        self._max_queries = max_queries
        self._max_candidates = max_candidates

    @property
    def max_queries(self):
        return self._max_queries or MAX_QUERIES

    @property
    def max_candidates(self):
        return self._max_candidates or MAX_CANDIDATES

    def repeated(self, request, extra, index):
        """The result ``remember`` kept for this very ``request`` object
        with an equal ``extra`` (what else the result depends on), if
        the index has not changed at all since (same epoch and serial);
        else None."""
        entry = self._results.get(id(request))
        if (entry is not None and entry[0] is request and entry[1] == extra
                and entry[2] == (index.epoch, index.serial)):
            return entry[3]
        return None

    def remember(self, request, extra, index, result, size):
        """Keep ``result``, which holds ``size`` candidates, for
        ``repeated``: at most ``max_queries`` requests and
        ``max_candidates`` candidates (all are dropped when full; a
        result larger than that is not kept)."""
        if size > self.max_candidates:
            return
        if (len(self._results) >= self.max_queries
                or self._results_size + size > self.max_candidates):
            self._results.clear()
            self._results_size = 0
        old = self._results.pop(id(request), None)
        if old is not None:
            self._results_size -= old[4]
        self._results[id(request)] = (
            request, extra, (index.epoch, index.serial), result, size)
        self._results_size += size

    def too_large(self, key):
        return key in self._too_large

    def get(self, key, index, served=frozenset()):
        """(Kept of ``key`` or None, roots changed since it was kept:
        None to rebuild it whole).

        ``served`` is a set of roots the caller searches differently
        from the others although their trees are alike (the trees a
        sharing provider serves): those entering or leaving it since
        count as changed.
        """
        kept = self._kept.get(key)
        if kept is None:
            return None, None
        self._kept.move_to_end(key)
        changed = index.changed_roots_since(kept.epoch, kept.serial)
        if changed is None:
            del self._kept[key]
            return None, None
        if served != kept.served:
            changed = set(changed) | (served ^ kept.served)
            kept.served = served
        return kept, changed

    def keep(self, key, kept, index):
        """Keep ``kept`` (brought up to date) as of ``index``; forget it
        (and remember that it is too large) beyond ``max_candidates``."""
        kept.epoch, kept.serial = index.epoch, index.serial
        if kept.count > self.max_candidates:
            self._kept.pop(key, None)
            self._too_large[key] = True
            if len(self._too_large) > MAX_TOO_LARGE:
                self._too_large.popitem(last=False)
            return
        self._kept[key] = kept
        self._kept.move_to_end(key)
        total = sum(k.count for k in self._kept.values())
        while (total > self.max_candidates
               or len(self._kept) > self.max_queries):
            _, dropped = self._kept.popitem(last=False)
            total -= dropped.count


_MEMOS = per_process.PerDatabase(Memo)


def of(db):
    """The memo of database ``db`` in this process."""
    return _MEMOS.of(db)
