"""Which account a sign-in is, from what a Company says of it (protocol/accounts.py): an ID token
from the token endpoint, a userinfo answer, an RFC 9068 JWT access token. Every input hostile."""

from __future__ import annotations

import base64
import json
from datetime import datetime, UTC

import pytest

from poppy_tui.protocol.accounts import (
    access_token_account,
    account_from_claims,
    id_token_account,
    jwt_parts,
    userinfo_account,
)

ISSUER, AGENT = "https://auth.juniper.test", "https://agent.test/agent.json"
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
LATER = int(NOW.timestamp()) + 600


def token(claims: dict, header: dict | None = None) -> str:
    """A compact JWS with a signature nobody checks (it came from the token endpoint itself)."""

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part(header or {'alg': 'ES256'})}.{part(claims)}.c2ln"


def id_token(**claims) -> str:
    return token({"iss": ISSUER, "aud": AGENT, "sub": "usr_1", "exp": LATER, **claims})


def test_an_id_token_names_its_email_else_its_sub():
    assert id_token_account(id_token(email="ada@juniper.test"), ISSUER, AGENT, NOW) == (
        "ada@juniper.test",
        "usr_1",
    )
    assert id_token_account(id_token(), ISSUER, AGENT, NOW) == ("usr_1", "usr_1")
    unverified = id_token(email="ada@juniper.test", email_verified=False)
    assert id_token_account(unverified, ISSUER, AGENT, NOW)[0] == "usr_1"


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": ISSUER + "/"},  # another issuer, by one character
        {"aud": "https://other-agent.test/agent.json"},
        {"aud": [AGENT, "https://other.test"]},  # several audiences and no azp naming us
        {"exp": int(NOW.timestamp()) - 3600},
        {"exp": "soon"},
        {"exp": True},
    ],
)
def test_an_id_token_not_for_this_issuer_and_agent_or_expired_names_nothing(claims):
    assert id_token_account(id_token(**claims), ISSUER, AGENT, NOW) == (None, None)


def test_several_audiences_with_azp_naming_the_agent_are_taken():
    both = id_token(aud=[AGENT, "https://other.test"], azp=AGENT, email="ada@juniper.test")
    assert id_token_account(both, ISSUER, AGENT, NOW)[0] == "ada@juniper.test"


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "not a jwt",
        "a.b",
        "a.b.c.d",
        "!!!.???.sig",
        token({"iss": ISSUER})[:20],
        "x" * 20000,
        base64.urlsafe_b64encode(b"[1]").decode() + ".e30.sig",  # a header that is no object
    ],
)
def test_what_is_not_a_jwt_names_nothing(value):
    assert jwt_parts(value) is None or id_token_account(value, ISSUER, AGENT, NOW) == (None, None)
    assert id_token_account(value, ISSUER, AGENT, NOW) == (None, None)
    assert access_token_account(value, ISSUER, NOW) is None


@pytest.mark.parametrize(
    ("claims", "account"),
    [
        ({"email": "ada@juniper.test", "sub": "usr_1"}, "ada@juniper.test"),
        ({"email": "ada\x1b[2J@juniper.test", "sub": "usr_1"}, "usr_1"),  # a control: not taken
        ({"email": " ada@juniper.test", "sub": "usr_1"}, "usr_1"),  # blanks around: not taken
        ({"email": "a" * 400 + "@x.test", "sub": "usr_1"}, "usr_1"),
        ({"email": 7, "sub": "usr_1"}, "usr_1"),
        ({"sub": ""}, None),
        ({}, None),
    ],
)
def test_claims_name_a_usable_email_or_sub_only(claims, account):
    assert account_from_claims(claims) == account


def test_userinfo_is_taken_only_for_the_id_tokens_sub():
    body = {"sub": "usr_1", "email": "ada@juniper.test"}
    assert userinfo_account(body, None) == "ada@juniper.test"
    assert userinfo_account(body, "usr_1") == "ada@juniper.test"
    assert userinfo_account(body, "usr_2") is None  # OIDC 5.3.2: another user's answer
    assert userinfo_account(["usr_1"], None) is None


def test_a_jwt_access_token_names_its_sub_when_typed_at_jwt_from_this_issuer():
    claims = {"iss": ISSUER, "sub": "usr_1", "exp": LATER}
    assert (
        access_token_account(token(claims, {"alg": "ES256", "typ": "at+jwt"}), ISSUER, NOW)
        == "usr_1"
    )
    typed = token(claims, {"alg": "ES256", "typ": "application/at+jwt"})
    assert access_token_account(typed, ISSUER, NOW) == "usr_1"
    assert access_token_account(token(claims), ISSUER, NOW) is None  # no typ: just any JWT
    other = token({**claims, "iss": "https://evil.test"}, {"typ": "at+jwt"})
    assert access_token_account(other, ISSUER, NOW) is None
    expired = token({**claims, "exp": 1}, {"typ": "at+jwt"})
    assert access_token_account(expired, ISSUER, NOW) is None
