"""Capacity gauges computed from a capacity snapshot at scrape time.

They describe the fleet, not a process, so only the process answering
the scrape reports them (once, never summed over workers). Names and
labels follow what openstack-exporter derives by polling the API.

On a large fleet writing them out costs far more than reading the
tables (prometheus-client formats each sample in Python, and a fleet
makes a few samples per provider and class), so the exposition
text itself is shared by the workers like the snapshot it comes from.
"""

from prometheus_client import core
from prometheus_client import exposition

from placement.observability import metrics


def flavors_rendered(key, load_fits, max_age):
    """The text exposition of ``placement_flavor_fit`` for the
    ``candidates.fit.FlavorFit`` list ``load_fits()`` returns, made at most
    once per ``max_age`` seconds by the processes sharing metrics
    files."""
    return metrics.shared_cache('flavor-fit-exposition', key).get(
        lambda: exposition.generate_latest(
            _Registry(FlavorFitCollector(load_fits()))), max_age)


def rendered(key, load_snapshot, max_age):
    """The text exposition of the capacity gauges of the snapshot
    ``load_snapshot()`` returns, made at most once per ``max_age``
    seconds by the processes sharing metrics files; ``key`` names the
    database."""
    return metrics.shared_cache('capacity-exposition', key).get(
        lambda: exposition.generate_latest(
            _Registry(CapacityCollector(load_snapshot()))), max_age)


class _Registry:
    def __init__(self, collector):
        self.collector = collector

    def collect(self):
        return self.collector.collect()


class CapacityCollector:
    """A prometheus-client collector over one ``capacity.Snapshot``."""

    def __init__(self, snapshot):
        self.snapshot = snapshot

    def collect(self):
        labels = ['resource_provider', 'provider_uuid', 'resource_class']
        total = core.GaugeMetricFamily(
            'placement_resource_total',
            'Inventory total of a provider and resource class.',
            labels=labels)
        reserved = core.GaugeMetricFamily(
            'placement_resource_reserved',
            'Inventory reserved amount of a provider and resource class.',
            labels=labels)
        ratio = core.GaugeMetricFamily(
            'placement_resource_allocation_ratio',
            'Inventory allocation ratio of a provider and resource class.',
            labels=labels)
        usage = core.GaugeMetricFamily(
            'placement_resource_usage',
            'Amount allocated of a provider and resource class.',
            labels=labels)
        for row in self.snapshot.rows:
            values = [row.provider_name or '', row.provider_uuid,
                      row.resource_class]
            total.add_metric(values, row.total)
            reserved.add_metric(values, row.reserved)
            ratio.add_metric(values, row.allocation_ratio)
            usage.add_metric(values, row.used)
        yield from (total, reserved, ratio, usage)
        over = core.GaugeMetricFamily(
            'placement_provider_over_capacity',
            'Amount allocated beyond the capacity of a provider and '
            'resource class (only those over capacity, after a ratio, '
            'reserved or total was lowered).', labels=labels)
        for row in self.snapshot.over_capacity():
            over.add_metric([row.provider_name or '', row.provider_uuid,
                             row.resource_class], row.used - row.capacity)
        yield over
        yield from _pairs(
            'placement_fleet', 'the whole fleet', ['resource_class'],
            [((key,), value) for key, value in
             self.snapshot.by_class().items()])
        yield from _pairs(
            'placement_aggregate', 'the members of an aggregate',
            ['aggregate_uuid', 'resource_class'],
            self.snapshot.by_aggregate().items())


def _pairs(prefix, what, labels, items):
    capacity = core.GaugeMetricFamily(
        prefix + '_capacity',
        'Usable capacity, int((total - reserved) * allocation_ratio), '
        'of %s by resource class.' % what, labels=labels)
    usage = core.GaugeMetricFamily(
        prefix + '_usage', 'Amount allocated of %s by resource class.'
        % what, labels=labels)
    for key, (cap, used) in items:
        capacity.add_metric(list(key), cap)
        usage.add_metric(list(key), used)
    return capacity, usage


class FlavorFitCollector:
    """``placement_flavor_fit`` of each named request: one sample for
    the fleet (label ``flavor``) and one per aggregate (``flavor``,
    ``aggregate``)."""

    def __init__(self, fits):
        self.fits = fits

    def collect(self):
        family = core.Metric(
            'placement_flavor_fit',
            'How many more instances of a named request ([capacity] '
            'flavors) fit now: in the fleet, and (with an aggregate '
            'label) in the trees whose root is in that aggregate.',
            'gauge')
        for fit in self.fits:
            family.add_sample('placement_flavor_fit', {'flavor': fit.name},
                              fit.total)
            for aggregate, count in fit.by_aggregate.items():
                family.add_sample(
                    'placement_flavor_fit',
                    {'flavor': fit.name, 'aggregate': aggregate}, count)
        yield family
