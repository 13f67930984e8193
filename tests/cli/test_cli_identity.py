"""`poppy-tui identity init|show`, and the sign-in exit code, run in-process through main()."""

from __future__ import annotations

import json

import pytest

from poppy_tui.cli.exit_codes import Exit
from cli_support import make_home
from tests.companies.account_company import NAME, AccountCompany


@pytest.fixture
def home(tmp_path, monkeypatch):
    """conftest's private home, with a short request timeout for the Companies these tests start."""
    return make_home(tmp_path, monkeypatch, 'key_storage = "file"\nrequest_timeout_seconds = 5\n')


def test_identity_init_writes_the_documents_to_publish(home, cli):
    code, out, err = cli(
        "identity",
        "init",
        "--client-id",
        "https://agent.example.org/poppy/agent.json",
        "--client-name",
        "Ada's agent",
    )
    assert code == Exit.OK, err
    folder = home / "config" / "identity"
    cimd = json.loads((folder / "agent.json").read_text())
    assert cimd == {
        "client_id": "https://agent.example.org/poppy/agent.json",
        "client_name": "Ada's agent",
        "jwks_uri": "https://agent.example.org/poppy/jwks.json",
        # Direct Sign-In's loopback redirect (RFC 8252 7.3), then the page on the client_id's domain.
        "redirect_uris": [
            "http://127.0.0.1/callback",
            "https://agent.example.org/poppy-tui/signed-in",
        ],
        "token_endpoint_auth_method": "private_key_jwt",
    }
    jwks = json.loads((folder / "jwks.json").read_text())
    assert len(jwks["keys"]) == 1 and "d" not in jwks["keys"][0] and jwks["keys"][0]["kid"]
    assert "serve at https://agent.example.org/poppy/agent.json" in out
    assert "serve at https://agent.example.org/poppy/jwks.json" in out

    code, out, _ = cli("identity", "show", "--json")
    shown = json.loads(out)
    assert code == Exit.OK and shown["client_id"] == cimd["client_id"] and not shown["development"]
    assert shown["kid"] == jwks["keys"][0]["kid"]
    assert [d["serve_at"] for d in shown["documents"]] == [cimd["client_id"], cimd["jwks_uri"]]
    code, out, _ = cli("identity", "show")
    assert (
        f"key id (kid): {shown['kid']}" in out
        and "serve at https://agent.example.org/poppy/agent.json" in out
    )


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--client-id", "http://agent.example.org/agent.json"], "https"),
        (
            [
                "--client-id",
                "https://agent.example.org/agent.json",
                "--jwks-uri",
                "https://elsewhere.example/jwks.json",
            ],
            "jwks_uri",
        ),
        (
            [
                "--client-id",
                "https://agent.example.org/agent.json",
                "--redirect-uri",
                "https://evil.example/cb",
            ],
            "redirect_uri",
        ),
        (["--client-id", "https://agent.example.org/"], "path"),
    ],
)
def test_identity_init_refuses_what_a_company_would_refuse(home, cli, argv, words):
    code, _, err = cli("identity", "init", *argv)
    assert code == Exit.USAGE and words in err
    assert not (home / "config" / "identity.json").exists()


def test_identity_show_before_init_says_what_to_do(home, cli):
    code, _, err = cli("identity", "show")
    assert code == Exit.ERROR and "identity init --client-id" in err


def test_a_sign_in_challenge_exits_8_and_says_whom(home, cli):
    birch = AccountCompany()
    try:
        assert cli("companies", "add", birch.base_url)[0] == Exit.OK
        code, _, err = cli("call", "Birch", "POST", "/orders", "--json", '{"oats": 2}')
        assert code == Exit.SIGN_IN_REQUIRED == 8
        assert f"Sign in to {NAME} to continue (scopes orders)" in err and "poppy-tui signin" in err
        code, out, _ = cli("identity", "show", "--json")  # the development identity it used
        assert json.loads(out)["client_id"] in birch.state.fetched
    finally:
        birch.stop()


def test_a_rejected_identity_is_one_line_naming_the_cimd(home, cli):
    birch = AccountCompany()
    birch.state.reject_identity = True
    try:
        assert cli("companies", "add", birch.base_url)[0] == Exit.OK
        code, _, err = cli("call", "Birch", "POST", "/wishlist/share")
        client_id = json.loads(cli("identity", "show", "--json")[1])["client_id"]
        assert code == Exit.NOT_PERFORMED
        lines = [line for line in err.splitlines() if "identity" in line]
        assert len(lines) == 1 and client_id in lines[0] and NAME in lines[0]
    finally:
        birch.stop()


def test_a_cli_process_and_a_running_agent_sharing_a_home_are_one_agent(tmp_path, company):
    """The --demo TUI and a CLI in another terminal: one identity.json, one key, one client_id;
    the CLI finds the development identity already served (by this process) and uses it."""
    import asyncio

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.paths import Paths
    from tests.cli.cli_support import run_process

    root = tmp_path / "shared"
    paths = Paths(config_dir=root / "config", data_dir=root / "data")
    paths.ensure()
    (paths.config_file).write_text('key_storage = "file"\nrequest_timeout_seconds = 10\n')
    running = Agent.open(paths, Config(key_storage="file"))
    try:
        identity = running.identity  # served from this process from now on
        asyncio.run(running.add_company(company.base_url))
        done = run_process("call", "Manzanita", "GET", "/api/orders", home=root)
        assert done.code == Exit.OK, done.err
        shown = json.loads(run_process("identity", "show", "--json", home=root).out)
        assert (shown["client_id"], shown["kid"]) == (identity.client_id, identity.kid)
        # The Company fetched this one agent's CIMD: the CLI's requests were signed as it.
        assert company.context.agents.fetches.count(identity.client_id) == 1
    finally:
        running.store.close()
