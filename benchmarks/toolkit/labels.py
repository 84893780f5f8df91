"""How reports name the servers they measure.

A benchmark that starts the servers itself names them ``OURS`` and
``UPSTREAM``; one given URLs (``--url [LABEL=]URL``) names each by its
label, or by its host:port.
"""

import argparse
import re
import shlex
import urllib.parse

OURS = 'ours'
UPSTREAM = 'upstream'


def parse_url(value):
    """``[LABEL=]URL`` -> (LABEL or None, URL); ValueError if not http."""
    match = re.match(r'([A-Za-z0-9_.-]+)=(.*)$', value)
    label, url = match.groups() if match else (None, value)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != 'http' or not parts.hostname:
        raise ValueError('--url %r: expected [LABEL=]http://HOST:PORT' % value)
    return label, url


def label_urls(values):
    """[(label, url)] for the --url values, in order. An unlabelled URL
    is labelled with its host:port; labels must differ."""
    pairs = []
    for value in values:
        label, url = parse_url(value)
        pairs.append((label or urllib.parse.urlsplit(url).netloc, url))
    labels = [label for label, _ in pairs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError('--url labels must differ (name them, e.g. '
                         '--url ours=URL): %s' % ', '.join(twice))
    return pairs


def gunicorn_options(text):
    """``LABEL=GUNICORN OPTIONS`` (an argparse type) -> (LABEL, [option,
    ...]): a server started with more gunicorn options, by its name."""
    label, sep, options = text.partition('=')
    if not sep or not label:
        raise argparse.ArgumentTypeError(
            'expected LABEL=GUNICORN OPTIONS, got %r' % text)
    return label, shlex.split(options)
