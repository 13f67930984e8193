"""Where a sign-in link, page or secret really goes: addresses read as a browser reads them (WHATWG
URL), the Company's own domains with the Public Suffix List, look-alike hosts shown by their ASCII
form, and the fields kept secret whatever the Company declares."""

from __future__ import annotations

import pytest

from poppy_tui.protocol.signin import MediatedField, shown_link
from poppy_tui.protocol.web_address import is_public_suffix, own_link, read_like_a_browser
from poppy_tui.safety.secret_fields import guard_fields, identifies_account, looks_secret, redact
from poppy_tui.safety.web_host import show_host

from tests.companies.signin_company import (
    DISGUISED_SECRETS,
    LOOKALIKE,
    LOOKALIKE_ASCII,
    TRICK_LINKS,
)

ISSUER = "https://auth.shop.test"
OWN = ("shop.test",)


@pytest.mark.parametrize("trick", sorted(TRICK_LINKS))
def test_a_link_a_browser_opens_on_another_site_is_not_the_companys(trick):
    link = TRICK_LINKS[trick]
    read = read_like_a_browser(link)
    assert read is not None and read.host == "evil.test", trick
    assert own_link(link, ISSUER, OWN) is None


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        (
            "HTTPS://SHOP.TEST/Verify",
            "https://shop.test/Verify",
        ),  # scheme and host lowercased, path kept
        ("https://shop.test./verify", "https://shop.test./verify"),  # the same DNS name
        ("https://sh\top.te\nst/verify", "https://shop.test/verify"),  # as the browser drops them
        ("https://www.%73hop.test/verify", "https://www.shop.test/verify"),
        ("https://login.shop.test/a b", "https://login.shop.test/a%20b"),
        ("https://auth.shop.test:8443/device", "https://auth.shop.test:8443/device"),
    ],
)
def test_an_own_link_is_shown_as_the_browser_will_load_it(link, shown):
    assert shown_link(link, ISSUER, OWN) == shown


@pytest.mark.parametrize("suffix", ["test", "co.uk", "github.io", "TEST", "test."])
def test_a_public_suffix_in_poppy_domains_makes_no_other_site_own(suffix):
    assert is_public_suffix(suffix)
    for link in (
        "https://evil.test/verify",
        "https://evil.co.uk/verify",
        "https://evil.github.io/verify",
    ):
        assert own_link(link, ISSUER, (suffix,)) is None
    assert own_link("https://www.shop.test/verify", ISSUER, (suffix, "shop.test")) is not None


def test_registrable_domains_are_not_public_suffixes():
    assert not any(
        is_public_suffix(d) for d in ("shop.test", "example.co.uk", "me.github.io", "127.0.0.1")
    )


def test_loopback_hosts_match_exactly_port_included():
    issuer = "http://127.0.0.1:8443/tenants/a"
    assert own_link("http://127.0.0.1:8443/device", issuer, ("127.0.0.1:8443",)) is not None
    assert (
        own_link("http://127.0.0.1:9999/device", issuer, ("127.0.0.1:8443",)) is None
    )  # another program
    assert own_link("http://127.0.0.2:8443/device", issuer, ("127.0.0.1:8443",)) is None
    assert own_link("http://localhost:8443/device", issuer, ("localhost:8443",)) is not None
    assert own_link("http://evil.localhost:8443/device", issuer, ("localhost:8443",)) is None


def test_a_look_alike_host_is_shown_by_its_ascii_form_and_marked():
    shown = show_host(LOOKALIKE)
    assert shown.text == LOOKALIKE_ASCII and shown.lookalike
    assert LOOKALIKE not in shown.line and "look-alike" in shown.line
    assert shown.warning is not None and LOOKALIKE not in shown.warning
    assert show_host(LOOKALIKE_ASCII).lookalike  # the same host when given already encoded
    assert show_host(f"{LOOKALIKE}:8443").text == f"{LOOKALIKE_ASCII}:8443"
    assert show_host("Shop.Test.").line == "shop.test"
    plain = show_host("bücher.test")  # one alphabet: its own letters beside the ASCII form
    assert (plain.text, plain.lookalike, plain.international) == (
        "xn--bcher-kva.test",
        False,
        "bücher.test",
    )


@pytest.mark.parametrize("declared", DISGUISED_SECRETS, ids=lambda f: f["label"])
def test_a_password_or_code_is_secret_whatever_the_company_declares(declared):
    field = MediatedField(
        declared["name"], declared["label"], declared["secret"], declared.get("type")
    )
    assert looks_secret(field) and not identifies_account(field)


@pytest.mark.parametrize(
    ("name", "label", "kind"),
    [
        ("email", "Email", None),
        ("user", "Username", None),
        ("login", "Login", "email"),
        ("postcode", "Postal code", None),
        ("zip", "ZIP code", None),
        ("name", "Your name", None),
    ],
)
def test_ordinary_fields_stay_visible(name, label, kind):
    assert not looks_secret(MediatedField(name, label, False, kind))


def test_only_the_account_identifier_is_kept_and_never_a_secret():
    fields = guard_fields(
        (
            MediatedField("nickname", "Nickname", False),
            MediatedField("email", "Email", False),
            MediatedField("username", "Username", False),
            MediatedField("password", "Password", False),
        )
    )
    assert [f.account for f in fields] == [False, True, False, False]
    assert [f.secret for f in fields] == [False, False, False, True]
    assert not any(
        f.account for f in guard_fields((MediatedField("email", "Email", True),))
    )  # declared secret
    assert not any(
        f.account for f in guard_fields((MediatedField("account_number", "Account number", False),))
    )


def test_credentials_quoted_back_are_cut_out():
    assert (
        redact("No account for ada@x.test with hunter2-pass", ["hunter2-pass"])
        == "No account for ada@x.test with •••"
    )
    assert redact("PIN 12 is wrong", ["12"]) == "PIN 12 is wrong"  # too short to cut safely
