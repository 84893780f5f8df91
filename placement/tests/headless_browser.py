"""A real headless Chromium driven over the DevTools protocol.

The protocol runs over a pair of pipes (``--remote-debugging-pipe``:
the browser reads NUL-terminated JSON commands on fd 3 and writes
replies and events on fd 4), so nothing beyond the Debian ``chromium``
package and the standard library is needed, no port is opened and no
driver is downloaded. The browser gets a fresh profile and every
background service that could reach the network switched off.
"""

import json
import os
import select
import shutil
import subprocess
import tempfile
import time

from placement.tests import child_process

FLAGS = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
    '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
    '--disable-default-apps', '--disable-extensions',
    '--no-default-browser-check', '--mute-audio', '--hide-scrollbars',
    '--remote-debugging-pipe',
]


def executable():
    """The chromium binary, or None."""
    for name in ('chromium', 'chromium-browser'):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One browser process; ``open`` a page, read it, screenshot it."""

    def __init__(self, binary=None, width=1280, height=900, timeout=60):
        self.binary = binary or executable()
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix='placement-chromium-')
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def _pipes_on_3_and_4():
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)
            child_process.end_with_parent()

        self.process = subprocess.Popen(
            [self.binary] + FLAGS + [
                '--user-data-dir=%s' % self.profile,
                '--window-size=%d,%d' % (width, height)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, pass_fds=(3, 4),
            preexec_fn=_pipes_on_3_and_4, start_new_session=True)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b''
        self._next_id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    # -- the protocol -------------------------------------------------------

    def _read_message(self, deadline):
        while b'\0' not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError('no answer from chromium in time')
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError('chromium exited (%s)'
                                       % self.process.poll())
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def send(self, method, params=None, session=None):
        """The result of one command; events seen meanwhile are kept."""
        self._next_id += 1
        command = {'id': self._next_id, 'method': method,
                   'params': params or {}}
        if session:
            command['sessionId'] = session
        os.write(self._to_browser, json.dumps(command).encode() + b'\0')
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            if message.get('id') == self._next_id:
                if 'error' in message:
                    raise BrowserError('%s: %s' % (method, message['error']))
                return message['result']
            self.events.append(message)

    def wait_for(self, method, session, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for event in self.events:
            if event.get('method') == method and (
                    event.get('sessionId') == session):
                return event
        while True:
            message = self._read_message(deadline)
            self.events.append(message)
            if message.get('method') == method and (
                    message.get('sessionId') == session):
                return message

    # -- what tests use -----------------------------------------------------

    def open(self, url):
        """A Page for ``url``, loaded, with console and errors recorded."""
        target = self.send('Target.createTarget',
                           {'url': 'about:blank'})['targetId']
        session = self.send('Target.attachToTarget',
                            {'targetId': target, 'flatten': True})[
                                'sessionId']
        for domain in ('Page', 'Runtime', 'Log', 'Network'):
            self.send(domain + '.enable', session=session)
        self.send('Page.navigate', {'url': url}, session=session)
        self.wait_for('Page.loadEventFired', session)
        return Page(self, session)

    def close(self):
        if self.process.poll() is None:
            try:
                self.send('Browser.close')
            except (BrowserError, OSError):
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session

    def evaluate(self, expression):
        result = self.browser.send(
            'Runtime.evaluate',
            {'expression': expression, 'returnByValue': True},
            session=self.session)
        if 'exceptionDetails' in result:
            raise BrowserError(result['exceptionDetails'])
        return result['result'].get('value')

    def problems(self):
        """Console errors and warnings, uncaught exceptions and browser
        log errors (refused loads, CSP violations) of this page."""
        found = []
        for event in self.browser.events:
            if event.get('sessionId') != self.session:
                continue
            method, params = event.get('method'), event.get('params', {})
            if method == 'Runtime.consoleAPICalled' and params.get(
                    'type') in ('error', 'warning', 'assert'):
                found.append(('console', params.get('args')))
            elif method == 'Runtime.exceptionThrown':
                found.append(('exception', params.get('exceptionDetails')))
            elif method == 'Log.entryAdded' and params['entry'].get(
                    'level') in ('error', 'warning'):
                found.append(('log', params['entry'].get('text')))
        return found

    def requested_urls(self):
        """Every URL the page asked for, itself included."""
        return [event['params']['request']['url']
                for event in self.browser.events
                if event.get('sessionId') == self.session
                and event.get('method') == 'Network.requestWillBeSent']

    def screenshot(self, path):
        """Write a PNG of the whole page to ``path``."""
        import base64
        data = self.browser.send(
            'Page.captureScreenshot',
            {'format': 'png', 'captureBeyondViewport': True},
            session=self.session)['data']
        with open(path, 'wb') as out:
            out.write(base64.b64decode(data))
