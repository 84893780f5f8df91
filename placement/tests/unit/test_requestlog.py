"""placement.requestlog: request ids as uuid.uuid4() would write them."""

import random
import uuid

from placement import requestlog


def test_request_ids_are_version_4_uuids():
    draw = random.Random(16)
    samples = [b'\x00' * 16, b'\xff' * 16, bytes(range(16))] + [
        draw.randbytes(16) for _ in range(200)]
    for random_bytes in samples:
        found = requestlog.new_request_id(lambda n: random_bytes[:n])
        expected = uuid.UUID(bytes=random_bytes, version=4)
        assert found == 'req-%s' % expected, random_bytes
        assert requestlog._GLOBAL_ID.match(found)


def test_request_ids_differ():
    assert len({requestlog.new_request_id() for _ in range(100)}) == 100
