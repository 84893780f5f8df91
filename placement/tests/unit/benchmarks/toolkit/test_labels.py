"""Labels of the servers a benchmark is given with --url, or starts
with more gunicorn options."""

import argparse

import pytest

from benchmarks.toolkit import labels


def test_labelled_and_unlabelled_urls():
    assert labels.parse_url('ours=http://127.0.0.1:8300') == (
        'ours', 'http://127.0.0.1:8300')
    assert labels.parse_url('http://127.0.0.1:8300/placement') == (
        None, 'http://127.0.0.1:8300/placement')
    # An '=' further on is part of the URL, not a label.
    assert labels.parse_url('http://h:1/p?a=b') == (None, 'http://h:1/p?a=b')


@pytest.mark.parametrize('value', [
    'https://127.0.0.1:8300', '127.0.0.1:8300', 'ours=', 'ours=ftp://h',
    'ours=http://'])
def test_urls_that_are_not_http_are_refused(value):
    with pytest.raises(ValueError):
        labels.parse_url(value)


def test_unlabelled_urls_are_labelled_by_host_and_port_in_order():
    assert labels.label_urls([
        'http://127.0.0.1:8300', 'upstream=http://127.0.0.1:8301']) == [
        ('127.0.0.1:8300', 'http://127.0.0.1:8300'),
        ('upstream', 'http://127.0.0.1:8301')]


@pytest.mark.parametrize('values', [
    ['http://h:1', 'http://h:1/other'],
    ['a=http://h:1', 'a=http://h:2']])
def test_labels_must_differ(values):
    with pytest.raises(ValueError, match='labels must differ'):
        labels.label_urls(values)


def test_a_label_with_gunicorn_options():
    assert labels.gunicorn_options('rp=--reuse-port --backlog 64') == (
        'rp', ['--reuse-port', '--backlog', '64'])
    assert labels.gunicorn_options('plain=') == ('plain', [])
    for text in ('--reuse-port', '=--reuse-port'):
        with pytest.raises(argparse.ArgumentTypeError):
            labels.gunicorn_options(text)
