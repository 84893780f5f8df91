"""Fixtures shared by the object-layer tests."""

import pytest

from placement import context
from placement.tests import fixtures


@pytest.fixture
def ctx():
    """An admin context on a fresh, empty database."""
    db, cleanup = fixtures.new_database()
    yield context.AdminContext(db)
    cleanup()
