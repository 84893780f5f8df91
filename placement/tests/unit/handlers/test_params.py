"""The shared query parsers: grammar, versions and every error text."""

import pytest

from placement.handlers import params
from placement.microversion import Version
from placement.web import errors

AGG1 = 'abc00064-0000-4000-8000-000000000064'
AGG2 = 'abc00065-0000-4000-8000-000000000065'
V = Version.parse


def _message(exc_info):
    return exc_info.value.detail


# -- resources ---------------------------------------------------------------

_BADLY_FORMED = ('Badly formed resources parameter. Expected resources query '
                 'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
                 'Got: %s.')


@pytest.mark.parametrize('value, expected', [
    ('VCPU:2', {'VCPU': 2}),
    ('VCPU:2,MEMORY_MB:1024', {'VCPU': 2, 'MEMORY_MB': 1024}),
    ('VCPU:1,MEMORY_MB:1,VCPU:3', {'VCPU': 3, 'MEMORY_MB': 1}),
    # Amounts are read as Python integers (verified on upstream Placement).
    ('VCPU: 1 ', {'VCPU': 1}),
    ('VCPU:+2', {'VCPU': 2}),
    ('VCPU:1_000', {'VCPU': 1000}),
    # Class names are not trimmed nor checked: the lookup reports them.
    (' VCPU:1', {' VCPU': 1}),
    (':1', {'': 1}),
])
def test_resources_parse(value, expected):
    assert params.parse_resources(value) == expected


@pytest.mark.parametrize('value, message', [
    ('', _BADLY_FORMED % 'empty string'),
    ('  ', _BADLY_FORMED % 'empty string'),
    ('VCPU', _BADLY_FORMED % 'VCPU'),
    ('VCPU:1,', _BADLY_FORMED % ''),
    ('VCPU:1:2', _BADLY_FORMED % 'VCPU:1:2'),
    ('VCPU:x', 'Requested resource VCPU expected positive integer amount. '
               'Got: x.'),
    ('VCPU:', 'Requested resource VCPU expected positive integer amount. '
              'Got: .'),
    ('VCPU:1.5', 'Requested resource VCPU expected positive integer '
                 'amount. Got: 1.5.'),
    ('VCPU:0', 'Requested resource VCPU requires amount >= 1. Got: 0.'),
    ('VCPU:-1', 'Requested resource VCPU requires amount >= 1. Got: -1.'),
    ('VCPU:-0', 'Requested resource VCPU requires amount >= 1. Got: 0.'),
    ('VCPU:x,MEMORY_MB:0', 'Requested resource VCPU expected positive '
                           'integer amount. Got: x.'),
    ('VCPU:1,VCPU:0', 'Requested resource VCPU requires amount >= 1. '
                      'Got: 0.'),
])
def test_resources_errors(value, message):
    with pytest.raises(errors.BadRequest) as caught:
        params.parse_resources(value)
    assert _message(caught) == message


# -- required ----------------------------------------------------------------

def _required(values, version):
    return params.parse_required(values, V(version))


def test_required_plain_and_forbidden():
    parsed = _required(['A,!B, C ,!!D'], '1.22')
    assert parsed.terms == [frozenset(['A']), frozenset(['C'])]
    assert parsed.forbidden == frozenset(['B', 'D'])
    assert parsed.names == ('A', 'C', 'B', 'D')


def test_required_nothing_given():
    parsed = _required([], '1.39')
    assert parsed.terms == [] and parsed.forbidden == frozenset()
    assert not parsed


def test_required_last_value_before_1_39():
    parsed = _required(['HW_NUMA_ROOT', 'COMPUTE_VOLUME_MULTI_ATTACH'],
                       '1.38')
    assert parsed.terms == [frozenset(['COMPUTE_VOLUME_MULTI_ATTACH'])]
    # Only the last value is even looked at.
    assert _required(['', 'A'], '1.38').terms == [frozenset(['A'])]


