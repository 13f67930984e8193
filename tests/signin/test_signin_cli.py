"""`poppy-tui signin` / `signout` and the sign-in column of `companies list`, run in-process
against the spec-written authorization server."""

from __future__ import annotations

import json
import threading
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.waiting import wait_until_blocking

from poppy_tui.agent.signin import flows
from poppy_tui.cli.exit_codes import Exit

from spec_auth_server import USER


@pytest.fixture
def home(registered_home):
    return registered_home('key_storage = "file"\nrequest_timeout_seconds = 5\n')


def _in_background(work) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def _approve_when_asked(served) -> None:
    wait_until_blocking(lambda: served.devices, timeout=20, describe="a device sign-in asking")
    entry = next(iter(served.devices.values()))
    with httpx.Client(trust_env=False) as browser:
        browser.post(
            f"{served.base_url}/device", data=served.approve_device_form(entry["user_code"])
        )


def test_device_signin_then_companies_list_then_signout(home, served, cli, memory_keyring):
    assert cli("companies", "add", served.base_url)[0] == Exit.OK
    thread = _in_background(lambda: _approve_when_asked(served))

    code, out, err = cli("signin", "Juniper")
    thread.join(5)

    assert code == Exit.OK, err
    assert out.strip() == "signed in to Juniper Outfitters (device), scopes poppy:read poppy:write"
    assert f"Juniper Outfitters ({served.domain})" in err
    assert f"{served.base_url}/device?user_code=" in err

    # key_storage = "file": the refresh token sits beside the key file, private, not in the keyring.
    token_file = home / "data" / "sign-ins.json"
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    refresh = json.loads(token_file.read_text())[served.issuer]
    assert refresh in served.grants and not memory_keyring.secrets
    database = (home / "data" / "poppy.db").read_bytes()
    assert refresh.encode() not in database and b"poppy:read" in database

    code, out, _ = cli("companies", "list")
    assert "signed in (device), scopes poppy:read poppy:write" in out
    listed = json.loads(cli("companies", "list", "--json")[1])["companies"][0]["signed_in"]
    assert listed["scopes"] == ["poppy:read", "poppy:write"] and listed["kind"] == "device"

    code, out, _ = cli("signin", "Juniper", "--scope", "poppy:read")
    assert (code, out.strip()) == (
        Exit.OK,
        "already signed in to Juniper Outfitters with poppy:read",
    )
    code, out, _ = cli("signin", "Juniper")  # the device kind's scopes, all held already
    assert (code, out.strip()) == (
        Exit.OK,
        "already signed in to Juniper Outfitters with poppy:read poppy:write",
    )
    assert len([s for s in served.received if s.path == "/oauth/device"]) == 1

    code, out, err = cli("signout", "Juniper")
    assert code == Exit.OK and "revoked" in out
    assert served.revoked_tokens and served.revoked_tokens[0][1] == "refresh_token"
    assert "signed out" in cli("companies", "list")[1]
    assert json.loads(token_file.read_text()) == {}
    assert cli("signout", "Juniper")[1].strip() == "not signed in to Juniper Outfitters"


def test_direct_signin_through_the_browser(home, served, cli, monkeypatch):
    def consent(url: str) -> None:
        with httpx.Client(trust_env=False) as browser:
            query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
            answer = browser.post(
                url.split("?")[0],
                data=query
                | {"email": USER["email"], "password": USER["password"], "decision": "allow"},
            )
            browser.get(answer.headers["location"])

    opened: list[str] = []
    monkeypatch.setattr(
        flows,
        "_open_in_browser",
        lambda url: opened.append(url) or _in_background(lambda: consent(url)) is not None,
    )
    cli("companies", "add", served.base_url)

    code, out, err = cli("signin", "Juniper", "--direct", "--scope", "orders")

    assert code == Exit.OK, err
    assert out.strip() == "signed in to Juniper Outfitters (direct), scopes orders"
    assert opened and opened[0] in err


def test_mediated_signin_reads_the_secret_without_echo(home, served, cli, monkeypatch):
    import getpass
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal(USER["email"] + "\n"))
    prompts: list[str] = []
    monkeypatch.setattr(
        getpass, "getpass", lambda prompt="": prompts.append(prompt) or USER["password"]
    )
    cli("companies", "add", served.base_url)

    code, out, err = cli("signin", "Juniper", "--mediated")

    assert code == Exit.OK, err
    assert prompts == ["Password (not shown): "]
    assert f"go once to Juniper Outfitters at {served.domain}" in err
    assert (
        out.strip()
        == f"signed in to Juniper Outfitters as {USER['email']} (mediated), scopes poppy:read"
    )
    assert USER["password"] not in out + err


def test_mediated_signin_needs_a_terminal(home, served, cli):
    cli("companies", "add", served.base_url)
    code, _, err = cli("signin", "Juniper", "--mediated")
    assert code == Exit.USAGE and "terminal" in err


def test_a_scope_the_kind_does_not_offer_is_a_usage_error(home, served, cli):
    cli("companies", "add", served.base_url)
    code, _, err = cli("signin", "Juniper", "--device", "--scope", "orders")
    assert code == Exit.USAGE and "does not grant orders" in err
    assert not any(s.path == "/oauth/device" for s in served.received)


def test_issuer_binding_failure_is_one_clear_line(home, served, cli):
    cli("companies", "add", served.base_url)
    served.metadata_domains = ["elsewhere.example"]
    code, out, err = cli("signin", "Juniper")
    assert code == Exit.ERROR and out == ""
    assert len(err.strip().splitlines()) == 1 and "issuer binding" in err and "poppy_domains" in err


def test_company_text_is_printed_safely(home, served, cli):
    served.name = "Juniper\x1b[2J Outfitters"
    served.user_code = "12\x1b]52;c;aGk=\x0734"
    cli("companies", "add", served.base_url)
    thread = _in_background(lambda: _approve_when_asked(served))
    code, out, err = cli("signin", "Juniper")
    thread.join(5)
    assert code == Exit.OK, err
    assert "\x1b" not in out + err and "\x07" not in err
    assert "\\x1b]52" in err and "Juniper\\x1b[2J Outfitters" in out


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "abc\u00e9", "abc def", "abc\x00"])
def test_a_bad_access_token_is_one_clear_line_at_signin(home, served, cli, monkeypatch, token):
    import getpass
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal(USER["email"] + "\n"))
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": USER["password"])
    cli("companies", "add", served.base_url)
    served.token_answer = {"access_token": token}
    code, out, err = cli("signin", "Juniper", "--mediated")
    assert code == Exit.ERROR and "signed in" not in out
    assert "Traceback" not in err and token not in err
    errors = [line for line in err.splitlines() if "poppy-tui:" in line]  # after the prompts
    assert len(errors) == 1 and err.endswith(errors[0].split("poppy-tui:", 1)[1] + "\n")
    assert "Juniper Outfitters' token answer can't be used: access_token" in errors[0]
    assert "signed in" not in cli("companies", "list").out
