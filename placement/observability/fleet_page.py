"""The ``GET /capacity`` page: the fleet's capacity and usage as plots.

One self-contained HTML document with inline SVG drawn here, no script
and nothing loaded from elsewhere, so it works in a browser without
network access: bars of usage against capacity per resource class, a
heatmap of usage per aggregate and class, bars of the fullest and
emptiest root providers (the fullness of a tree is that of its fullest
resource class), how many more instances of each named flavor fit in
the fleet and per aggregate (``[capacity] flavors``), and the providers
whose usage exceeds their capacity.
"""

import datetime
import html

#: Rows shown in the aggregate heatmap and in each provider ranking.
MAX_AGGREGATES = 30
MAX_ROOTS = 10
#: Rows of the over-capacity table.
MAX_OVER = 50

_WIDTH = 960
_LABEL = 260
_BAR = 520
_ROW = 26

_STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1000px;
       color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
p.note { color: #555; font-size: 0.9em; }
svg text { font-size: 13px; fill: #222; }
svg text.cell { font-size: 11px; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border-bottom: 1px solid #ddd; padding: 0.2em 0.8em;
         text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
"""


def _e(value):
    return html.escape(str(value), quote=True)


def _fraction(capacity, used):
    return used / capacity if capacity > 0 else (1.0 if used else 0.0)


def _colour(fraction):
    """Green when empty through yellow to red when full."""
    hue = int(120 * (1 - min(max(fraction, 0.0), 1.0)))
    return 'hsl(%d,70%%,45%%)' % hue


def _short(text, limit=34):
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + '\u2026'


def _bars(rows, label_title):
    """Horizontal bars: (label, capacity, used) per row."""
    if not rows:
        return '<p class="note">Nothing to show.</p>'
    height = _ROW * len(rows) + 10
    parts = ['<svg class="plot" role="img" width="%d" height="%d" '
             'viewBox="0 0 %d %d" aria-label="%s">'
             % (_WIDTH, height, _WIDTH, height, _e(label_title))]
    for i, (label, capacity, used) in enumerate(rows):
        y = i * _ROW + 4
        fraction = _fraction(capacity, used)
        width = int(_BAR * min(fraction, 1.0))
        parts.append(
            '<g><title>%s: %s of %s used</title>'
            '<text x="%d" y="%d" text-anchor="end">%s</text>'
            '<rect x="%d" y="%d" width="%d" height="18" fill="#e6e6e6"/>'
            '<rect class="bar" x="%d" y="%d" width="%d" height="18" '
            'fill="%s"/>'
            '<text x="%d" y="%d">%s / %s (%.0f%%)</text></g>'
            % (_e(label), used, capacity,
               _LABEL - 8, y + 14, _e(_short(label)),
               _LABEL, y, _BAR,
               _LABEL, y, width, _colour(fraction),
               _LABEL + _BAR + 8, y + 14, used, capacity, fraction * 100))
    parts.append('</svg>')
    return ''.join(parts)


def _heatmap(by_aggregate):
    """Aggregates (rows) by resource classes (columns), coloured by the
    used fraction of the members' capacity."""
    if not by_aggregate:
        return '<p class="note">No provider is in an aggregate.</p>'
    classes = sorted({rc for _agg, rc in by_aggregate})
    capacity_of = {}
    for (aggregate, _rc), (capacity, _used) in by_aggregate.items():
        capacity_of[aggregate] = capacity_of.get(aggregate, 0) + capacity
    aggregates = sorted(capacity_of, key=lambda a: (-capacity_of[a], a))
    shown = aggregates[:MAX_AGGREGATES]
    label = _LABEL + 50  # room for a whole aggregate uuid
    cell = max(60, min(110, (_WIDTH - label) // max(len(classes), 1)))
    width = label + cell * len(classes) + 10
    height = 24 + _ROW * len(shown) + 10
    parts = ['<svg class="plot" role="img" width="%d" height="%d" '
             'viewBox="0 0 %d %d" aria-label="usage by aggregate">'
             % (width, height, width, height)]
    for j, rc in enumerate(classes):
        parts.append('<text x="%d" y="16" text-anchor="middle">%s</text>'
                     % (label + j * cell + cell // 2, _e(_short(rc, 14))))
    for i, aggregate in enumerate(shown):
        y = 24 + i * _ROW
        parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                     % (label - 8, y + 16, _e(aggregate)))
        for j, rc in enumerate(classes):
            entry = by_aggregate.get((aggregate, rc))
            x = label + j * cell
            if entry is None:
                parts.append('<rect x="%d" y="%d" width="%d" height="22" '
                             'fill="#f4f4f4"/>' % (x, y, cell - 2))
                continue
            capacity, used = entry
            fraction = _fraction(capacity, used)
            parts.append(
                '<g><title>%s %s: %s of %s used</title>'
                '<rect class="cell" x="%d" y="%d" width="%d" height="22" '
                'fill="%s"/><text class="cell" x="%d" y="%d" '
                'text-anchor="middle" style="fill:#fff">%.0f%%</text></g>'
                % (_e(aggregate), _e(rc), used, capacity, x, y, cell - 2,
                   _colour(fraction), x + cell // 2, y + 15,
                   fraction * 100))
    parts.append('</svg>')
    hidden = len(aggregates) - len(shown)
    if hidden > 0:
        parts.append('<p class="note">%d smaller aggregates not shown.</p>'
                     % hidden)
    return ''.join(parts)


def _rankings(by_root):
    """(fullest, emptiest): rows of (label, capacity, used) of the
    fullest class of each root provider."""
    ranked = []
    for (uuid, name), classes in by_root.items():
        usable = [(rc, cap, used) for rc, (cap, used) in classes.items()
                  if cap > 0 or used]
        if not usable:
            continue
        rc, capacity, used = max(
            usable, key=lambda item: (_fraction(item[1], item[2]), item[0]))
        ranked.append((_fraction(capacity, used),
                       '%s (%s)' % (name or uuid, rc), capacity, used))
    ranked.sort(key=lambda item: (item[0], item[1]))
    fullest = [item[1:] for item in reversed(ranked[-MAX_ROOTS:])]
    emptiest = [item[1:] for item in ranked[:MAX_ROOTS]]
    return fullest, emptiest


def _flavor_bars(fits):
    """How many more of each flavor fit in the fleet: bars scaled to the
    largest count, the count written beside each."""
    if not fits:
        return ('<p class="note">No flavor is named: list them in '
                '[capacity] flavors.</p>')
    most = max(max(fit.total for fit in fits), 1)
    height = _ROW * len(fits) + 10
    parts = ['<svg class="plot" role="img" width="%d" height="%d" '
             'viewBox="0 0 %d %d" aria-label="flavors that fit">'
             % (_WIDTH, height, _WIDTH, height)]
    for i, fit in enumerate(fits):
        y = i * _ROW + 4
        width = int(_BAR * fit.total / most)
        # A packing cut short (api-ref/capacity-fit.rst, 'exact').
        at_least = '' if fit.exact else 'at least '
        parts.append(
            '<g><title>%s: %s%d more fit</title>'
            '<text x="%d" y="%d" text-anchor="end">%s</text>'
            '<rect class="bar" x="%d" y="%d" width="%d" height="18" '
            'fill="%s"/><text x="%d" y="%d">%s%d more</text></g>'
            % (_e(fit.name), at_least, fit.total, _LABEL - 8, y + 14,
               _e(_short(fit.name)), _LABEL, y, width,
               '#3a7bd5' if fit.total else '#c0392b',
               _LABEL + width + 8, y + 14, at_least, fit.total))
    parts.append('</svg>')
    return ''.join(parts)


def _flavor_grid(fits):
    """Aggregates (rows) by flavors (columns): how many more fit among
    the aggregate's trees, darker where more of that flavor fit."""
    aggregates = sorted({agg for fit in fits for agg in fit.by_aggregate})
    if not aggregates:
        return ''
    shown = aggregates[:MAX_AGGREGATES]
    label = _LABEL + 50
    cell = max(60, min(110, (_WIDTH - label) // max(len(fits), 1)))
    width = label + cell * len(fits) + 10
    height = 24 + _ROW * len(shown) + 10
    parts = ['<h3>Per aggregate</h3>',
             '<svg class="plot" role="img" width="%d" height="%d" '
             'viewBox="0 0 %d %d" aria-label="flavors that fit by '
             'aggregate">' % (width, height, width, height)]
    for j, fit in enumerate(fits):
        parts.append('<text x="%d" y="16" text-anchor="middle">%s</text>'
                     % (label + j * cell + cell // 2,
                        _e(_short(fit.name, 14))))
    most = [max(fit.by_aggregate.values(), default=0) for fit in fits]
    for i, aggregate in enumerate(shown):
        y = 24 + i * _ROW
        parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                     % (label - 8, y + 16, _e(aggregate)))
        for j, fit in enumerate(fits):
            count = fit.by_aggregate.get(aggregate, 0)
            share = count / most[j] if most[j] else 0.0
            parts.append(
                '<g><title>%s in %s: %d more fit</title>'
                '<rect class="cell" x="%d" y="%d" width="%d" height="22" '
                'fill="hsl(215,60%%,%d%%)"/><text class="cell" x="%d" '
                'y="%d" text-anchor="middle" style="fill:%s">%d</text></g>'
                % (_e(fit.name), _e(aggregate), count,
                   label + j * cell, y, cell - 2, int(92 - 50 * share),
                   label + j * cell + cell // 2, y + 15,
                   '#fff' if share > 0.5 else '#222', count))
    parts.append('</svg>')
    if len(aggregates) > len(shown):
        parts.append('<p class="note">%d more aggregates not shown.</p>'
                     % (len(aggregates) - len(shown)))
    return ''.join(parts)


def _over_capacity(rows):
    """The providers and classes whose usage exceeds their capacity."""
    if not rows:
        return '<p class="note">None: every provider is within capacity.</p>'
    rows = sorted(rows, key=lambda r: (r.capacity - r.used,
                                       r.provider_name or '',
                                       r.resource_class))
    parts = ['<table id="over-capacity"><tr><th>Provider</th><th>uuid</th>'
             '<th>Resource class</th><th>Used</th><th>Capacity</th></tr>']
    for row in rows[:MAX_OVER]:
        parts.append('<tr><td>%s</td><td>%s</td><td>%s</td>'
                     '<td class="n">%d</td><td class="n">%d</td></tr>'
                     % (_e(row.provider_name or ''), _e(row.provider_uuid),
                        _e(row.resource_class), row.used, row.capacity))
    parts.append('</table>')
    if len(rows) > MAX_OVER:
        parts.append('<p class="note">%d more not shown.</p>'
                     % (len(rows) - MAX_OVER))
    return ''.join(parts)


def render(snapshot, now=None, flavor_fits=()):
    """The whole page for a ``capacity.Snapshot`` and the
    ``candidates.fit.FlavorFit`` of each named flavor."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    by_class = snapshot.by_class()
    fullest, emptiest = _rankings(snapshot.by_root())
    providers = len({row.provider_uuid for row in snapshot.rows})
    class_rows = [(rc, cap, used) for rc, (cap, used) in by_class.items()]
    return ''.join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width">',
        '<link rel="icon" href="data:,">',
        '<title>Placement capacity</title><style>', _STYLE,
        '</style></head><body>',
        '<h1>Placement capacity</h1>',
        '<p class="note">%d providers with inventory, %d resource '
        'classes, %d aggregates; read %s UTC. Capacity is '
        'int((total - reserved) &times; allocation_ratio).</p>'
        % (providers, len(by_class), len(snapshot.aggregates),
           now.strftime('%Y-%m-%d %H:%M:%S')),
        '<h2 id="classes">Usage by resource class</h2>',
        _bars(class_rows, 'usage by resource class'),
        '<h2 id="aggregates">Usage by aggregate</h2>',
        _heatmap(snapshot.by_aggregate()),
        '<h2 id="fullest">Fullest root providers</h2>',
        _bars(fullest, 'fullest root providers'),
        '<h2 id="emptiest">Emptiest root providers</h2>',
        _bars(emptiest, 'emptiest root providers'),
        '<h2 id="flavors">How many more fit, per flavor</h2>',
        '<p class="note">Instances of each request named in [capacity] '
        'flavors that the fleet can still hold at the same time '
        '(GET /capacity/fit).</p>',
        _flavor_bars(list(flavor_fits)),
        _flavor_grid(list(flavor_fits)),
        '<h2 id="over-capacity">Over capacity</h2>',
        '<p class="note">Usage above capacity, after a ratio, reserved or '
        'total was lowered: nothing more fits there until it falls.</p>',
        _over_capacity(snapshot.over_capacity()),
        '</body></html>',
    ])
