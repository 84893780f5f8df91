"""The provider change log: which providers changed since a reader looked.

Processes that keep provider data in memory (the candidates' provider
index: trees, inventories, usage, traits, aggregates) learn from here, in
one cheap query, which providers to reload. Provider generations cannot
tell them: several writes change what the index holds without bumping a
generation (a provider a moved consumer leaves, ``DELETE
/allocations``, aggregates below 1.19, re-parenting).

Writing: the database logs every change itself
    Triggers (``placement/db/triggers.py``: ``TRIGGERED`` names the
    tables, ``trigger_ddl`` gives the statements for SQLite, PostgreSQL
    and MySQL/MariaDB) insert a
    ``provider_change_log`` row, ``(id, resource_provider_id)``, naming
    the provider of every row inserted, updated or deleted in
    ``resource_providers``, ``inventories``, ``allocations``,
    ``resource_provider_traits`` and ``resource_provider_aggregates``
    (one per row; on PostgreSQL one per provider and transaction, which
    is all a reader can tell apart); updating or deleting a resource
    class, trait or aggregate row logs a NULL provider, which tells
    readers to reload everything (the index keeps names and uuids by id).
    So every writer is seen, whoever it is: our workers, upstream
    Placement's workers on the same database during a rolling upgrade, a
    DBA's hand-written SQL. The log row is part of the writing
    transaction: it exists if and only if the change commits. There is
    no counter or other row that every writer updates, so writers do not
    serialise on it (and a multi-writer Galera cluster has no hot row to
    conflict on).

Reading: ids, with the gaps below the highest one seen
    ``id`` is an auto-increment value, taken when the row is inserted.
    Transactions commit in any order, so a reader may see id 11 while the
    transaction that took id 10 is still running (and on Galera the nodes
    hand out interleaved ids). A reader's ``Cursor`` therefore holds the
    highest id it has seen and the ids below it it has not seen yet (the
    gaps), and a ``read`` asks for ``id > high OR id IN gaps`` (or, with
    many gaps, counts them: below). A gap is filled when its row appears,
    and forgotten when it can no longer appear:

    * PostgreSQL: after ``GAP_SECONDS``, and not before a later read's
      snapshot ``xmin`` reaches the ``xmax`` of the snapshot that noticed
      the gap (no transaction that had its id by then still runs). The
      snapshot alone cannot tell: ``xmax`` is the newest finished
      transaction's id plus one, and a transaction that took its id
      after that one's but its log id before may still be running, above
      ``xmax``.
    * MySQL/MariaDB (Galera) and SQLite: after ``GAP_SECONDS``.

    Either way a transaction that took a log id and commits more than
    ``GAP_SECONDS`` later is seen only at the index's periodic full
    reload. SQLite has one writer at a time, so its ids commit in order
    and it has no gaps.

    At most ``MAX_GAPS`` are kept (the oldest are forgotten first).
    A reader that starts from nothing (``since=None``) treats the ids
    missing from the last ``START_WINDOW`` ids as gaps, since it cannot
    tell which running transactions took ids below the highest.

    The bounds and the newest ids come from the same statement as the
    rows, so one snapshot also under READ COMMITTED.

Reading many gaps: counting them instead of sending them
    On Galera each node hands out every third id
    (``auto_increment_increment``), so a node writing alone leaves two
    ids per log row that never fill: a reader keeps hundreds or
    thousands of gaps for ``GAP_SECONDS``, and sending them all in every
    read cost more than the rest of a candidates request. A reader with
    more than ``SEND_GAPS`` gaps keeps ``counted`` in its cursor:
    ``base``, a logged id below its lowest gap, and ``expected``, the
    number of rows from ``base`` to ``high`` it knows of. Its frequent
    read sends ``high``, ``base`` and its lowest gap (``split``), and
    gets back, in its one prepared statement, the rows above ``high``,
    the newest id at or below ``base``, the newest id below ``split``,
    and the number of rows in ``[base, split)`` and in ``[split, high]``.
    When the first is ``base`` and the two numbers add up to
    ``expected``, no gap filled:

    * Ids are unique, and an id from ``base`` to ``high`` is a row the
      reader has seen (counted in ``expected``), an open gap, or one it
      gave up on: a row appearing there is one of those filling, and
      raises the count.
    * Rows leave the log only when pruned, and pruning deletes every id
      up to a bound: had it deleted a counted row, ``base`` would be
      gone too, which the newest id at or below ``base`` shows. So a
      prune cannot offset a fill, whatever the pruning rules.
    * It is all one statement, so one snapshot: PostgreSQL and InnoDB
      give a statement one snapshot, subqueries included, under READ
      COMMITTED (ours on MySQL/MariaDB, PostgreSQL's default) and in
      autocommit (our readers on both). The PostgreSQL snapshot bounds
      that decide when a gap is forgotten come from it too, as before.
    * On Galera the nodes commit in one order (``repl.commit_order``
      at its default), so what a node shows is a prefix of it: a node
      that has not yet applied a row the reader saw on another shows
      fewer rows, not a fill in their place. With fewer, the count
      differs, and the reader sends its gaps.

    The reader then counts from the newest id below its lowest gap
    (nothing lies between them) and expects that row, the rows of
    ``[split, high]`` and the new ones: as gaps are forgotten, oldest
    and lowest first, the counted range follows, spanning about
    ``GAP_SECONDS`` of ids. When the check fails, the reader sends its
    gaps as before, in a second statement that also counts afresh. A
    read with up to ``SEND_GAPS`` gaps sends them at once: on PostgreSQL
    a few transactions committing out of order leave a few gaps that
    soon fill, and sending them keeps that read to one statement.

    An id given up on that is logged later (a transaction that committed
    more than ``GAP_SECONDS`` after taking it, or a gap beyond
    ``MAX_GAPS``) changes the count as well: the reader sends its gaps,
    finds none filled, counts afresh and goes on; the row is seen at the
    next whole reload, as before. Reloading everything then would see it
    sooner, but the count cannot tell it from a Galera node that had not
    yet applied rows the reader saw on another when the reader counted
    afresh there, and a needless whole reload costs a large cloud's
    worker a quarter of a second; no given-up gap was seen filling in
    the Galera runs (doc/source/contributor/benchmarks.rst).

Pruning: by readers, after a refresh
    A row is kept while a reader may still need it, and no longer: the
    log is the one table of ours on top of upstream's schema, and a
    cloud's database should not grow with its write history. Every
    reader keeps, in its cursor, a few marks (``Mark``): the log's newest id
    at a read, taken every ``MARK_SECONDS``. Once a mark is
    ``KEEP_SECONDS`` old, ``read`` says to prune (``prune_to``) the ids
    more than ``2 * START_WINDOW`` below that mark's, at most once per
    ``PRUNE_STEP`` ids, and the reader deletes them (``prune``) in a
    short transaction of its own, ignoring a failure (another process
    pruning the same rows). Why that is enough:

    * No reader still needs those rows: ``KEEP_SECONDS`` is longer than
      a reader keeps its data without reloading it whole (the provider
      index's ``MAX_AGE``), so a reader whose data is still in use has
      read since the mark, and its cursor and gaps are above the mark's
      id less ``START_WINDOW`` (a reader starting afresh looks that far
      back). A reader whose data is older reloads everything anyway.
    * No row can still appear below the bound unless its transaction
      has run for ``KEEP_SECONDS``, six times ``GAP_SECONDS``, after
      which gaps are forgotten on every database anyway.

    Besides, when the log holds more than ``2 * KEEP_ROWS`` rows (a
    burst of writes faster than the age rule prunes), ``read`` says to
    prune all but the newest ``KEEP_ROWS``. A reader looks at the log's
    length when it starts and each time its cursor passes a multiple of
    ``KEEP_ROWS``. A reader left behind the oldest row, or with a gap
    below it, reloads everything; so does one whose highest id is above
    the log's (another database, a log recreated by a downgrade and
    upgrade, or on SQLite a reader whose snapshot is older than the read
    that moved its cursor), starting afresh from what its snapshot
    holds.

Reading cheaply on a large cloud
    The frequent read (one per listing or candidates request) never asks
    for the log's oldest id: after a prune, until VACUUM, ``min(id)``
    walks the index entries of every deleted row (tens of thousands on a
    large cloud). It asks instead for the newest id at or below the
    reader's position, found at once, which tells the same thing (the
    log still holds what the reader needs). And it returns at most
    ``BATCH`` rows (the reader asks again while it gets that many), so
    that PostgreSQL plans the prepared statement once: with ``id > $1``
    unbounded it guesses a third of the log and, on a long log, plans
    again at every execution.
"""

