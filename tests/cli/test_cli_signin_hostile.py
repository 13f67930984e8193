"""`poppy-tui signin` against hostile Companies (tests/companies/signin_company.py), as a person runs
it: prompts in an 80x24 pseudo-terminal. Where the credentials go is shown as the browser reads it
before the first prompt; links and pages on other sites are withheld; secrets are read without echo
and never printed, whatever the Company declares."""

from __future__ import annotations

import pytest

from poppy_tui.cli.exit_codes import Exit
from tests.cli.cli_support import Terminal, add_as_a_program, run_process
from tests.companies.signin_company import (
    EMAIL_FIELD,
    LOOKALIKE,
    LOOKALIKE_ASCII,
    TRICK_LINKS,
    careless_secrets,
    lookalike_shop,
    parser_trickster,
    started_companies,
    suffix_claimer,
)

PASSWORD = "hunter2-correct-horse"


@pytest.fixture
def hostile():
    with started_companies() as start:
        yield start


def _terminal(home, *argv: str) -> Terminal:
    return Terminal(*argv, home=home, columns=80, lines=24)


def _clean(text: str) -> None:
    """What the Company sent never reaches the terminal raw (screen_text keeps escapes we wrote)."""
    assert "\t" not in text and "\x07" not in text


def test_a_look_alike_endpoint_is_shown_by_its_ascii_form_before_the_first_prompt(home, hostile):
    company = hostile(lookalike_shop())
    add_as_a_program(home, company)
    terminal = _terminal(home, "signin", "Shop", "--mediated")
    try:
        terminal.read_until(r"Email: ")
        text = terminal.text
        assert f"go once to Shop Test at {LOOKALIKE_ASCII} ⚠ look-alike address" in text
        assert "look-alike address: its name mixes letters" in text.partition("Email: ")[0]
        assert LOOKALIKE not in text
        terminal.press(b"\x04")  # nothing typed (end of input), and nothing for the password either
        terminal.read_until(r"Password \(not shown\): ")
        terminal.press(b"\r")
        terminal.read_until(r"fill in Email, Password")
        assert terminal.wait() == Exit.ERROR
    finally:
        terminal.close()
    assert not any(what == "sign-in" for what, _ in company.received)


def test_a_password_declared_not_secret_is_read_without_echo_and_never_printed(home, hostile):
    company = hostile(
        careless_secrets(
            fields=[{"name": "password", "label": "Password", "secret": False}, EMAIL_FIELD]
        )
    )
    add_as_a_program(home, company)
    terminal = _terminal(home, "signin", "Shop", "--mediated")
    try:
        terminal.read_until(r"Password \(not shown\): ")
        terminal.press(PASSWORD.encode() + b"\r")
        terminal.read_until(r"Email: ")
        terminal.press(b"ada@shop.test\r")
        terminal.read_until(r"signed in to Shop Test as ada@shop\.test \(mediated\)")
        assert terminal.wait() == Exit.OK
    finally:
        terminal.close()
    assert PASSWORD not in terminal.text
    listed = run_process("companies", "list", home=home)
    assert "signed in as ada@shop.test" in listed.out and PASSWORD not in listed.out
    assert PASSWORD.encode() not in (home / "data" / "poppy.db").read_bytes()


def test_credentials_and_codes_quoted_back_are_not_printed(home, hostile):
    script = careless_secrets()
    script.needs_code = True
    company = hostile(script)
    add_as_a_program(home, company)
    terminal = _terminal(home, "signin", "Shop", "--mediated")
    try:
        terminal.read_until(r"Email: ")
        terminal.press(b"ada@shop.test\r")
        terminal.read_until(r"Password \(not shown\): ")
        terminal.press(PASSWORD.encode() + b"\r")
        terminal.read_until(r"One-time code \(not shown\): ")
        company.script.echo_credentials = True
        terminal.press(b"913370\r")
        terminal.read_until(r"did not take that code")
        # The code step stays open: the code is asked again, and nothing typed ends it.
        terminal.read_until(r"One-time code \(not shown\): ", after="did not take that code")
        terminal.press(b"\x04")
        terminal.read_until(r"enter the code")
        assert terminal.wait() == Exit.ERROR
    finally:
        terminal.close()
    assert "Code ••• is wrong" in terminal.text
    assert "913370" not in terminal.text and PASSWORD not in terminal.text


@pytest.mark.parametrize(
    "trick", ["backslash", "userinfo", "tab and newline", "percent-encoded host"]
)
def test_a_device_link_a_browser_opens_elsewhere_is_not_printed(home, hostile, trick):
    company = hostile(parser_trickster("device", TRICK_LINKS[trick]))
    add_as_a_program(home, company)
    done = run_process("signin", "Shop", "--device", home=home)
    assert done.code == Exit.ERROR and "refused" in done.err  # the Company's token endpoint says no
    assert "outside its own domain" in done.err and "WDJB-MJHT" in done.err
    assert "evil" not in done.err and "verify" not in done.err
    _clean(done.err)


def test_a_direct_page_under_a_claimed_public_suffix_is_neither_opened_nor_printed(home, hostile):
    company = hostile(suffix_claimer("direct", "https://login.evil.test/authorize"))
    add_as_a_program(home, company)
    done = run_process("signin", "Shop", "--direct", "--no-browser", home=home)
    assert done.code == Exit.ERROR
    assert "login.evil.test, outside its own domains" in done.err and "/authorize" not in done.err


def test_credentials_for_another_site_are_not_asked_for(home, hostile):
    company = hostile(parser_trickster("mediated", TRICK_LINKS["trailing dot"]))
    add_as_a_program(home, company)
    terminal = _terminal(home, "signin", "Shop", "--mediated")
    try:
        terminal.read_until(r"won't ask for your credentials")
        assert terminal.wait() == Exit.ERROR
    finally:
        terminal.close()
    assert "Email" not in terminal.text


def test_a_program_squatting_the_identity_port_with_another_key_is_left_for_another_port(
    home, hostile
):
    """The development identity's port, recorded in identity.json, is held by a program that copies
    this home's CIMD but serves a key of its own: the CLI signs in from another port, recorded."""
    from urllib.parse import parse_qs, urlsplit

    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.identity.settings import (
        development_settings,
        free_loopback_port,
        read_settings,
        write_settings,
    )
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.protocol.client_metadata import jwks_document
    from tests.companies.port_squatter import PortSquatter

    paths = resolve_paths(home).ensure()
    port = free_loopback_port()
    settings = write_settings(paths, development_settings(port))
    squatter = PortSquatter(
        port,
        {
            urlsplit(settings.client_id).path: settings.metadata(),
            urlsplit(settings.jwks_uri).path: jwks_document(
                [ec.generate_private_key(ec.SECP256R1()).public_key()]
            ),
        },
    )
    company = hostile(careless_secrets())
    try:
        add_as_a_program(home, company)
        done = run_process("signin", "Shop", "--device", home=home)
    finally:
        squatter.stop()
    assert done.code == Exit.ERROR and "refused" in done.err, done.err
    assert urlsplit(settings.jwks_uri).path in squatter.requests  # it asked, and did not believe it
    moved = read_settings(paths)
    assert moved is not None and moved.loopback_port != port
    [(_, form)] = [entry for entry in company.received if entry[0] == "device_authorization"]
    assert parse_qs(form)["client_id"] == [moved.client_id]
