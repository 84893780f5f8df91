"""GET /capacity in a real headless Chromium.

The page must render its six plots (four of usage, two of the named
flavors that fit) and its over-capacity table with no console error, no refused
load and no request beyond the page itself; the run leaves a screenshot
in ``build/screenshots/capacity-page.png`` (or under
``$PLACEMENT_SCREENSHOT_DIR``). Skipped when chromium is not installed,
unless ``PLACEMENT_REQUIRE_BROWSER=1`` (CI) makes that a failure.
"""

import os
import socketserver
import threading
import uuid
from wsgiref import simple_server

import pytest

from placement.tests import fixtures
from placement.tests.functional.objects import test_fleet_totals
from placement.tests import gunicorn_server
from placement.tests import headless_browser

CHECKOUT = gunicorn_server.CHECKOUT


@pytest.fixture(scope='module')
def chromium():
    binary = headless_browser.executable()
    if binary is None:
        if os.environ.get('PLACEMENT_REQUIRE_BROWSER') == '1':
            pytest.fail('chromium is required but not installed')
        pytest.skip('chromium is not installed (apt-get install chromium)')
    return binary


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    servers = []

    def start(app):
        server = simple_server.make_server(
            '127.0.0.1', 0, app, server_class=_Server, handler_class=_Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return 'http://127.0.0.1:%d' % server.server_port

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _fleet(app):
    fleet = test_fleet_totals.Fleet(app)
    aggregates = [str(uuid.uuid4()) for _ in range(3)]
    providers = []
    for i in range(12):
        rp = fleet.provider(
            'compute-%02d' % i,
            {'VCPU': {'total': 32, 'allocation_ratio': 4.0},
             'MEMORY_MB': {'total': 131072, 'reserved': 2048},
             'DISK_GB': {'total': 2000}},
            aggregates=[aggregates[i % 3]])
        providers.append(rp)
        if i % 4 == 0:
            fleet.provider('compute-%02d-gpu' % i, {'VGPU': {'total': 8}},
                           parent=rp)
    for i, rp in enumerate(providers):
        fleet.allocate({rp: {'VCPU': 10 * i + 1, 'MEMORY_MB': 8192 * i + 512,
                             'DISK_GB': 100 + 150 * i}})
    # A ratio lowered below what compute-11 uses: over capacity.
    generation = test_fleet_totals.call(
        app, 'GET', '/resource_providers/%s' % rp).json['generation']
    test_fleet_totals.call(
        app, 'PUT', '/resource_providers/%s/inventories/VCPU' % rp,
        {'resource_provider_generation': generation, 'total': 32,
         'allocation_ratio': 1.0})


FLAVORS = ['m1.small = resources=VCPU:1,MEMORY_MB:2048,DISK_GB:20',
           'm1.large = resources=VCPU:4,MEMORY_MB:8192,DISK_GB:80',
           'm1.xlarge = resources=VCPU:8,MEMORY_MB:16384,DISK_GB:160',
           'gpu.small = resources=VCPU:2,MEMORY_MB:4096&resources1=VGPU:1'
           '&group_policy=none']


def test_capacity_page_renders_its_plots(chromium, serve):
    db, cleanup = fixtures.new_database()
    try:
        # No reuse of a page an earlier test on this database cached.
        app = fixtures.new_app(fixtures.new_conf(
            metrics__capacity_refresh_interval=0,
            capacity__flavors=FLAVORS), db)
        _fleet(app)
        url = serve(app) + '/capacity'
        with headless_browser.Browser(chromium) as browser:
            page = browser.open(url)
            assert page.evaluate('document.title') == 'Placement capacity'
            plots = page.evaluate(
                "Array.from(document.querySelectorAll('svg.plot'))"
                ".map(s => { const r = s.getBoundingClientRect();"
                " return [r.width, r.height, "
                "s.querySelectorAll('rect.bar, rect.cell').length]; })")
            assert len(plots) == 6, plots
            for width, height, marks in plots:
                assert width > 300 and height > 20 and marks > 0, plots
            text = page.evaluate('document.body.innerText')
            for heading in ('Usage by resource class', 'Usage by aggregate',
                            'Fullest root providers',
                            'Emptiest root providers',
                            'How many more fit, per flavor',
                            'Over capacity'):
                assert heading in text
            assert 'compute-11' in text
            for flavor in ('m1.small', 'm1.xlarge', 'gpu.small'):
                assert flavor in text
            over = page.evaluate(
                "Array.from(document.querySelectorAll("
                "'#over-capacity tr')).map(r => r.innerText)")
            assert len(over) == 2 and 'compute-11' in over[1], over
            assert '111' in over[1] and '32' in over[1], over
            assert page.problems() == []
            assert page.requested_urls() == [url]
            # Readable on a laptop: nothing wider than the window.
            assert page.evaluate(
                'document.documentElement.scrollWidth') <= 1280
            directory = os.environ.get(
                'PLACEMENT_SCREENSHOT_DIR',
                os.path.join(CHECKOUT, 'build', 'screenshots'))
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, 'capacity-page.png')
            page.screenshot(path)
            with open(path, 'rb') as shot:
                assert shot.read(8) == b'\x89PNG\r\n\x1a\n'
    finally:
        cleanup()


def test_an_untrusted_browser_sees_no_data(chromium, serve):
    db, cleanup = fixtures.new_database()
    try:
        app = fixtures.new_app(fixtures.new_conf(), db)
        _fleet(app)
        # As seen from a network outside [metrics] trusted_networks.
        untrusted = fixtures.new_app(
            fixtures.new_conf(metrics__trusted_networks=[]), db)
        with headless_browser.Browser(chromium) as browser:
            page = browser.open(serve(untrusted) + '/capacity')
            text = page.evaluate('document.body.innerText')
            assert 'compute-' not in text
            assert page.evaluate(
                "document.querySelectorAll('svg').length") == 0
    finally:
        cleanup()