def test_required_values_anded_from_1_39():
    parsed = _required(['in:A, B', 'C,!D', 'in:B,A'], '1.39')
    assert parsed.terms == [frozenset(['A', 'B']), frozenset(['C'])]
    assert parsed.forbidden == frozenset(['D'])
    assert parsed.names == ('A', 'B', 'C', 'D')


def test_required_names_put_required_first():
    parsed = _required(['!Z', 'in:Y,X'], '1.39')
    assert parsed.names == ('Y', 'X', 'Z')


def test_required_same_trait_required_and_forbidden_is_not_an_error():
    parsed = _required(['A,!A'], '1.39')
    assert parsed.terms == [frozenset(['A'])]
    assert parsed.forbidden == frozenset(['A'])


def test_required_in_prefix_only_at_the_very_start():
    # " in:A" is the trait "in:A" once trimmed; "!in:A" forbids "in:A".
    assert _required([' in:A'], '1.39').terms == [frozenset(['in:A'])]
    assert _required(['!in:A'], '1.39').forbidden == frozenset(['in:A'])


_EMPTY_OLD = ("Invalid query string parameters: Expected 'required' parameter "
              "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty "
              "trait in: %s")
_EMPTY = ("Invalid query string parameters: Expected 'required' parameter "
          "value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty "
          "trait in: %s")
_EMPTY_IN = ("Invalid query string parameters: Expected 'required' parameter "
             "value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty "
             "trait in: %s")
_BANG_OLD = ("Invalid query string parameters: Expected 'required' parameter "
             "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s")
