import json
from datetime import datetime, timedelta, timezone, UTC

import pytest

from poppy_tui.protocol.errors import InvalidMessage, InvalidOperation
from poppy_tui.protocol.operation import (
    operation_from_api_body,
    operation_from_mcp_result,
    operation_from_message,
    parse_operation,
)
from tests.protocol import spec_examples as ex


def test_spec_operation_parses_with_every_field():
    op = parse_operation(ex.OPERATION)
    assert op.operation_id == "exc_5Rt2"
    assert op.revision == "1791487200-k3Jd9Qx2mW8v"
    assert op.terms["price_difference"] == {"amount": "70.00", "currency": "USD"}
    assert op.expires_at == datetime(2026, 10, 8, 19, 20, tzinfo=UTC)
    assert op.expires_at.utcoffset() == timedelta(hours=-7)
    assert op.expires_at_text == "2026-10-08T12:20:00-07:00"


def test_each_carrier_of_the_spec_yields_the_same_operation():
    api = operation_from_api_body(403, json.loads(ex.API_403_BODY))
    mcp = operation_from_mcp_result(json.loads(ex.MCP_RESULT))
    msg = operation_from_message(json.loads(ex.CONVERSATION_EVENT)["message"])
    assert api == mcp == msg
    assert api.terms is None


def test_api_body_that_is_not_an_approval_refusal_is_not_an_operation():
    assert operation_from_api_body(200, {"error": "approval_required"}) is None
    assert operation_from_api_body(403, {"error": "invalid_session"}) is None
    assert operation_from_api_body(403, "text") is None


def test_approval_required_without_operation_names_the_field():
    with pytest.raises(InvalidOperation) as err:
        operation_from_api_body(403, {"error": "approval_required"})
    assert err.value.field == "operation"


def test_mcp_result_without_error_or_operation_carries_none():
    assert (
        operation_from_mcp_result(
            {"isError": False, "structuredContent": {"operation": ex.OPERATION}}
        )
        is None
    )
    assert operation_from_mcp_result({"isError": True, "content": []}) is None


def test_message_without_extension_content_carries_none():
    assert operation_from_message({"id": "m", "text": "hi"}) is None
    assert operation_from_message({"extensions": {"other": {}}}) is None
    with pytest.raises(InvalidMessage):
        operation_from_message({"extensions": {"operations": "yes"}})


@pytest.mark.parametrize("missing", ["operation_id", "revision", "summary", "expires_at"])
def test_missing_required_field_is_named(missing):
    obj = dict(ex.OPERATION)
    del obj[missing]
    with pytest.raises(InvalidOperation) as err:
        parse_operation(obj)
    assert err.value.field == f"operation.{missing}"
    assert "missing" in str(err.value)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("operation_id", "exc 5Rt2", "may hold only"),
        ("operation_id", "", "must not be empty"),
        ("operation_id", "x" * 257, "at most 256"),
        ("operation_id", 42, "must be a string"),
        ("revision", "r/1", "may hold only"),
        ("revision", "rév", "may hold only"),
        ("summary", "   ", "must not be empty"),
        ("summary", ["a"], "must be a string"),
        ("expires_at", "2026-10-08T12:20:00", "offset"),
        ("expires_at", "2026-10-08 12:20:00Z", "offset"),
        ("expires_at", "2026-02-30T12:20:00Z", "not a real date-time"),
        ("expires_at", 1791487200, "RFC 3339 string"),
        ("terms", [1, 2], "must be a JSON object"),
        ("terms", "x", "must be a JSON object"),
        ("terms", None, "got null"),
    ],
)
def test_bad_values_are_rejected_with_the_field(field, value, reason):
    obj = dict(ex.OPERATION, **{field: value})
    with pytest.raises(InvalidOperation) as err:
        parse_operation(obj)
    assert err.value.field == f"operation.{field}"
    assert reason in err.value.reason


def test_ids_at_the_length_limit_are_accepted():
    op = parse_operation(dict(ex.OPERATION, operation_id="a" * 256, revision="-_" * 128))
    assert len(op.operation_id) == 256


def test_sizes_are_bounded():
    with pytest.raises(InvalidOperation, match="bytes"):
        parse_operation(dict(ex.OPERATION, summary="x" * (2 * 1024 * 1024 + 1)))
    deep: dict = {}
    node = deep
    for _ in range(40):
        node["k"] = {}
        node = node["k"]
    with pytest.raises(InvalidOperation, match="deeper"):
        parse_operation(dict(ex.OPERATION, terms=deep))
    with pytest.raises(InvalidOperation, match="bytes"):
        parse_operation(dict(ex.OPERATION, terms={"k": "v" * (1024 * 1024 + 1)}))


def test_a_one_megabyte_summary_is_accepted():
    assert len(parse_operation(dict(ex.OPERATION, summary="y" * 1_000_000)).summary) == 1_000_000


