"""Every test runs with the provider index checked against the database.

The candidates engine reads a per-process ``ProviderIndex`` kept up to
date by the change log; a write that forgets to log what it changed
would leave it stale without any test noticing. So, in every test, each
refresh of an index is followed by a full load into a fresh index and
the two are compared: any gabbi file or object test that writes and then
asks for candidates proves that its writes were logged. The provider
rows listings keep (``ListedRows``) are checked the same way.

Every in-process application is also wrapped in ``ContractCheck``: each
response must match the OpenAPI document of its microversion, and the
schemas handlers validate with must be the ones their contracts declare.
"""

import pytest

from placement import deploy
from placement.tests import contract_check
from placement.web import validation

from placement.objects.candidates import provider_index
from placement.objects.candidates import search
from placement.objects import listed_rows


def _live(mapping):
    """``mapping`` without empty values (reverse maps drop them lazily)."""
    return {key: value for key, value in mapping.items() if value}


_COMPARED = ('uuid', 'by_uuid', 'parent', 'root', 'inventories', 'usage',
             'traits', 'aggregates', 'with_class', 'with_trait',
             'in_aggregate', 'members')


def differences(kept, fresh):
    """What ``kept`` says differently from ``fresh`` (loaded afresh)."""
    found = []
    for name in _COMPARED:
        mine, truth = getattr(kept, name), getattr(fresh, name)
        if name in ('inventories', 'usage', 'traits', 'aggregates'):
            mine, truth = dict(mine), dict(truth)
        else:
            mine, truth = _live(mine), _live(truth)
        if mine != truth:
            keys = {k for k in mine.keys() | truth.keys()
                    if mine.get(k) != truth.get(k)}
            found.append('%s differs for %s' % (name, sorted(keys)[:10]))
    if kept.nested != fresh.nested:
        found.append('nested differs')
    for rc in kept.with_class:
        if kept.class_names.get(rc) != fresh.class_names.get(rc):
            found.append('name of class %s differs' % rc)
    for trait in kept.with_trait:
        if kept.trait_names.get(trait) != fresh.trait_names.get(trait):
            found.append('name of trait %s differs' % trait)
    for provider in list(kept.summaries):
        if kept.summary(provider) != fresh.summary(provider):
            found.append('summary of %s differs' % provider)
    lines = search.Ancestry(fresh.parent)
    for provider, line in kept.lines.items():
        if provider in fresh.parent and line != lines.of(provider):
            found.append('ancestors of %s differ' % provider)
    return found


#: Off for tests that count what a request sends to the database.
_CHECKING = True


@pytest.fixture
def unchecked_followers():
    """The index and listed rows refreshed without the check's full
    loads, which would add their statements to those counted."""
    global _CHECKING
    _CHECKING = False
    yield
    _CHECKING = True


@pytest.fixture(autouse=True, scope='session')
def checked_provider_index():
    refresh = provider_index.ProviderIndex.refresh

    def checked(self, conn, *args, **kwargs):
        refresh(self, conn, *args, **kwargs)
        if not _CHECKING:
            return
        fresh = provider_index.ProviderIndex()
        refresh(fresh, conn)
        problems = differences(self, fresh)
        known = dict(self._aggregate_ids)
        if fresh.aggregate_ids(conn, known) != known:
            problems.append('aggregate ids differ')
        assert not problems, 'provider index out of date: %s' % problems

    provider_index.ProviderIndex.refresh = checked
    yield
    provider_index.ProviderIndex.refresh = refresh


@pytest.fixture(autouse=True, scope='session')
def checked_listed_rows():
    """The rows listings keep, checked like the index: after every
    refresh, equal to a full load, in the same (id) order."""
    refresh = listed_rows.ListedRows.refresh

    def checked(self, conn, *args, **kwargs):
        refresh(self, conn, *args, **kwargs)
        if not _CHECKING:
            return
        fresh = listed_rows.ListedRows()
        refresh(fresh, conn)
        # Stale rows (changed, not wanted yet) are read again when asked
        # for; every other must be current.
        stale = self.stale
        assert [item for item in self.rows.items()
                if item[0] not in stale] == [
            item for item in fresh.rows.items() if item[0] not in stale], (
            'listed rows out of date')

    listed_rows.ListedRows.refresh = checked
    yield
    listed_rows.ListedRows.refresh = refresh


@pytest.fixture(autouse=True, scope='session')
def responses_match_the_openapi_document():
    build_app = deploy.build_app

    def checked(*args, **kwargs):
        return contract_check.ContractCheck(build_app(*args, **kwargs))

    validate_query, json_body = validation.validate_query, validation.json_body
    deploy.build_app = checked
    validation.validate_query = contract_check.record_validation(
        'query', validate_query)
    validation.json_body = contract_check.record_validation('body', json_body)
    yield
    deploy.build_app = build_app
    validation.validate_query, validation.json_body = validate_query, json_body