import collections
import operator
import time

import sqlalchemy as sa

from placement.db import prepared
from placement.db import tables

_LOG = tables.provider_change_log

#: Seconds after which a gap is forgotten.
GAP_SECONDS = 60
#: Gaps kept at most; beyond, the oldest are forgotten.
MAX_GAPS = 5000
#: Ids below the newest a reader starting afresh checks for gaps.
START_WINDOW = 1000
#: Rows kept when pruning by length; the log is pruned at twice this.
KEEP_ROWS = 50000
#: Seconds a logged id is kept at least: longer than any reader keeps
#: its data without reloading it whole (the provider index's MAX_AGE)
#: and than GAP_SECONDS.
KEEP_SECONDS = 360
#: Seconds between the marks a reader keeps of the log's newest id.
MARK_SECONDS = 15
#: Ids the age rule prunes at least at once.
PRUNE_STEP = 1000

class Gap(collections.namedtuple('Gap', ['id', 'noticed', 'horizon'])):
    """An id below the highest seen whose row was not there: ``noticed``
    (monotonic seconds) and, on PostgreSQL, ``horizon``, the xmax of the
    snapshot that noticed it."""


_GAP_ID = operator.itemgetter(0)


class Mark(collections.namedtuple('Mark', ['at', 'high'])):
    """The log's newest id ``high`` seen by a read at ``at`` (monotonic
    seconds)."""


