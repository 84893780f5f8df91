"""Schemathesis against a live server, over the server's own OpenAPI
document.

``run`` drives the ``schemathesis`` command line (its stable interface)
against ``GET /openapi.json`` of a running server, with the checks the
contract promises, and reads its NDJSON report back into a ``Summary``:
how many requests each operation received, which statuses came back and
every failed check. Both the bounded test (``test_fuzz.py``) and the long
run (``tools/fuzz.py``) use it.
"""

import collections
import glob
import json
import os
import subprocess
import sys

#: What every response must satisfy: no 5xx, a status, media type,
#: headers and body the document lists for the operation.
CHECKS = ('not_a_server_error', 'status_code_conformance',
          'content_type_conformance', 'response_headers_conformance',
          'response_schema_conformance')
#: Examples (none in the document), boundary coverage, random fuzzing and
#: the stateful mode following the document's links.
PHASES = ('coverage', 'fuzzing', 'stateful')
#: noauth2 admin with the service role, so that no operation (the
#: reshaper is for services) is only ever refused by policy.
AUTH_HEADERS = {'X-Auth-Token': 'admin', 'X-Roles': 'admin,service'}


class Summary:
    """What one run did, read from its NDJSON events."""

    def __init__(self):
        self.requests = 0
        self.by_operation = collections.defaultdict(collections.Counter)
        self.statuses = collections.Counter()
        self.failures = []
        self.errors = []
        self.running_time = None
        self.operations_selected = None

    @property
    def server_errors(self):
        return sum(n for status, n in self.statuses.items()
                   if status is not None and status >= 500)

    def read(self, path):
        with open(path, encoding='utf-8') as events:
            for line in events:
                self._event(json.loads(line))
        return self

    def _event(self, event):
        kind, payload = next(iter(event.items()))
        if kind == 'LoadingFinished':
            self.operations_selected = (
                payload['statistic']['operations']['selected'])
        elif kind == 'ScenarioFinished':
            self._scenario(payload)
        elif kind == 'NonFatalError':
            self.errors.append('%s: %s' % (payload.get('label'),
                                           payload.get('info')))
        elif kind == 'EngineFinished':
            self.running_time = payload['running_time']

    def _scenario(self, payload):
        recorder = payload['recorder']
        label = recorder['label']
        for interaction in recorder.get('interactions', {}).values():
            response = interaction.get('response')
            status = response['status_code'] if response else None
            self.requests += 1
            self.statuses[status] += 1
            self.by_operation[label][status] += 1
        for case_id, checks in recorder.get('checks', {}).items():
            for check in checks:
                if check['status'] != 'success':
                    self.failures.append({
                        'operation': label, 'check': check['name'],
                        'case': _case(recorder, case_id),
                        'info': check.get('failure_info')})
        if payload['status'] == 'error':
            self.errors.append('%s: scenario error' % label)

    def report(self):
        """A short human-readable account."""
        lines = ['%d requests over %d operations in %.1fs; statuses %s'
                 % (self.requests, len(self.by_operation),
                    self.running_time or 0,
                    dict(sorted(self.statuses.items(),
                                key=lambda kv: kv[0] or 0)))]
        for label in sorted(self.by_operation):
            counts = self.by_operation[label]
            lines.append('  %-62s %5d  %s' % (
                label, sum(counts.values()), dict(sorted(
                    counts.items(), key=lambda kv: kv[0] or 0))))
        for failure in self.failures:
            lines.append('FAILED %(check)s on %(operation)s: %(case)s '
                         '%(info)s' % failure)
        lines.extend('ERROR %s' % error for error in self.errors)
        return '\n'.join(lines)


def _case(recorder, case_id):
    case = recorder.get('cases', {}).get(case_id, {}).get('value', {})
    return {key: case.get(key) for key in
            ('method', 'path', 'path_parameters', 'query', 'body')
            if case.get(key) is not None}


def command(base_url, report_dir, version, max_examples, seed,
            phases=PHASES, workers=1, max_time=None, request_timeout=20):
    """The schemathesis command line for one run."""
    cli = os.path.join(os.path.dirname(sys.executable), 'schemathesis')
    args = [cli, 'run', base_url + '/openapi.json',
            '--checks', ','.join(CHECKS),
            '--phases', ','.join(phases),
            '--max-examples', str(max_examples),
            '--seed', str(seed), '--generation-deterministic',
            '--workers', str(workers),
            # A hang is a failure, not a stuck run.
            '--request-timeout', str(request_timeout),
            '--no-color', '--report', 'ndjson',
            '--report-dir', str(report_dir),
            '--header', 'OpenStack-API-Version: placement %s' % version]
    for name, value in AUTH_HEADERS.items():
        args += ['--header', '%s: %s' % (name, value)]
    if max_time:
        args += ['--max-time', str(max_time)]
    return args


def run(base_url, report_dir, version, max_examples, seed, timeout=None,
        **options):
    """Run schemathesis; (Summary, exit code, console output)."""
    os.makedirs(report_dir, exist_ok=True)
    finished = subprocess.run(
        command(base_url, report_dir, version, max_examples, seed,
                **options),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
        # Its crash cache goes there, not into the checkout.
        cwd=str(report_dir),
        env=dict(os.environ, SCHEMATHESIS_TELEMETRY='false'))
    output = finished.stdout.decode('utf-8', 'replace')
    reports = sorted(glob.glob(os.path.join(str(report_dir), '*.ndjson')))
    if not reports:
        raise RuntimeError('schemathesis wrote no report:\n%s' % output)
    return Summary().read(reports[-1]), finished.returncode, output
