import json
import random
from datetime import datetime, UTC

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    Performed,
    RetryLater,
    Unknown,
    classify_http,
)
from poppy_tui.protocol.retry import BackoffPolicy, parse_retry_after
from poppy_tui.protocol.client_metadata import key_id
from poppy_tui.protocol.session_jwt import (
    InvalidSession,
    SessionIdentity,
    session_key_id,
    sign_session_jwt,
    verify_session_jwt,
)
from tests.protocol import spec_examples as ex


def test_classify_http_branches():
    assert isinstance(classify_http(403, {}, json.loads(ex.API_403_BODY), None), ApprovalRequired)
    assert isinstance(classify_http(200, {}, {"ok": True}, None), Performed)
    assert isinstance(classify_http(201, {}, None, None), Performed)
    busy = classify_http(503, {}, None, 7.0)
    assert isinstance(busy, RetryLater) and busy.retry_after == 7.0
    assert isinstance(classify_http(429, {}, None, None), RetryLater)
    assert isinstance(classify_http(504, {}, None, None), Unknown)
    refused = classify_http(403, {}, {"error": "invalid_session"}, None)
    assert isinstance(refused, NotPerformed) and refused.error == "invalid_session"
    assert classify_http(404, {}, None, None).error == "http_404"
    bad = classify_http(
        403, {}, {"error": "approval_required", "operation": {"operation_id": "x"}}, None
    )
    assert isinstance(bad, BadResponse) and bad.error.field == "operation.revision"


def test_retry_after_seconds_dates_and_garbage():
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now) == 30.0
    assert parse_retry_after("Wednesday, 21-Oct-15 07:28:10 GMT", now) == 10.0
    assert parse_retry_after("Wed Oct 21 07:28:05 2015", now) == 5.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now) == 0.0
    for garbage in ("-5", "1.5", "soon", "", None):
        assert parse_retry_after(garbage, now) is None


@pytest.mark.parametrize(
    "hostile",
    [
        "0",
        "9" * 40,
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "1e999",
        "NaN",
        "-0",
        " 5",
        "\x00",
        "x" * 10_000,
    ],
)
def test_a_hostile_retry_after_is_bounded_both_ways(hostile):
    """Whatever a Company writes in Retry-After, the wait before resending is never shorter than
    the backoff (no busy loop on "0" or a date in the past) and never longer than the policy's
    cap (no give-up by a wait past the expiry on "9999" or forty nines), and reading it never
    raises (Ops 7)."""
    now = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)
    policy = BackoffPolicy()
    said = parse_retry_after(hostile, now)
    for attempt in range(1, 25):
        shortest = policy.delay_at(attempt, None, 0.0)
        delay = policy.delay_at(attempt, said, 0.0)
        assert shortest <= delay <= max(policy.cap_seconds, policy.max_retry_after_seconds)
        assert delay >= policy.base_seconds * policy.jitter_low > 0


def test_backoff_is_capped_jittered_and_honours_retry_after():
    policy = BackoffPolicy(base_seconds=0.5, cap_seconds=5.0, max_retry_after_seconds=60.0)
    rng = random.Random(1)
    delays = [policy.delay(n, rng=rng) for n in range(1, 12)]
    assert all(0.25 <= d <= 5.0 for d in delays)
    assert delays[-1] >= 2.5  # reached the cap (times jitter >= 0.5)
    assert policy.delay(1, retry_after=20.0, rng=rng) == 20.0
    assert policy.delay(1, retry_after=600.0, rng=rng) == 60.0


def test_session_jwt_round_trip_and_header():
    key = ec.generate_private_key(ec.SECP256R1())
    ident = SessionIdentity("https://agent.example/agent.json", "usr_1", "ses_1")
    token = sign_session_jwt(key, ident, "https://auth.example.com")
    header = jwt.get_unverified_header(token)
    assert header["kid"] == key_id(key.public_key()) and "jwk" not in header
    assert session_key_id(token) == ("https://agent.example/agent.json", header["kid"])
    verified = verify_session_jwt(token, "https://auth.example.com", key.public_key())
    assert (verified.client_id, verified.user_id, verified.session_id) == (
        "https://agent.example/agent.json",
        "usr_1",
        "ses_1",
    )
    other = sign_session_jwt(key, ident, "https://auth.example.com")
    assert (
        verify_session_jwt(other, "https://auth.example.com", key.public_key()).jti != verified.jti
    )
    with pytest.raises(InvalidSession, match="rejected"):
        verify_session_jwt(
            other, "https://auth.example.com", ec.generate_private_key(ec.SECP256R1()).public_key()
        )


def test_session_jwt_rejections():
    key = ec.generate_private_key(ec.SECP256R1())
    ident = SessionIdentity("c", "u", "s")
    public = key.public_key()
    with pytest.raises(InvalidSession, match="missing"):
        verify_session_jwt(None, "aud", public)
    with pytest.raises(InvalidSession, match="malformed"):
        verify_session_jwt("not-a-jwt", "aud", public)
    with pytest.raises(InvalidSession, match="rejected"):
        verify_session_jwt(sign_session_jwt(key, ident, "aud"), "other-aud", public)
    old = sign_session_jwt(key, ident, "aud", now=datetime.now(UTC).timestamp() - 3600)
    with pytest.raises(InvalidSession, match="expired"):
        verify_session_jwt(old, "aud", public)
    fresh = sign_session_jwt(key, ident, "aud")
    later = datetime.now(UTC).timestamp() + 3600
    with pytest.raises(InvalidSession, match="expired"):
        verify_session_jwt(fresh, "aud", public, now=later)
    token = sign_session_jwt(key, ident, "aud")
    head, body, sig = token.split(".")
    tampered = ".".join([head, body, sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")])
    with pytest.raises(InvalidSession):
        verify_session_jwt(tampered, "aud", public)
    hmac = jwt.encode(
        {"iss": "c", "sid": "s"},
        "k" * 32,
        algorithm="HS256",
        headers={"typ": "poppy-session+jwt", "kid": "x"},
    )
    with pytest.raises(InvalidSession, match="HMAC"):
        session_key_id(hmac)