class Cursor(collections.namedtuple(
        'Cursor', ['high', 'gaps', 'marks', 'pruned', 'counted'],
        defaults=((), 0, None))):
    """Where a reader is: the highest id seen and the open gaps (a tuple
    of Gap, in id order, which is also the order they were noticed in);
    the reader's Marks, the id up to which it last said to prune, and
    ``counted``: None, or (``base``, ``expected``), a logged id below
    the lowest gap and the number of rows from it to ``high`` the
    reader knows of (see the module docstring). Pass it back to
    ``read`` as ``since``."""

    __slots__ = ()

    @property
    def place(self):
        """The highest id and the open gaps' ids: what a read from this
        cursor finds. Readers at one place may share a read, whichever
        read noticed their gaps (when, and under which snapshot) and
        whichever counted them: what either count describes is what
        both readers have seen."""
        # map, not a generator: a reader on Galera has thousands.
        return self.high, tuple(map(_GAP_ID, self.gaps))


Changes = collections.namedtuple('Changes',
                                 ['version', 'provider_ids', 'prune_to'])
Changes.__doc__ = """What ``read`` found.

``version`` is the reader's new Cursor: pass it as ``since`` next time.
``provider_ids`` is the set of ids of the providers changed since
``since`` (empty if none; ids of deleted providers included), or None
when the caller must reload everything: ``since`` was None, the log no
longer holds what the reader missed, the log is not the one ``since``
came from, or a class, trait or aggregate was renamed or deleted.
``prune_to`` is the id up to which the log should now be pruned
(``prune``), or None.
"""


# -- reading ------------------------------------------------------------------

def _snapshot_bounds(conn):
    """The statement snapshot's xmin and xmax, on PostgreSQL; elsewhere
    none, not even NULL columns: on PyMySQL each column of a result
    costs about 5 µs to describe, whatever the rows."""
    if conn.dialect.name != 'postgresql':
        return ()
    return tuple(sa.cast(sa.cast(
        getattr(sa.func, 'pg_snapshot_' + which)(
            sa.func.pg_current_snapshot()), sa.Text), sa.BigInteger)
        .label(label) for which, label in (('xmin', 'c'), ('xmax', 'd')))


