"""Every bug this suite found in other modules, reduced to one input, kept as a regression test.

All of them were fixed by their owners (protocol core 833ad78, store f262a7e). While a bug
is open it is listed in known_bugs.py (so the fuzzers tolerate exactly that failure) and its
test here carries `@known(key)`, a strict xfail; once fixed, the entry and marker go.
"""

from __future__ import annotations

import base64
import json

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.store import Store, StoreError
from poppy_tui.protocol.approval import parse_approval_header
from poppy_tui.protocol.conventions import SESSION_JWT_TYP
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.errors import (
    InvalidApproval,
    InvalidDiscovery,
    InvalidExtensions,
    InvalidOperation,
)
from poppy_tui.protocol.extensions import declares_operations, parse_extensions_header
from poppy_tui.protocol.operation import operation_from_api_body, parse_operation
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.protocol.retry import parse_retry_after
from poppy_tui.protocol.session_jwt import InvalidSession, verify_session_jwt
from tests.reliability.known_bugs import KNOWN_BUGS

BUGS = {bug.key: bug for bug in KNOWN_BUGS}


def known(key: str):
    """Mark a test whose bug is still open (listed in known_bugs.py) as a strict xfail."""
    bug = BUGS[key]
    return pytest.mark.xfail(strict=True, reason=f"known bug, {bug.where}: {bug.what}")


def _op(expires_at: str, operation_id: str = "exc_5Rt2") -> dict:
    return {
        "operation_id": operation_id,
        "revision": "r1",
        "summary": "Exchange",
        "expires_at": expires_at,
    }


def test_approval_header_with_a_non_latin1_character_is_invalid_approval():
    with pytest.raises(InvalidApproval):
        parse_approval_header('operation_id="exc_\u20ac", revision="r1"')


def test_extensions_header_with_a_non_latin1_character_is_invalid_or_not_declared():
    with pytest.raises(InvalidExtensions):
        parse_extensions_header('"operations";v="2", "\u0100"')


def test_declares_operations_never_raises():
    assert declares_operations('"operations";v="2", "\u0100"') is False


@pytest.mark.parametrize(
    "value", ["\xb2", "9" * 400, "9" * 5000], ids=["superscript-two", "400-digits", "5000-digits"]
)
def test_unreadable_retry_after_is_none_or_a_number(value):
    seconds = parse_retry_after(value)
    assert seconds is None or seconds >= 0


# Once a crash (the leap second overflowed datetime), then refused as invalid; since audit A49
# every RFC 3339 time is an expiry (§3), this one too: kept as sent, counted as the far future it
# is (the last moment datetime can count with), never a crash.
def test_leap_second_at_the_end_of_time_is_an_expiry_kept_as_sent():
    op = parse_operation(_op("9999-12-31T23:59:60Z"))
    assert op.expires_at_text == "9999-12-31T23:59:60Z"
    assert op.expires_at.year == 9999 and op.expires_at.tzinfo is not None


def test_api_refusal_with_that_operation_is_an_operation():
    answer = operation_from_api_body(
        403, {"error": "approval_required", "operation": _op("9999-12-31T23:59:60Z")}
    )
    assert answer.expires_at_text == "9999-12-31T23:59:60Z"


@pytest.mark.parametrize("url", ["http://[", "http://[zz]/"])
def test_bad_bracketed_host_is_invalid_discovery(url):
    doc = {
        "protocol_version": "0.4",
        "organization": {"name": "Shop", "domain": "shop.example"},
        "apis": [{"type": "openapi", "url": url}],
    }
    with pytest.raises(InvalidDiscovery):
        parse_poppy_json(doc, "shop.example")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _token(jwk: dict) -> str:
    header = {"typ": SESSION_JWT_TYP, "alg": "ES256", "jwk": jwk}
    return _b64(json.dumps(header).encode()) + "." + _b64(b'{"iss":"a"}') + "." + _b64(b"\0" * 64)


