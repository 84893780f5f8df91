"""The rows provider listings show, kept in memory per process.

``GET /resource_providers`` without filters, or with only those the
provider index answers (``resources``, ``required``, ``member_of``),
shows every provider or those the index found, in id order. Reading those
rows from the database costs more than everything else such a listing does
(a thousand providers: about a millisecond and a half on SQLite, most of
it making Python strings). So each process keeps the listed row of every
provider, and brings it up to date at the start of every listing from the
change log (``placement.db.changes``), as the provider index does: the
triggers log a provider whenever its row changes (a rename, a generation
bump, a move in its tree) or is deleted, so a listing sees every write
committed before it started, exactly as if it read the table.

A refresh only notes the providers the log names as stale; a listing
reads again those it shows (``refresh(wanted=)``), so that the sharing
providers of an aggregate, which nova-compute lists at every periodic
refresh, cost no read while allocation writes change compute nodes.

The cache has its own cursor in the log; pruning the log is left to
the provider index. It is reloaded whole on first use, when the log was
pruned beyond its cursor, and at least every
``provider_index.MAX_AGE`` seconds. It holds about 400 bytes per
provider (a row tuple and its strings; ``functional/objects/
test_listed_rows.py`` bounds it).
"""

import collections
import time

import sqlalchemy as sa

from placement.db import prepared
from placement.db import tables
from placement.objects.candidates import provider_index
from placement.objects import per_process

_RP = tables.resource_providers
_PARENT = _RP.alias('parent_rp')
_ROOT = _RP.alias('root_rp')
_IDS = sa.bindparam('ids', expanding=True)

#: What a listing reads of a provider: ``id, uuid, name, generation,
#: parent_uuid, root_uuid, changed``. Parent and root uuids are read by
#: id only for the providers that have them (a CASE around a scalar
#: subquery is evaluated lazily): most listed providers are roots.
#: ``changed`` is updated_at else created_at, as the database stores it
#: (raw: only the newest of them is turned into a datetime), for
#: Last-Modified.
LISTED = sa.select(
    _RP.c.id, _RP.c.uuid, _RP.c.name, _RP.c.generation,
    sa.case((_RP.c.parent_provider_id.is_(None), sa.null()),
            else_=sa.select(_PARENT.c.uuid)
            .where(_PARENT.c.id == _RP.c.parent_provider_id)
            .scalar_subquery()).label('parent_uuid'),
    sa.case((sa.or_(_RP.c.root_provider_id.is_(None),
                    _RP.c.root_provider_id == _RP.c.id), _RP.c.uuid),
            else_=sa.select(_ROOT.c.uuid)
            .where(_ROOT.c.id == _RP.c.root_provider_id)
            .scalar_subquery()).label('root_uuid'),
    sa.type_coerce(sa.func.coalesce(_RP.c.updated_at, _RP.c.created_at),
                   sa.String).label('changed'))

#: A listed row by name.
ListedProvider = collections.namedtuple('ListedProvider', [
    'id', 'uuid', 'name', 'generation', 'parent_uuid', 'root_uuid',
    'changed'])

_ALL = LISTED.order_by(_RP.c.id)
# Ordered too: new providers are appended as they come.
_SOME = LISTED.where(_RP.c.id.in_(_IDS)).order_by(_RP.c.id)
#: Rows per IN list, and per part of a full load.
_CHUNK = 500
#: Up to this many changed providers (a write changes one or two) are
#: read by a prepared statement, the ids padded with the last one: an
#: ``IN`` list is rendered again at every execution, and planned again
#: by the server.
_FEW = 4
_SOME_FEW = prepared.Prepared(
    LISTED.where(_RP.c.id.in_([sa.bindparam('id%d' % i, type_=sa.Integer)
                               for i in range(_FEW)]))
    .order_by(_RP.c.id))


class ListedRows(per_process.LogFollower):
    """``rows``: {provider id: its ``ListedProvider``}, in id order,
    current for every provider but those in ``stale``.

    The log names the providers a write changed; their rows are read
    again when a listing wants them (``refresh(wanted=)``), not before:
    the listing most often sent, the sharing providers of an aggregate
    (``member_of`` and ``required``), shows one provider that writes
    seldom change, while allocation writes keep logging compute nodes.
    A stale provider's row may be out of date, gone (the provider was
    deleted) or missing (a new provider).

    Callers hold ``lock`` from ``refresh`` until they have taken the
    rows they need: a refresh changes ``rows`` in place.
    """

    max_age = provider_index.MAX_AGE

    def __init__(self):
        super().__init__()
        self.rows = {}
        self.stale = set()

    def refresh(self, conn, clock=time.monotonic, reads=None, wanted=None):
        """``LogFollower.refresh``, after which the rows of ``wanted``
        (ids; None: every provider) are current."""
        self._refresh(conn, clock, reads, wanted)

    def _refresh(self, conn, clock, reads=None, wanted=None):
        found = super()._refresh(conn, clock, reads)
        stale = self.stale
        if stale:
            due = stale if wanted is None else stale.intersection(wanted)
            if due:
                try:
                    self._load(conn, due)
                except BaseException:
                    self.version = self.loaded_at = None
                    raise
                stale.difference_update(due)
        return found

    def load_all(self, conn):
        self.rows = {}
        self.stale = set()
        for part in conn.execute(_ALL).partitions(_CHUNK * 20):
            self._add(part)

    def load_changed(self, conn, provider_ids):
        self.stale.update(provider_ids)

    def _load(self, conn, provider_ids):
        ids = sorted(provider_ids)
        rows = self.rows
        last = next(reversed(rows), 0)
        new = [provider for provider in ids if provider not in rows]
        found = set()
        for start in range(0, len(ids), _CHUNK):
            part = _changed_rows(conn, ids[start:start + _CHUNK])
            found.update(row[0] for row in part)
            # A kept provider keeps its place: a dict key assigned again
            # does not move.
            self._add(part)
        for provider in ids:
            if provider not in found:
                rows.pop(provider, None)
        if any(provider < last and provider in found for provider in new):
            # A new provider with an id below the newest one's (ids are
            # usually handed out in order): back into id order.
            self.rows = dict(sorted(rows.items()))

    def _add(self, part):
        rows = self.rows
        for row in part:
            provider, uuid, name, generation, parent, root, changed = row
            if root == uuid:
                root = uuid  # one string for a root's two uuids
            rows[provider] = ListedProvider(provider, uuid, name,
                                            generation, parent, root,
                                            changed)


def _changed_rows(conn, ids):
    """The listed rows of the providers ``ids`` (sorted) that exist."""
    if len(ids) > _FEW:
        return conn.execute(_SOME, {'ids': ids}).all()
    padded = ids + ids[-1:] * (_FEW - len(ids))
    return _SOME_FEW.rows(conn, **{'id%d' % i: provider
                                   for i, provider in enumerate(padded)})


# -- one per process and database ---------------------------------------------

_CACHES = per_process.PerDatabase(ListedRows)


def of(db):
    """The listed rows of database ``db`` in this process."""
    return _CACHES.of(db)