def _statement(conn, where, low, limit=None, counts=()):
    """One row of bounds (``low``: the lowest id, or the newest at or
    below the reader's position; the highest id; the ``counts``; on
    PostgreSQL the snapshot's xmin and xmax), then the rows ``where``
    selects (the first ``limit`` of them by id when given), in one
    statement (one snapshot). Each bound is a subquery of its own and
    the rows a plain range, so that every database answers from the
    primary key alone."""
    highest = sa.select(sa.func.max(_LOG.c.id)).scalar_subquery()
    bigint = sa.BigInteger()
    snapshot = _snapshot_bounds(conn)
    bounds = sa.select(
        sa.literal(1).label('kind'),
        sa.cast(low, bigint).label('a'),
        sa.cast(highest, bigint).label('b'),
        *[sa.cast(count, bigint).label('n%d' % index)
          for index, count in enumerate(counts)],
        *snapshot)
    logged = sa.select(_LOG.c.id,
                       sa.cast(_LOG.c.resource_provider_id, bigint)
                       .label('provider')).where(where)
    if limit is not None:
        # A literal, not a parameter: the plan is made knowing it.
        logged = logged.order_by(_LOG.c.id).limit(
            sa.literal_column(str(int(limit))))
    logged = logged.subquery()
    rows = sa.select(
        sa.literal(2), logged.c.id, logged.c.provider,
        *[sa.cast(sa.null(), bigint)] * (len(counts) + len(snapshot)))
    return sa.union_all(bounds, rows)


#: Rows the frequent reads (not the one sending gaps) return at most per
#: statement.
BATCH = 100
#: Gaps a read sends as ids at most; a reader with more counts instead
#: (see the module docstring).
SEND_GAPS = 16

_HIGH = sa.bindparam('high', type_=sa.BigInteger)
_FLOOR = sa.bindparam('floor', type_=sa.BigInteger)
_BASE = sa.bindparam('base', type_=sa.BigInteger)
_SPLIT = sa.bindparam('split', type_=sa.BigInteger)
_GAPS = sa.bindparam('gaps', expanding=True, type_=sa.BigInteger)
_WHERE = {
    # Starting afresh: the newest START_WINDOW ids.
    'start': lambda: _LOG.c.id > sa.func.coalesce(
        sa.select(sa.func.max(_LOG.c.id)).scalar_subquery(), 0)
    - START_WINDOW,
    'after': lambda: _LOG.c.id > _HIGH,
    'gaps': lambda: sa.or_(_LOG.c.id > _HIGH, _LOG.c.id.in_(_GAPS)),
}
_WHERE['counted'] = _WHERE['after']
_LIMIT = {'after': BATCH, 'counted': BATCH}


def _lowest_logged():
    return sa.select(sa.func.min(_LOG.c.id)).scalar_subquery()


#: The ``low`` bound each kind reads (see the module docstring).
_LOW = {
    'start': _lowest_logged,
    'after': lambda: sa.select(sa.func.max(_LOG.c.id))
    .where(_LOG.c.id <= _FLOOR).scalar_subquery(),
}
_LOW['gaps'] = _LOW['counted'] = _LOW['after']


def _logged_between(lower, upper):
    """The number of log rows with ``lower <= id < upper`` (``upper``
    None: ``<= high``), from the primary key."""
    upper = _LOG.c.id <= _HIGH if upper is None else _LOG.c.id < upper
    return (sa.select(sa.func.count()).select_from(_LOG)
            .where(_LOG.c.id >= lower, upper).scalar_subquery())


def _counts():
    """What a read with gaps counts besides: the newest id below the
    lowest gap (``split``), the rows from ``base`` up to the lowest
    gap, and from it to ``high``."""
    return (sa.select(sa.func.max(_LOG.c.id))
            .where(_LOG.c.id < _SPLIT).scalar_subquery(),
            _logged_between(_BASE, _SPLIT), _logged_between(_SPLIT, None))


_COUNTS = {'gaps': _counts, 'counted': _counts}
_STATEMENTS = {}


def _cached(conn, kind):
    """The statement of ``kind`` for this dialect, built once: building
    one costs more than running it."""
    key = (conn.dialect.name, kind)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        counts = _COUNTS.get(kind)
        stmt = _STATEMENTS[key] = _statement(
            conn, _WHERE[kind](), _LOW[kind](), _LIMIT.get(kind),
            counts() if counts else ())
    return stmt


