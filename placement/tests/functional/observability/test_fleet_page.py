"""The capacity page drawn from a snapshot of a real database."""

from placement import context
from placement.objects.candidates import fit as fit_obj
from placement.objects import fleet_totals
from placement.observability import fleet_page
from placement.tests import fixtures
# The fleet fixture: three providers, one tree, one aggregate.
from placement.tests.functional.objects.test_fleet_totals import fleet  # noqa: F401


def test_page_plots_and_escapes(fleet):  # noqa: F811
    page = fleet_page.render(fleet_totals.read(context.AdminContext(
        fleet.db)))
    assert page.count('<svg class="plot"') == 4
    assert '<b>cn2</b>' not in page
    assert '&lt;b&gt;cn2&lt;/b&gt;' in page
    # cn2's tree is full of VCPU: the fullest root, shown first.
    fullest = page.split('id="fullest"')[1].split('id="emptiest"')[0]
    assert fullest.index('cn2') < fullest.index('cn1')
    assert 'http://' not in page and 'https://' not in page
    assert '<script' not in page


def test_page_of_an_empty_fleet():
    db, cleanup = fixtures.new_database()
    try:
        page = fleet_page.render(fleet_totals.read(context.AdminContext(db)))
        assert 'Nothing to show' in page
        assert 'No provider is in an aggregate' in page
    finally:
        cleanup()


def test_a_count_that_is_not_exact_reads_at_least(fleet):  # noqa: F811
    fits = [fit_obj.FlavorFit('m1.small', 7, {}),
            fit_obj.FlavorFit('m1.large', 3, {}, exact=False)]
    page = fleet_page.render(fleet_totals.read(context.AdminContext(
        fleet.db)), flavor_fits=fits)
    assert '>7 more<' in page
    assert '>at least 3 more<' in page
