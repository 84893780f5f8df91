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
import re
import subprocess
import sys
import time
import uuid

#: What every response must satisfy: no 5xx, a status, media type,
#: headers and body the document lists for the operation.
CHECKS = ('not_a_server_error', 'status_code_conformance',
          'content_type_conformance', 'response_headers_conformance',
          'response_schema_conformance')
#: Every phase: the document's examples, boundary coverage, random
#: fuzzing and the stateful mode following the document's links.
PHASES = ('examples', 'coverage', 'fuzzing', 'stateful')
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
    """The schemathesis command line for one run over the document of
    ``version``. No version header is given: the document requires the
    one it describes (schemathesis sends it), and its coverage phase
    also sends requests without it, which the document says are served
    at 1.0."""
    cli = os.path.join(os.path.dirname(sys.executable), 'schemathesis')
    args = [cli, 'run',
            '%s/openapi.json?microversion=%s' % (base_url, version),
            '--checks', ','.join(CHECKS),
            '--phases', ','.join(phases),
            '--max-examples', str(max_examples),
            '--seed', str(seed), '--generation-deterministic',
            '--workers', str(workers),
            # A hang is a failure, not a stuck run.
            '--request-timeout', str(request_timeout),
            '--no-color', '--report', 'ndjson',
            '--report-dir', str(report_dir)]
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


# -- hostile bodies -----------------------------------------------------------

#: Values schemathesis never writes (JSON text, or bytes where the body
#: is not even UTF-8), by kind; each goes at every leaf of every body.
HOSTILE = {
    'NaN': b'NaN', 'Infinity': b'Infinity', '-Infinity': b'-Infinity',
    'overflowing float': b'1e400', 'float beyond FLOAT_MAX': b'3.5e38',
    'integer beyond 64 bits': b'1' + b'0' * 30,
    'integer beyond INTEGER_MAX': b'2147483648',
    'integer below -INTEGER_MAX': b'-2147483649',
    'NUL in a string': b'"a\\u0000b"',
    'lone surrogate escape': b'"\\udc80"',
    'raw lone surrogate': b'"\xed\xa0\x80"',
    'not UTF-8': b'"\xff\xfe"',
    'integer of 5000 digits': b'9' * 5000,
    'deep nesting': b'[' * 100000 + b']' * 100000,
    'deep objects': b'{"a":' * 50000 + b'1' + b'}' * 50000,
    'long string': b'"' + b'x' * 1000000 + b'"',
    'long key': b'{"' + b'k' * 100000 + b'": 1}',
}
#: Values for the path parameters (a provider the run creates).
PATH_VALUES = {'uuid': None, 'consumer_uuid': '8ec9a4c4-2a6e-4d3b-9d6b-'
               '0f2a1ee0c0de', 'resource_class': 'VCPU',
               'name': 'CUSTOM_FUZZ'}
_PLACEHOLDER = b'"\x00PLACE\x00"'


def _skeletons(schema, document, depth=0):
    """JSON-able bodies with ``_PLACEHOLDER`` at one leaf each, following
    properties, pattern properties (keyed by a value the pattern takes)
    and items of ``schema``, down to a few levels."""
    schema = _deref(schema, document)
    found = ['\x00PLACE\x00']
    if depth > 6:
        return found
    members = dict(schema.get('properties', {}))
    for pattern, sub in schema.get('patternProperties', {}).items():
        members[_key_for(pattern)] = sub
    for name, sub in members.items():
        found.extend({name: inner}
                     for inner in _skeletons(sub, document, depth + 1))
    if isinstance(schema.get('items'), dict):
        found.extend([inner] for inner in _skeletons(
            schema['items'], document, depth + 1))
    for alternative in schema.get('anyOf', []) + schema.get('oneOf', []):
        found.extend(_skeletons(alternative, document, depth)[1:])
    return found


def _deref(schema, document):
    while isinstance(schema, dict) and '$ref' in schema:
        node = document
        for part in schema['$ref'].lstrip('#/').split('/'):
            node = node[part]
        schema = node
    return schema if isinstance(schema, dict) else {}


def _key_for(pattern):
    if 'a-fA-F' in pattern or '0-9a-f' in pattern:
        return PATH_VALUES['consumer_uuid']
    return 'VCPU'


def hostile_cases(document, provider):
    """(method, path, body bytes, kind) for every operation of
    ``document`` that reads a body: each value of HOSTILE as the body
    and at each leaf of its body schema."""
    values = dict(PATH_VALUES, uuid=provider)
    for path, operations in sorted(document['paths'].items()):
        concrete = re.sub(r'{([^}]+)}', lambda m: values[m.group(1)], path)
        for method, operation in sorted(operations.items()):
            body = operation.get('requestBody')
            if body is None:
                continue
            schema = body['content']['application/json']['schema']
            seen = set()
            for skeleton in _skeletons(schema, document):
                text = json.dumps(skeleton).encode()
                if text in seen:
                    continue
                seen.add(text)
                for kind, value in HOSTILE.items():
                    yield (method.upper(), concrete,
                           text.replace(_PLACEHOLDER, value), kind)


def run_hostile(base_url, version, checker=None, timeout=60):
    """Send every hostile case to a live server at ``version`` (with a
    provider created for the paths). Returns a Summary: no status may be
    a 5xx, and ``checker(path, method, status, headers, body)`` (the
    contract check) lists what else is wrong."""
    import http.client
    import urllib.parse
    summary = Summary()
    started = time.monotonic()
    address = urllib.parse.urlsplit(base_url)
    headers = dict(AUTH_HEADERS, **{
        'Content-Type': 'application/json', 'Accept': 'application/json',
        'OpenStack-API-Version': 'placement %s' % version})

    def send(method, path, body):
        connection = http.client.HTTPConnection(address.hostname,
                                                address.port,
                                                timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return (response.status, dict(response.getheaders()),
                    response.read())
        finally:
            connection.close()

    provider = str(uuid.uuid4())
    status, _h, _b = send('POST', '/resource_providers', json.dumps(
        {'name': 'hostile-' + provider, 'uuid': provider}).encode())
    document = json.loads(send('GET', '/openapi.json?microversion=%s'
                               % version, None)[2])
    kinds = collections.Counter()
    for method, path, body, kind in hostile_cases(document, provider):
        status, response_headers, answer = send(method, path, body)
        label = '%s %s' % (method, re.sub(provider, '{uuid}', path))
        summary.requests += 1
        summary.statuses[status] += 1
        summary.by_operation[label][status] += 1
        kinds[kind] += 1
        problems = [] if checker is None else checker(
            path, method, status,
            {k.lower(): v for k, v in response_headers.items()}, answer)
        if status >= 500 or problems:
            summary.failures.append({
                'operation': label, 'check': 'hostile body',
                'case': {'kind': kind, 'body': body[:200]},
                'info': problems or answer[:300]})
    summary.kinds = kinds
    summary.running_time = time.monotonic() - started
    return summary
