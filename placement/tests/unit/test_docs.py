"""The reStructuredText documents outside the Sphinx site parse without
warnings, and the release notes are well-formed reno notes with unique
ids. The site itself (doc/source, api-ref) is built with warnings as
errors by ``make docs`` in CI; test_api_ref.py checks its generated
tables are current."""

import glob
import os

from docutils import core
from docutils import utils
import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
DOCUMENTS = [os.path.join(ROOT, 'README.rst'),
             os.path.join(ROOT, 'HACKING.rst')]
API_REF = sorted(glob.glob(os.path.join(ROOT, 'api-ref', '*.rst')))
NOTES = sorted(glob.glob(os.path.join(ROOT, 'releasenotes', 'notes',
                                      '*.yaml')))
NOTE_SECTIONS = {'prelude', 'features', 'issues', 'upgrade', 'deprecations',
                 'critical', 'security', 'fixes', 'other'}


@pytest.mark.parametrize('path', DOCUMENTS, ids=os.path.basename)
def test_document_parses_cleanly(path):
    with open(path, encoding='utf-8') as f:
        source = f.read()
    try:
        core.publish_doctree(source, source_path=path, settings_overrides={
            'halt_level': 2, 'report_level': 2, 'warning_stream': False})
    except utils.SystemMessage as exc:
        pytest.fail('%s: %s' % (path, exc))


def test_api_ref_covers_every_endpoint():
    from placement.tests.functional import policy_walk
    text = ''.join(open(p, encoding='utf-8').read() for p in API_REF)
    for method, path in policy_walk.SAMPLES:
        assert path in text, '%s %s is not documented' % (method, path)


def test_release_note_ids_are_unique():
    # reno identifies a note by the 16 hex digits ending its name.
    ids = [os.path.basename(p)[:-len('.yaml')].rsplit('-', 1)[-1]
           for p in NOTES]
    assert sorted(i for i in set(ids) if ids.count(i) > 1) == []


@pytest.mark.parametrize('path', NOTES, ids=os.path.basename)
def test_release_note_is_valid(path):
    with open(path, encoding='utf-8') as f:
        note = yaml.safe_load(f)
    assert isinstance(note, dict) and note
    assert set(note) <= NOTE_SECTIONS
    for section, entries in note.items():
        items = [entries] if section == 'prelude' else entries
        assert items and all(isinstance(i, str) and i.strip()
                             for i in items)
        for item in items:
            core.publish_doctree(item, settings_overrides={
                'halt_level': 2, 'report_level': 2, 'warning_stream': False})