@pytest.mark.parametrize(
    "jwk",
    [
        {"kty": "EC", "crv": "P-256", "x": 1, "y": None},
        {"kty": "EC", "crv": "P-256", "x": _b64(b"\1" * 32), "y": _b64(b"\1" * 32)},
        {"kty": "EC", "crv": "P-256", "x": "A", "y": "A"},
    ],
    ids=["coordinates-not-strings", "point-off-curve", "bad-padding"],
)
def test_bad_jwk_in_session_header_is_invalid_session(jwk):
    # A Session JWT that embeds a key is refused before the key is read at all: keys come only from
    # the agent's published jwks_uri (spec 4.1; SESSION_JWT_FORBIDDEN_HEADER_MEMBERS,
    # docs/protocol-choices.md).
    with pytest.raises(InvalidSession):
        verify_session_jwt(_token(jwk), "aud", ec.generate_private_key(ec.SECP256R1()).public_key())


def test_string_iat_is_invalid_session():
    import time

    key = ec.generate_private_key(ec.SECP256R1())
    now = int(time.time())
    token = jwt.encode(
        {
            "iss": "a",
            "sub": "u",
            "aud": "aud",
            "sid": "s",
            "iat": "soon",
            "exp": now + 60,
            "jti": "j",
        },
        key,
        algorithm="ES256",
        headers={"typ": SESSION_JWT_TYP, "kid": "k"},
    )
    with pytest.raises(InvalidSession):
        verify_session_jwt(token, "aud", key.public_key())


@pytest.fixture
def store_with_request(tmp_path):
    from tests.reliability.test_fuzz_protocol import _demo_document

    store = Store.open(tmp_path / "poppy.db")
    company = store.upsert_company("http://127.0.0.1:9", _demo_document())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/api/x", {}), "cli"
    )
    yield store, company, request_id
    store.close()


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"])
def test_an_expiry_the_store_cannot_keep_is_refused_at_parse_or_kept(
    store_with_request, expires_at
):
    """Was: parse_operation accepted these, then Store.record_operation raised OverflowError."""
    store, company, request_id = store_with_request
    try:
        op = parse_operation(_op(expires_at))
    except InvalidOperation as exc:
        assert exc.field == "operation.expires_at"  # noqa: PT017 - either outcome is allowed
        return
    try:
        store.record_operation(company.id, request_id, company.session_id, op)
    except StoreError:
        pass  # a clear refusal would do too


def test_an_operation_from_before_year_1000_does_not_break_the_inbox(store_with_request):
    """Was: stored as '999-01-01T...', after which list_operations raised ValueError for good."""
    store, company, request_id = store_with_request
    store.record_operation(
        company.id,
        request_id,
        company.session_id,
        parse_operation(_op("2099-01-01T00:00:00Z", "ok")),
    )
    try:
        store.record_operation(
            company.id,
            request_id,
            company.session_id,
            parse_operation(_op("0999-01-01T00:00:00Z", "old")),
        )
    except (InvalidOperation, StoreError):
        pass
    assert len(store.list_operations()) in (1, 2)


def test_an_operation_with_a_lone_surrogate_is_refused_not_a_crash_in_the_store(store_with_request):
    """Was: parse_operation accepted summary '\\ud800' and Store.record_operation raised
    UnicodeEncodeError (no UTF-8 form) from inside its transaction."""
    store, company, request_id = store_with_request
    with pytest.raises(InvalidOperation):
        parse_operation({**_op("2099-01-01T00:00:00Z"), "summary": "\ud800"})
    assert store.list_operations() == []


def test_any_other_lone_surrogate_from_a_company_is_stored_as_a_replacement_character(
    store_with_request,
):
    store, company, request_id = store_with_request
    store.set_first_response(request_id, 200, {"body": {"note": "done \ud800"}})
    _, status, response = store.get_request(request_id)
    assert status == 200 and response == {"body": {"note": "done \ufffd"}}