_IN_TOO_EARLY = ("Invalid query string parameters: The format "
                 "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                 "microversion 1.39. Got: %s")
_IN_FORBIDDEN = ("Invalid query string parameters: The format "
                 "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
                 "forbidden traits. Got: %s")


@pytest.mark.parametrize('values, version, message', [
    ([''], '1.18', _EMPTY_OLD % ''),
    (['!'], '1.18', _EMPTY_OLD % '!'),
    (['A,,B'], '1.21', _EMPTY_OLD % 'A,,B'),
    # Emptiness is checked over all items before the "!" gate.
    (['!A,,B'], '1.18', _EMPTY_OLD % '!A,,B'),
    (['A,!B'], '1.21', _BANG_OLD % 'A,!B'),
    ([''], '1.22', _EMPTY % ''),
    (['!'], '1.22', _EMPTY % '!'),
    (['!!'], '1.39', _EMPTY % '!!'),
    (['A, '], '1.39', _EMPTY % 'A, '),
    (['in:A'], '1.18', _IN_TOO_EARLY % 'in:A'),
    (['in:'], '1.38', _IN_TOO_EARLY % 'in:'),
    (['in:!A'], '1.22', _IN_TOO_EARLY % 'in:!A'),
    (['in:'], '1.39', _EMPTY_IN % 'in:'),
    (['in:A,'], '1.39', _EMPTY_IN % 'in:A,'),
    (['in:!A,'], '1.39', _EMPTY_IN % 'in:!A,'),
    (['in:,!A'], '1.39', _EMPTY_IN % 'in:,!A'),
    (['in:!A'], '1.39', _IN_FORBIDDEN % 'in:!A'),
    (['in:!'], '1.39', _IN_FORBIDDEN % 'in:!'),
    # From 1.39 every value is parsed, in order.
    (['in:A', ''], '1.39', _EMPTY % ''),
    (['', 'in:A'], '1.39', _EMPTY % ''),
    # Before 1.39 the earlier values are ignored entirely.
    (['', 'in:A'], '1.22', _IN_TOO_EARLY % 'in:A'),
    (['in:A', ''], '1.22', _EMPTY % ''),
])
def test_required_errors(values, version, message):
    with pytest.raises(errors.BadRequest) as caught:
        _required(values, version)
    assert _message(caught) == message


def test_required_messages_never_name_a_suffixed_key():
    with pytest.raises(errors.BadRequest) as caught:
        params.parse_required([''], V('1.25'), key='required1')
    assert _message(caught) == _EMPTY % ''


# -- member_of ---------------------------------------------------------------

def _member_of(values, version, key='member_of'):
    return params.parse_member_of(values, V(version), key=key)


def test_member_of_forms():
    parsed = _member_of([AGG1, 'in:%s,%s' % (AGG1, AGG2), '!' + AGG2,
                         '!in:%s' % AGG1], '1.32')
    assert parsed.terms == [frozenset([AGG1]), frozenset([AGG1, AGG2])]
    assert parsed.forbidden == frozenset([AGG1, AGG2])


def test_member_of_keeps_spelling():
    upper, dashless = AGG1.upper(), AGG1.replace('-', '')
    parsed = _member_of(['in:%s,%s' % (upper, dashless)], '1.3')
    assert parsed.terms == [frozenset([upper, dashless])]


def test_member_of_nothing_given():
    parsed = _member_of([], '1.39')
    assert not parsed and parsed.terms == [] and parsed.forbidden == set()


def test_member_of_repeated_from_1_24():
    parsed = _member_of([AGG1, AGG2], '1.24')
    assert parsed.terms == [frozenset([AGG1]), frozenset([AGG2])]


_MULTI = ("Multiple values for 'member_of' must be prefixed with the 'in:' or "
          "'!in:' keyword using the valid microversion. Got: %s")
_NOT_UUID = ("Invalid query string parameters: Expected 'member_of' "
             "parameter to contain valid UUID(s). Got: %s")
_FORBIDDEN = ('Forbidden %s parameters are not supported in the specified '
              'microversion')


@pytest.mark.parametrize('values, version, message', [
    ([AGG1, AGG1], '1.23', 'Multiple member_of parameters are not '
                           'supported'),
    ([AGG1, 'x'], '1.3', 'Multiple member_of parameters are not supported'),
    (['%s,%s' % (AGG1, AGG2)], '1.39', _MULTI % ('%s,%s' % (AGG1, AGG2))),
    (['!%s,%s' % (AGG1, AGG2)], '1.39', _MULTI % ('!%s,%s' % (AGG1, AGG2))),
    (['!x,y'], '1.3', _MULTI % '!x,y'),
    ([''], '1.3', _NOT_UUID % ''),
    (['in:'], '1.3', _NOT_UUID % ''),
    (['in:%s,!%s' % (AGG1, AGG2)], '1.39', _NOT_UUID % ('!' + AGG2)),
    (['!!' + AGG1], '1.39', _NOT_UUID % ('!' + AGG1)),
    ([' ' + AGG1], '1.39', _NOT_UUID % (' ' + AGG1)),
    (['IN:' + AGG1], '1.39', _NOT_UUID % ('IN:' + AGG1)),
    (['in:x,' + AGG1], '1.3', _NOT_UUID % 'x'),
    (['!' + AGG1], '1.31', _FORBIDDEN % 'member_of'),
    (['!in:' + AGG1], '1.3', _FORBIDDEN % 'member_of'),
    # uuid-likeness is checked before the "!" gate...
    (['!x'], '1.24', _NOT_UUID % 'x'),
    # ...value by value.
    (['!' + AGG1, 'x'], '1.24', _FORBIDDEN % 'member_of'),
    (['x', '!' + AGG1], '1.24', _NOT_UUID % 'x'),
])
def test_member_of_errors(values, version, message):
    with pytest.raises(errors.BadRequest) as caught:
        _member_of(values, version)
    assert _message(caught) == message


def test_member_of_forbidden_message_names_the_key():
    with pytest.raises(errors.BadRequest) as caught:
        _member_of(['!' + AGG1], '1.25', key='member_of1')
    assert _message(caught) == _FORBIDDEN % 'member_of1'
    # The other messages always say member_of.
    with pytest.raises(errors.BadRequest) as caught:
        _member_of(['x'], '1.25', key='member_of1')
    assert _message(caught) == _NOT_UUID % 'x'


@pytest.mark.parametrize('spelling', [
    AGG1.upper(), AGG1.replace('-', ''), '{%s}' % AGG1])
def test_member_of_accepts_uuid_like_spellings(spelling):
    assert _member_of([spelling], '1.3').terms == [frozenset([spelling])]
