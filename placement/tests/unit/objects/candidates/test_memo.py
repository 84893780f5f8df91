"""The memo's bookkeeping: kept candidates per anchor, cut at a cap, and
its bounds."""

from placement.objects.candidates import memo as memo_module


class _Index:
    """What the memo reads of a provider index."""

    def __init__(self):
        self.epoch, self.serial, self.changed = 1, 0, frozenset()

    def changed_roots_since(self, epoch, serial):
        if epoch != self.epoch:
            return None
        return frozenset() if serial == self.serial else self.changed


def test_candidates_come_in_anchor_order_cut_at_the_cap():
    kept = memo_module.Kept(1, 0)
    kept.replace((), {7: ('g', 'h'), 2: ('a', 'b', 'c'), 5: ('d',)})
    assert kept.take(None) == (['a', 'b', 'c', 'd', 'g', 'h'], [2, 5, 7])
    assert kept.take(6) == kept.take(7) == kept.take(None)
    assert kept.take(5) == (['a', 'b', 'c', 'd', 'g'], [2, 5, 7])
    assert kept.take(4) == (['a', 'b', 'c', 'd'], [2, 5])
    assert kept.take(2) == (['a', 'b'], [2])
    assert kept.count == 6


def test_replacing_anchors_drops_those_left_without_candidates():
    kept = memo_module.Kept(1, 0)
    kept.replace((), {2: ('a',), 5: ('b',), 7: ('c',)})
    kept.replace({5, 7, 9}, {7: ('x', 'y'), 9: ('z',)})
    assert kept.take(None) == (['a', 'x', 'y', 'z'], [2, 7, 9])
    assert kept.count == 4


def test_summaries_of_the_anchors_trees_come_in_provider_order():
    kept = memo_module.Kept(1, 0)
    # Trees 2 (providers 2, 6) and 5 (5, 8) created side by side.
    kept.replace((), {2: ('a',), 5: ('b',), 9: ('c',)},
                 {2: ((2, 's2'), (6, 's6')), 5: ((5, 's5'), (8, 's8')),
                  9: ((9, 's9'),)})
    assert kept.described([2, 5, 9]) == ['s2', 's5', 's6', 's8', 's9']
    assert kept.described([9]) == ['s9']
    kept.replace({5}, {5: ('x',)}, {5: ((5, 'n5'),)})
    assert kept.described([2, 5]) == ['s2', 'n5', 's6']
    kept.replace({9}, {}, {})
    assert 9 not in kept._described


def test_an_answer_comes_back_for_its_cap_until_a_replace():
    kept = memo_module.Kept(1, 0)
    kept.replace((), {2: ('a',), 5: ('b', 'c')},
                 {2: ((2, 's2'),), 5: ((5, 's5'),)})
    first = kept.answer(2)
    assert (first.rendered, first.anchors, first.described) == (
        ['a', 'b'], [2, 5], ['s2', 's5'])
    first.presented['v'] = 'body'
    assert kept.answer(2) is first
    other = kept.answer(None)
    assert other is not first and other.presented == {}
    assert kept.answer(None) is other
    kept.replace({7}, {})            # a tree without candidates changed
    fresh = kept.answer(None)
    assert fresh is not other and fresh.presented == {}
    assert (fresh.rendered, fresh.described) == (['a', 'b', 'c'],
                                                 ['s2', 's5'])
    kept.replace({5}, {5: ('x',)}, {5: ((5, 'n5'),)})
    assert kept.answer(None).rendered == ['a', 'x']
    assert kept.answer(None).described == ['s2', 'n5']


def test_changed_roots_are_reported_and_a_new_epoch_voids_all():
    memo, index = memo_module.Memo(), _Index()
    kept = memo_module.Kept(index.epoch, index.serial)
    kept.replace((), {1: ('a',)})
    memo.keep('q', kept, index)
    assert memo.get('q', index) == (kept, frozenset())
    index.serial, index.changed = 3, frozenset([1])
    assert memo.get('q', index) == (kept, frozenset([1]))
    index.epoch += 1
    assert memo.get('q', index) == (None, None)
    assert memo.get('q', index) == (None, None)  # and forgotten


def test_roots_entering_or_leaving_the_served_set_count_as_changed():
    memo, index = memo_module.Memo(), _Index()
    kept = memo_module.Kept(index.epoch, index.serial, frozenset([1, 2]))
    memo.keep('q', kept, index)
    assert memo.get('q', index, frozenset([1, 2])) == (kept, frozenset())
    index.serial, index.changed = 3, frozenset([5])
    assert memo.get('q', index, frozenset([2, 3])) == (kept, {1, 3, 5})
    memo.keep('q', kept, index)
    assert memo.get('q', index, frozenset([2, 3])) == (kept, frozenset())


def test_bounds_drop_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(memo_module, 'MAX_CANDIDATES', 5)
    monkeypatch.setattr(memo_module, 'MAX_QUERIES', 2)
    memo, index = memo_module.Memo(), _Index()

    def kept(count):
        found = memo_module.Kept(index.epoch, index.serial)
        found.replace((), {1: ('a',) * count})
        return found
    memo.keep('a', kept(2), index)
    memo.keep('b', kept(2), index)
    memo.get('a', index)            # now the most recently used
    memo.keep('c', kept(2), index)  # three queries: 'b' goes
    assert list(memo._kept) == ['a', 'c']
    memo.keep('d', kept(4), index)  # six candidates: 'a' goes, then 'c'
    assert list(memo._kept) == ['d']
    memo.keep('e', kept(6), index)  # too large to keep at all
    assert list(memo._kept) == ['d'] and memo.too_large('e')


def test_a_result_is_repeated_for_the_same_request_and_index_state():
    memo, index = memo_module.Memo(max_queries=2), _Index()
    request, twin = ['q'], ['q']
    memo.remember(request, 'x', index, 'result', 1)
    assert memo.repeated(request, 'x', index) == 'result'
    assert memo.repeated(twin, 'x', index) is None      # another object
    assert memo.repeated(request, 'y', index) is None   # other options
    index.serial += 1
    assert memo.repeated(request, 'x', index) is None
    memo.remember(request, 'x', index, 'again', 1)
    assert memo.repeated(request, 'x', index) == 'again'
    index.epoch += 1
    assert memo.repeated(request, 'x', index) is None
    others = [[i] for i in range(3)]
    for other in others:
        memo.remember(other, 'x', index, 'r', 1)
        assert len(memo._results) <= 2


def test_repeated_results_hold_at_most_max_candidates():
    memo, index = memo_module.Memo(max_candidates=10), _Index()
    big, a, b = ['big'], ['a'], ['b']
    memo.remember(big, 'x', index, 'r', 11)
    assert memo.repeated(big, 'x', index) is None
    memo.remember(a, 'x', index, 'ra', 6)
    memo.remember(a, 'x', index, 'ra2', 6)     # replaces its own
    assert memo.repeated(a, 'x', index) == 'ra2'
    memo.remember(b, 'x', index, 'rb', 5)      # 6 + 5 > 10: a dropped
    assert memo.repeated(a, 'x', index) is None
    assert memo.repeated(b, 'x', index) == 'rb'
