"""placement.requestlog: request ids as uuid.uuid4() would write them."""

import os
import uuid

import pytest

from placement import requestlog


@pytest.mark.parametrize('random_bytes', [
    b'\x00' * 16, b'\xff' * 16, bytes(range(16)),
    *(os.urandom(16) for _ in range(50))])
def test_request_ids_are_version_4_uuids(random_bytes):
    found = requestlog.new_request_id(lambda n: random_bytes[:n])
    expected = uuid.UUID(bytes=random_bytes, version=4)
    assert found == 'req-%s' % expected
    assert requestlog._GLOBAL_ID.match(found)


def test_request_ids_differ():
    assert len({requestlog.new_request_id() for _ in range(100)}) == 100
