"""Reading OpenStack-API-Version: what the library parses, what we add."""

import pytest

from placement import microversion
from placement.microversion import Version


@pytest.mark.parametrize('header, expected', [
    (None, Version(1, 0)),
    ('', Version(1, 0)),
    ('placement', Version(1, 0)),
    ('compute 2.1', Version(1, 0)),
    ('placement latest', microversion.MAX_VERSION),
    ('placement 1. 5', Version(1, 5)),
    ('placement\t1.5', Version(1, 5)),
    (' placement 1.5 ', Version(1, 5)),
    ('placement 1.010', Version(1, 10)),
    ('PLACEMENT 1.21', Version(1, 21)),
    ('compute 2.1, placement 1.14, placement 1.20', Version(1, 20)),
])
def test_accepted(header, expected):
    assert microversion.from_header(header) == expected


@pytest.mark.parametrize('header, message', [
    ('placement pony.horse', "invalid version string: pony.horse; invalid "
                             "literal for int() with base 10: 'pony'"),
    ('placement 1', "invalid version string: 1; "),
    ('placement LATEST', 'invalid version string: LATEST; '),
    ('placement 1.2.3', 'invalid version string: 1.2.3; '),
    ('placement 1.5 beta', 'invalid version string: 1.5 beta; '),
])
def test_malformed(header, message):
    with pytest.raises(microversion.InvalidVersion) as info:
        microversion.from_header(header)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize('value', ['0.5', '1.40', '2.0', '1.-1', '-1.5'])
def test_out_of_range(value):
    with pytest.raises(microversion.UnacceptableVersion) as info:
        microversion.from_header('placement ' + value)
    assert str(info.value) == 'Unacceptable version header: ' + value


def test_parsed_headers_are_kept_but_failures_are_raised_every_time():
    microversion.from_header.cache_clear()
    first = microversion.from_header('placement 1.20')
    assert microversion.from_header('placement 1.20') is first
    assert microversion.from_header.cache_info().hits == 1
    for _ in range(2):
        with pytest.raises(microversion.UnacceptableVersion):
            microversion.from_header('placement 9.99')
        with pytest.raises(microversion.InvalidVersion):
            microversion.from_header('placement 1.x')
    # Client-chosen texts: the memory is bounded.
    for minor in range(1000):
        microversion.from_header('placement 1.%d' % (minor % 40))
        microversion.from_header('compute 2.%d, placement 1.0' % minor)
    assert microversion.from_header.cache_info().currsize <= 256
