import pytest

from poppy_tui.protocol.errors import InvalidExtensions
from poppy_tui.protocol.extensions import (
    OPERATIONS_HEADER_VALUE,
    declares_operations,
    document_supports_operations,
    encode_extensions_header,
    parse_extensions_header,
)
from tests.protocol import spec_examples as ex


def test_header_matches_the_spec():
    assert OPERATIONS_HEADER_VALUE == ex.EXTENSIONS_HEADER
    assert declares_operations(ex.EXTENSIONS_HEADER)


def test_several_extensions_and_unreadable_members():
    value = encode_extensions_header({"operations": "2", "example.com/gift-wrap": "1"})
    assert value == '"operations";v="2", "example.com/gift-wrap";v="1"'
    assert parse_extensions_header('"operations";v="2", "other";v=1, tokenish') == {
        "operations": "2"
    }


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, False),
        ("", False),
        ('"operations";v="1"', False),
        ('"operations";v="3"', False),
        ('"operations";v=2', False),
        ('operations;v="2"', True),
        ('"operations";v="2.1"', True),
        ("garbage ((", False),
    ],
)
def test_declares_operations(header, expected):
    assert declares_operations(header) is expected


def test_malformed_header_raises_when_parsed_directly():
    with pytest.raises(InvalidExtensions):
        parse_extensions_header("((")


@pytest.mark.parametrize(
    ("extensions", "expected"),
    [
        (ex.POPPY_JSON_EXTENSIONS, True),
        ({"operations": [{"version": "1"}, {"version": "2"}]}, True),
        ({"operations": [{"version": "3"}]}, False),
        ({"operations": {"version": "2"}}, False),  # the 0.2 shape is not 0.4 support
        ({"operations": [{"version": 2}]}, False),
        ({}, False),
        (None, False),
    ],
)
def test_document_support_needs_major_version_two(extensions, expected):
    assert document_supports_operations(extensions) is expected
