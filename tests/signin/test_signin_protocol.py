"""The pure sign-in rules: where metadata lives, which device links are shown, the redirect checks."""

from __future__ import annotations

import pytest

from poppy_tui.protocol.signin import (
    InvalidSignIn,
    link_host_allowed,
    metadata_url,
    parse_auth_offer,
    parse_auth_server,
    parse_callback,
    parse_token_response,
)

ISSUER = "https://auth.juniper.example"


def test_metadata_url_puts_the_well_known_segment_before_the_issuer_path():
    assert (
        metadata_url(ISSUER)
        == "https://auth.juniper.example/.well-known/oauth-authorization-server"
    )
    assert metadata_url("https://auth.provider.example/shop-a") == (
        "https://auth.provider.example/.well-known/oauth-authorization-server/shop-a"
    )


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        ("https://auth.juniper.example/device", True),
        ("https://login.auth.juniper.example/device", True),  # a subdomain of the issuer host
        ("https://juniper.example/activate", True),  # a poppy_domains entry
        ("https://www.juniper.example/activate", True),  # a subdomain of one
        ("https://juniper.example.evil.test/activate", False),
        ("https://evil-juniper.example/activate", False),
        ("https://notjuniper.example/activate", False),
        ("http://juniper.example/activate", False),  # http only for a loopback (http) issuer
        ("https://user@juniper.example/activate", False),
        ("javascript:alert(1)", False),
    ],
)
def test_device_link_hosts(link, shown):
    assert link_host_allowed(link, ISSUER, ("juniper.example",)) is shown


def _metadata(**changes):
    base = {
        "issuer": ISSUER,
        "token_endpoint": ISSUER + "/token",
        "poppy_domains": ["juniper.example"],
    }
    return base | changes


def test_issuer_binding_is_character_for_character():
    assert (
        parse_auth_server(_metadata(), ISSUER, "juniper.example", False).token_endpoint
        == ISSUER + "/token"
    )
    for wrong in (ISSUER + "/", ISSUER.upper(), "https://auth.juniper.example:443"):
        with pytest.raises(InvalidSignIn, match="issuer"):
            parse_auth_server(_metadata(issuer=wrong), ISSUER, "juniper.example", False)
    with pytest.raises(InvalidSignIn, match="poppy_domains"):
        parse_auth_server(
            _metadata(poppy_domains=["shop.example"]), ISSUER, "juniper.example", False
        )
    with pytest.raises(InvalidSignIn, match="https"):
        parse_auth_server(
            _metadata(token_endpoint="http://auth.juniper.example/token"),
            ISSUER,
            "juniper.example",
            False,
        )


def test_callback_checks_state_then_iss_exactly():
    ok = f"http://127.0.0.1:5000/callback?code=abc&state=s1&iss={ISSUER}"
    assert parse_callback(ok, "s1", ISSUER).code == "abc"
    with pytest.raises(InvalidSignIn, match="state"):
        parse_callback(ok, "s2", ISSUER)
    with pytest.raises(InvalidSignIn, match="iss"):
        parse_callback(ok.replace("iss=", "iss=x"), "s1", ISSUER)
    with pytest.raises(InvalidSignIn, match="iss"):
        parse_callback("http://127.0.0.1:5000/callback?code=abc&state=s1", "s1", ISSUER)
    with pytest.raises(InvalidSignIn, match="access_denied"):
        parse_callback(
            f"http://127.0.0.1:5000/callback?error=access_denied&state=s1&iss={ISSUER}",
            "s1",
            ISSUER,
        )


def test_mediated_fields_are_read_as_declared():
    document = {
        "auth": {
            "issuer": ISSUER,
            "mediated": {
                "endpoint": ISSUER + "/sign-in",
                "scopes": ["poppy:read"],
                "fields": [
                    {"name": "email", "label": "Email", "secret": False},
                    {"name": "pin", "secret": True},
                ],
            },
        }
    }
    offer = parse_auth_offer(document, False)
    assert offer.kinds() == ("mediated",)
    assert [(f.name, f.label, f.secret) for f in offer.mediated.fields] == [
        ("email", "Email", False),
        ("pin", "pin", True),
    ]
    document["auth"]["mediated"]["fields"].append({"name": "email", "secret": False})
    with pytest.raises(InvalidSignIn, match="twice"):
        parse_auth_offer(document, False)


def test_token_response_scope_defaults_to_what_was_asked():
    asked = ("poppy:read",)
    assert (
        parse_token_response({"access_token": "a", "token_type": "Bearer"}, asked).scopes == asked
    )
    assert parse_token_response(
        {"access_token": "a", "token_type": "bearer", "scope": "x y"}, asked
    ).scopes == ("x", "y")
    with pytest.raises(InvalidSignIn, match="token_type"):
        parse_token_response({"access_token": "a", "token_type": "DPoP"}, asked)


def test_the_cimd_lists_the_loopback_redirect_a_company_accepts():
    """Direct Sign-In's redirect reaches the terminal on loopback (RFC 8252 7.3): the CIMD that
    `identity init` writes lists it, and a Company's CIMD check accepts it beside same-domain ones."""
    from poppy_tui.agent.identity.settings import make_settings
    from poppy_tui.protocol.client_metadata import parse_client_metadata
    from poppy_tui.protocol.conventions import DIRECT_SIGNIN_LOOPBACK_REDIRECT

    settings = make_settings("https://agent.example/agent.json")
    metadata = settings.metadata()
    assert (
        metadata["redirect_uris"][0]
        == DIRECT_SIGNIN_LOOPBACK_REDIRECT
        == "http://127.0.0.1/callback"
    )
    parsed = parse_client_metadata(metadata, "https://agent.example/agent.json")
    assert DIRECT_SIGNIN_LOOPBACK_REDIRECT in parsed.redirect_uris
    with pytest.raises(Exception, match="redirect_uri"):
        parse_client_metadata(
            dict(metadata, redirect_uris=["http://127.0.0.1:8080/callback"]), metadata["client_id"]
        )


@pytest.mark.parametrize(
    ("auth", "field"),
    [
        ({"issuer": "http://auth.juniper.example"}, "auth.issuer"),
        (
            {"issuer": "https://127.0.0.1:8443"},
            "auth.issuer",
        ),  # loopback only for a loopback Company
        (
            {
                "issuer": ISSUER,
                "mediated": {
                    "endpoint": "http://auth.juniper.example/sign-in",
                    "fields": [{"name": "pin", "secret": True}],
                },
            },
            "auth.mediated.endpoint",
        ),
        (
            {
                "issuer": ISSUER,
                "mediated": {
                    "endpoint": "https://10.0.0.7/sign-in",
                    "fields": [{"name": "pin", "secret": True}],
                },
            },
            "auth.mediated.endpoint",
        ),
    ],
)
def test_sign_in_urls_are_https_on_public_hosts(auth, field):
    with pytest.raises(InvalidSignIn) as refused:
        parse_auth_offer({"auth": auth}, allow_loopback=False)
    assert refused.value.field == field