def _prepared(conn, kind):
    """``_cached`` as a ``prepared.Prepared``: the reads that send no
    gaps (by far the most frequent, one per candidates or listing
    request) run on the driver's cursor, at a fraction of
    ``conn.execute``'s cost."""
    key = (conn.dialect.name, kind, 'prepared')
    found = _STATEMENTS.get(key)
    if found is None:
        found = _STATEMENTS[key] = prepared.Prepared(_cached(conn, kind))
    return found


def read(conn, since, clock=time.monotonic):
    """``Changes(cursor, provider_ids)`` since the Cursor ``since`` (None:
    the caller has nothing yet), usually in one statement: one more when
    the oldest id is needed too (see ``_needs_lowest``), one more when
    the count of a reader with many gaps says one may have filled, and
    one more per ``BATCH`` rows beyond the first."""
    batches = [_read(conn, since, clock)]
    while batches[-1][1]:
        batches.append(_read(conn, batches[-1][0].version, clock))
    found = [changes for changes, _full in batches]
    changed = [changes.provider_ids for changes in found]
    return Changes(
        found[-1].version,
        None if None in changed else set().union(*changed),
        max((changes.prune_to for changes in found
             if changes.prune_to is not None), default=None))


def _read(conn, since, clock):
    """``read`` in one statement, or two when the count says to send the
    gaps: (Changes, whether the statement returned as many rows as it
    may, so that more may follow)."""
    kind = 'start'
    base = split = expected = None
    if since is None:
        high, gaps, marks, pruned = 0, (), (), 0
        rows = _prepared(conn, 'start').rows(conn)
    else:
        high, gaps, marks, pruned, counted = since
        if not gaps:
            kind = 'after'
            rows = _prepared(conn, kind).rows(conn, high=high,
                                              floor=high + 1)
        elif counted is None or len(gaps) <= SEND_GAPS:
            kind, split = 'gaps', gaps[0].id
            rows = conn.execute(_cached(conn, kind), {
                'high': high, 'floor': split, 'base': split,
                'split': split, 'gaps': list(map(_GAP_ID, gaps))}).all()
        else:
            kind, split = 'counted', gaps[0].id
            base, expected = counted
            rows = _prepared(conn, kind).rows(
                conn, high=high, floor=base, base=base, split=split)
    low = hi = xmin = xmax = None
    below = under = over = None
    found = {}
    for row in rows:
        if row[0] == 1:
            low, hi = row[1], row[2]
            if kind in _COUNTS:
                below, under, over = row[3:6]
            if len(row) > 3 + 3 * (kind in _COUNTS):
                xmin, xmax = row[-2:]
        else:
            found[row[1]] = row[2]
    if kind == 'counted' and (low != base or under + over != expected):
        # A gap (or an id forgotten as one) filled, a prune reached the
        # counted rows, or this node has not applied all the reader saw:
        # send the gaps, which counts afresh.
        return _read(conn, since._replace(counted=None), clock)
    if since is None:
        lo = low
        # Starting afresh: what the window holds is in the full load;
        # the ids it lacks may still be committed.
        high = max((hi or 0) - START_WINDOW, (lo or 1) - 1, 0)
        found = {id_: rp for id_, rp in found.items() if id_ > high}
        behind = False
    elif (hi or 0) < high:
        # The log ends below the reader's cursor: another log (database),
        # or a snapshot older than the read that moved the cursor (on
        # SQLite a reader keeps the snapshot of its first statement, and
        # another thread of the process may have read since). Start
        # afresh from what this snapshot holds, so that the next read
        # names what was committed after it.
        return _read(conn, None, clock)
    else:
        # No row at or below the reader's position (its highest id + 1,
        # or its lowest gap, or the id it counts from) while the log has
        # rows: the oldest is above it, what the reader missed may have
        # been pruned.
        behind = hi is not None and low is None
        lo = (_lowest(conn) if behind
              or _needs_lowest(high, max(found, default=high)) else None)
    reload_all = (
        since is None
        or behind
        or None in found.values())
    now = clock()
    counted = _counted(kind, high, found, low, below, over)
    high, gaps = _advance(high, gaps, found, now, xmin, xmax)
    if lo is not None:
        # Ids below the oldest row were pruned: they cannot appear now.
        gaps = tuple(gap for gap in gaps if gap.id >= lo)
    marks, aged = _marked(marks, now, hi)
    prune_to = max(
        hi - KEEP_ROWS if lo is not None and hi is not None
        and hi - lo >= 2 * KEEP_ROWS else 0,
        aged if aged - pruned >= PRUNE_STEP else 0) or None
    cursor = Cursor(high, gaps, marks, max(pruned, prune_to or 0),
                    counted if gaps and not behind else None)
    full = kind in _LIMIT and len(found) >= BATCH
    if reload_all:
        return Changes(cursor, None, prune_to), full
    return Changes(cursor, set(found.values()), prune_to), full


