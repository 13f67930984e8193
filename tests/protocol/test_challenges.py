"""Reading sign-in challenges: WWW-Authenticate (RFC 6750/9110) and the JSON forms."""

from __future__ import annotations

import pytest

from poppy_tui.protocol.challenges import (
    challenge_from_fields,
    parse_challenge,
    parse_www_authenticate,
)


def test_bearer_header_with_quoted_and_token_params():
    header = 'Bearer realm="shop", error="insufficient_scope", scope="orders addresses", error_description="Needs \\"orders\\""'
    found = parse_challenge(403, {"WWW-Authenticate": header}, None)
    assert found is not None and found.kind == "scope" and found.error == "insufficient_scope"
    assert found.scopes == ("orders", "addresses")
    assert found.description == 'Needs "orders"'
    assert found.needs_sign_in


def test_several_challenges_in_one_header_the_bearer_one_counts():
    header = 'Basic realm="x", Bearer error=sign_in_required, scope="orders"'
    assert parse_www_authenticate(header) == [
        ("basic", {"realm": "x"}),
        ("bearer", {"error": "sign_in_required", "scope": "orders"}),
    ]
    found = parse_challenge(401, {"www-authenticate": header}, None)
    assert found is not None and found.kind == "sign_in" and found.scopes == ("orders",)


def test_the_json_form_alone_and_scopes_from_the_body_when_the_header_has_none():
    assert parse_challenge(
        401, {}, {"error": "sign_in_required", "scope": ["orders", "orders", 7]}
    ).scopes == ("orders",)
    found = parse_challenge(
        401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}, {"scope": "a b"}
    )
    assert found is not None and found.kind == "sign_in" and found.scopes == ("a", "b")


def test_identity_rejections_keep_the_client_id_the_company_named():
    found = parse_challenge(
        401, {}, {"error": "invalid_client", "client_id": "https://a.example/agent.json"}
    )
    assert found is not None and found.kind == "identity" and not found.needs_sign_in
    assert found.client_id == "https://a.example/agent.json"


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (200, {}, {"error": "sign_in_required"}),
        (503, {"WWW-Authenticate": 'Bearer error="sign_in_required"'}, None),
        (403, {}, {"error": "approval_required"}),
        (401, {"WWW-Authenticate": "Bearer"}, None),
        (401, {"WWW-Authenticate": "x" * 10000}, "text"),
        (401, {"WWW-Authenticate": '"=,,==,'}, [1, 2]),
    ],
)
def test_what_is_not_a_challenge_is_none_never_an_error(status, headers, body):
    assert parse_challenge(status, headers, body) is None


def test_conversation_authorization_event():
    found = challenge_from_fields(
        {"type": "authorization", "error": "sign_in_required", "scope": "orders"}
    )
    assert found is not None and found.kind == "sign_in" and found.scopes == ("orders",)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.integers(100, 599), st.text(max_size=200), json_values)
def test_any_answer_reads_without_raising(status, header, body):
    found = parse_challenge(status, {"WWW-Authenticate": header}, body)
    if found is not None:
        assert found.kind in ("sign_in", "scope", "identity") and all(
            isinstance(s, str) for s in found.scopes
        )