def test_not_an_object():
    with pytest.raises(InvalidOperation, match="an array"):
        parse_operation([ex.OPERATION])


def test_rfc3339_variants():
    for text, expected in [
        ("2026-10-08t19:20:00z", datetime(2026, 10, 8, 19, 20, tzinfo=UTC)),
        (
            "2026-10-08T19:20:00.123456789Z",
            datetime(2026, 10, 8, 19, 20, 0, 123456, tzinfo=UTC),
        ),
        ("2026-12-31T23:59:60Z", datetime(2027, 1, 1, tzinfo=UTC)),
        ("2026-10-08T21:20:00+02:00", datetime(2026, 10, 8, 19, 20, tzinfo=UTC)),
    ]:
        assert parse_operation(dict(ex.OPERATION, expires_at=text)).expires_at == expected


def test_unknown_members_are_kept_raw_but_ignored():
    op = parse_operation(dict(ex.OPERATION, future_member={"x": 1}))
    assert op.raw["future_member"] == {"x": 1}
    assert op == parse_operation(ex.OPERATION)


def test_same_terms_compares_summary_terms_and_expiry():
    a = parse_operation(ex.OPERATION)
    b = parse_operation(dict(ex.OPERATION, revision="r2"))
    c = parse_operation(dict(ex.OPERATION, revision="r3", summary="other"))
    assert a.same_terms_as(b)
    assert not a.same_terms_as(c)


@pytest.mark.parametrize(
    ("extra", "field", "code_point"),
    [
        ({"summary": "Exchange the jacket\ud800"}, "operation.summary", "U+D800"),
        ({"terms": {"sku": ["ok", "b\udc00"]}}, "operation.terms.sku[1]", "U+DC00"),
        ({"terms": {"s\udfffku": 1}}, "operation.terms.'s\\udfffku'", "U+DFFF"),
        ({"note": "\udbff"}, "operation.note", "U+DBFF"),
    ],
    ids=["summary", "terms-value", "terms-key", "extra-member"],
)
def test_a_lone_surrogate_anywhere_in_an_operation_is_refused_by_name(extra, field, code_point):
    """JSON can spell "\\ud800", which is no character: it can't be shown, stored or compared."""
    with pytest.raises(InvalidOperation) as caught:
        parse_operation({**ex.OPERATION, **extra})
    assert caught.value.field == field and code_point in str(caught.value)


def test_a_surrogate_pair_is_an_ordinary_character():
    op = parse_operation(
        {**json.loads(json.dumps(ex.OPERATION)), "summary": json.loads('"Exchange \\ud83e\\udde5"')}
    )
    assert op.summary == "Exchange \U0001f9e5"


@pytest.mark.parametrize(
    ("text", "counted_as"),
    [
        ("9999-12-31T23:59:59Z", datetime(9999, 12, 30, tzinfo=UTC)),
        ("9999-12-31T23:59:59-05:00", datetime(9999, 12, 30, tzinfo=UTC)),  # past year 9999 in UTC
        ("9999-12-31T23:59:60Z", datetime(9999, 12, 30, tzinfo=UTC)),
        ("9999-12-29T10:00:00Z", datetime(9999, 12, 29, 10, tzinfo=UTC)),  # exact while it can be
        ("1969-07-20T20:17:00Z", datetime(1969, 7, 20, 20, 17, tzinfo=UTC)),
        ("0001-01-01T00:00:00+05:00", datetime(1, 1, 2, tzinfo=UTC)),  # before year 1 in UTC
        ("0000-01-01T00:00:00Z", datetime(1, 1, 2, tzinfo=UTC)),
        ("0000-02-29T12:00:00Z", datetime(1, 1, 2, tzinfo=UTC)),  # 0000 is a leap year
    ],
)
def test_every_rfc3339_year_is_an_expiry_and_the_text_is_kept(text, counted_as):
    """Audit A49: RFC 3339 allows years 0000 to 9999 with any offset. Each is accepted: counted
    exactly while shown in every time zone, else as the nearest moment that is, and kept as sent."""
    op = parse_operation(dict(ex.OPERATION, expires_at=text))
    assert op.expires_at == counted_as and op.expires_at_text == text
    op.expires_at.astimezone(timezone(timedelta(hours=14)))  # shown east of UTC: no overflow
    op.expires_at.astimezone(timezone(timedelta(hours=-12)))
    op.expires_at + timedelta(seconds=1)  # a second added (the dispatcher's hold): no overflow


@pytest.mark.parametrize("text", ["0000-02-30T00:00:00Z", "9999-13-01T00:00:00Z"])
def test_a_date_no_calendar_has_is_still_refused(text):
    with pytest.raises(InvalidOperation, match="not a real date-time"):
        parse_operation(dict(ex.OPERATION, expires_at=text))