def _counted(kind, high, found, low, below, over):
    """The Cursor's ``counted`` after a read of ``kind`` from ``high``
    that found the rows ``found`` and the bound ``low`` and, with gaps,
    the newest id ``below`` the lowest gap and the number of rows
    ``over`` from that gap to ``high``: a logged id below every gap the
    reader will have, and the number of rows from it to its new highest
    id (see the module docstring). None when unknown."""
    newer = sum(1 for id_ in found if id_ > high)
    if kind == 'after' and low is not None:
        # ``low``, the newest id at or below ``high + 1``, is below
        # every new gap, and the rows from it to ``high`` are itself
        # only (or none, when it is ``high + 1``, one of ``found``).
        return low, newer + (low <= high)
    if kind in _COUNTS and below is not None:
        # Nothing lies between ``below`` and the lowest gap; the rows
        # from it to ``high`` (``over``) include the gaps just filled.
        return below, 1 + over + newer
    return None


def _marked(marks, now, hi):
    """(the reader's marks after a read at ``now`` that saw ``hi`` as the
    newest id, the id up to which the age rule lets the log be pruned:
    0 when nothing yet; see the module docstring)."""
    # The newest old enough mark is the one that counts: forget older.
    while len(marks) > 1 and now - marks[1].at >= KEEP_SECONDS:
        marks = marks[1:]
    aged = 0
    if marks and now - marks[0].at >= KEEP_SECONDS:
        aged = max(marks[0].high - 2 * START_WINDOW, 0)
    if hi is not None and (not marks
                           or now - marks[-1].at >= MARK_SECONDS):
        marks += (Mark(now, hi),)
    return marks, aged


def _needs_lowest(high, reached):
    """Whether a reader moving from id ``high`` to ``reached`` should
    look at the log's length: when it passes a multiple of
    ``KEEP_ROWS`` (once per that many ids, however they are read)."""
    return reached // KEEP_ROWS > high // KEEP_ROWS


def _lowest(conn):
    """The log's oldest id (None: empty)."""
    return conn.execute(sa.select(sa.func.min(_LOG.c.id))).scalar()


def _advance(high, gaps, found, now, xmin, xmax):
    """The next (high, gaps) after reading ``found`` ({id: provider}).
    Gaps are in the order they were noticed, so those no longer waited
    for come first (one still waited for keeps those after it a little
    longer, which costs nothing but a few ids), and a reader with
    thousands of gaps (Galera) handles only those that changed."""
    new_high = max(high, max(found, default=high))
    start = 0
    while start < len(gaps) and _resolved(gaps[start], now, xmin):
        start += 1
    kept = list(gaps[start:])
    if any(id_ <= high for id_ in found):
        kept = [gap for gap in kept if gap.id not in found]
    kept += [Gap(missing, now, xmax) for missing in range(high + 1, new_high)
             if missing not in found]
    if len(kept) > MAX_GAPS:
        kept = sorted(kept, key=lambda gap: gap.noticed)[-MAX_GAPS:]
    return new_high, tuple(kept)


def _resolved(gap, now, xmin):
    """True once the gap's row is no longer waited for (see the module
    docstring)."""
    if now - gap.noticed <= GAP_SECONDS:
        return False
    return gap.horizon is None or xmin is None or xmin >= gap.horizon


def prune(conn, bound):
    """Forget the log up to id ``bound``: readers older than that reload
    everything. Only old rows, which no writer touches, are deleted."""
    conn.execute(sa.delete(_LOG).where(_LOG.c.id <= bound))
