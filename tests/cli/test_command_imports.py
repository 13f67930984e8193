"""Each command loads only what it needs (the per-command targets of docs/benchmarks.md;
docs/architecture.md): checked on the real program, in a fresh interpreter, by the modules it had
loaded when it exited. Behaviour, not time: the benchmark (tests/benchmarks/bench_commands.py)
measures what this saves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cli_support import subprocess_env

# Runs poppy-tui's main() as the installed script does, then prints the loaded modules as JSON
# on the last line of stderr (stdout is the command's own). The interpreter starts without
# `site` (-S), with the same sys.path this one has: a .pth file's code runs at every start under
# `site` and can load anything (one that imports certifi loads typing, shutil, tempfile and
# zipfile), which would then be counted as the command's. So this counts what poppy-tui loads.
_PROBE = """
import json, sys
before = sorted(sys.modules)
from poppy_tui.cli.main import main
try:
    code = main(sys.argv[1:])
finally:
    print(json.dumps(before), file=sys.stderr)
    print(json.dumps(sorted(n for n, m in sys.modules.items() if m is not None)), file=sys.stderr)
raise SystemExit(code)
"""

# The modules some test below says a command doesn't load: if the interpreter had them before
# poppy-tui started, those checks would pass whatever poppy-tui does.
_CHECKED_LIGHT = {"typing", "shutil", "dataclasses", "datetime", "textwrap", "tomllib", "sqlite3"}

# What no command below may load: the TUI, the other transports, httpx (and with it its
# command-line client's libraries), the keyring's metadata scan (the key is in a file here), and
# the Company-text checks.
EVERYWHERE = {
    "textual",
    "rich",
    "click",
    "pygments",
    "mcp",
    "httpx",
    "httpcore",
    "markdown_it",
    "keyring",
    "importlib_metadata",
    "poppy_tui.ui",
    "poppy_tui.demo",
    "poppy_tui.agent.transports.mcp",
    "poppy_tui.safety.discrepancies",
}


def loaded_by(home, *argv: str) -> tuple[int, set[str], str]:
    env = subprocess_env(home)
    # Without `site`, the paths it would add (site-packages, .pth entries) come from ours.
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *(p for p in sys.path if p)])
    done = subprocess.run(
        [sys.executable, "-S", "-c", _PROBE, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    *said, before, modules = done.stderr.rstrip("\n").split("\n")
    assert not present(set(json.loads(before)), _CHECKED_LIGHT), "loaded before poppy-tui started"
    return done.returncode, set(json.loads(modules)), done.stdout + "\n".join(said)


def remembered(home, monkeypatch) -> None:
    """The home's config.toml as every command but the first after an edit finds it: checked
    already, its settings remembered in the data folder (agent/config_file.py). A file written
    just now is parsed with the typed model (pydantic) each time, for two seconds."""
    from poppy_tui.agent import config_file

    monkeypatch.setattr(config_file, "_SETTLED_NS", -(10**18))  # as if written minutes ago
    (home / "data").mkdir(exist_ok=True)
    config_file.read_settings(home / "config" / "config.toml", home / "data")
    assert (home / "data" / config_file.CHECKED_FILE).is_file()


def present(modules: set[str], names: set[str]) -> set[str]:
    """Which of `names` (packages or modules) were loaded, counting their submodules."""
    return {n for n in names if any(m == n or m.startswith(n + ".") for m in modules)}


def test_help_loads_no_command_and_no_library(home):
    code, modules, out = loaded_by(home, "--help")
    assert code == 0 and "pending" in out
    assert not present(
        modules,
        EVERYWHERE
        | {
            "httpx2",
            "cryptography",
            "jwt",
            "sqlite3",
            "regex",
            "tomllib",
            "poppy_tui.agent",
            "poppy_tui.safety.sanitize",
            "poppy_tui.safety.company_name",
            "poppy_tui.protocol",
            "poppy_tui.cli.commands",
            "poppy_tui.cli.companies_commands",
            # Nor what the listed commands run, nor typing, dataclasses or shutil (argparse's width lookup).
            "poppy_tui.cli.signin_commands",
            "poppy_tui.cli.identity_commands",
            "poppy_tui.cli.output",
            "poppy_tui.safety",
            "typing",
            "dataclasses",
            "shutil",
            "datetime",
        },
    )


@pytest.mark.parametrize("columns", [None, "60", "133", "0", "-4", "wide", ""])
def test_help_is_as_wide_as_shutil_says(monkeypatch, columns):
    import shutil

    from poppy_tui.cli.parser import _terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _terminal_columns() == shutil.get_terminal_size().columns


def test_help_wraps_to_columns(home, monkeypatch):
    remembered(home, monkeypatch)
    monkeypatch.setenv("COLUMNS", "50")
    code, _, out = loaded_by(home, "pending", "--help")
    assert code == 0 and "Oldest first." in out
    options = out[out.index("options:") : out.index("exit codes:")].splitlines()
    assert len(options) > 5 and max(len(line) for line in options) <= 50
    assert (
        max(len(line) for line in out[: out.index("options:")].splitlines()) <= 88
    )  # the description
    assert not present(
        loaded_by(home, "pending", "--json")[1], {"textwrap"}
    )  # wrapped only when shown


def test_pending_reads_the_store_without_the_network_stack(home, monkeypatch):
    remembered(home, monkeypatch)
    code, modules, out = loaded_by(home, "pending", "--json")
    assert code == 0 and json.loads(out) == {"operations": []}
    assert "poppy_tui.agent.store" in modules  # it did read the store
    assert not present(
        modules,
        EVERYWHERE
        | {
            "httpx2",
            "httpcore2",
            "anyio",
            "asyncio",
            "ssl",
            "cryptography",
            "jwt",
            "regex",
            "http_sfv",
            "email",
            "logging",
            "uuid",
            "secrets",
            "poppy_tui.agent.agent",
            "poppy_tui.protocol.discovery",
            "poppy_tui.safety.sanitize",
            "poppy_tui.safety.company_name",
            # Nor the records' dataclasses, typing, the protocol's parsers or the other parts of the store.
            "dataclasses",
            "shutil",
            "textwrap",
            "poppy_tui.agent.store.records",
            "poppy_tui.agent.store.store",
            "poppy_tui.agent.store.dispatch",
            "poppy_tui.agent.config",
            "poppy_tui.agent.config_model",
            "pydantic",
            "poppy_tui.protocol",
        },
    )


def test_pending_reads_a_checked_config_from_its_record(home, monkeypatch):
    from poppy_tui.agent import config_file

    config = home / "config" / "config.toml"
    config.write_text('grace_seconds = 0\nkey_storage = "file"\n')
    monkeypatch.setattr(config_file, "_SETTLED_NS", -(10**18))  # as if written minutes ago
    (home / "data").mkdir(exist_ok=True)
    config_file.read_settings(config, home / "data")
    assert (home / "data" / config_file.CHECKED_FILE).is_file()
    code, modules, out = loaded_by(home, "pending", "--json")
    assert code == 0 and json.loads(out) == {"operations": []}
    assert not present(modules, {"tomllib", "dataclasses", "typing", "pydantic", "pydantic_core"})
    config.write_text("grace_seconds = [\n")  # changed: parsed again, and refused
    code, modules, out = loaded_by(home, "pending", "--json")
    assert code == 2 and "is not valid TOML" in out and "tomllib" in modules
    config.write_text("grace_seconds = 4000\n")  # valid TOML: checked by the typed model
    code, modules, out = loaded_by(home, "pending", "--json")
    assert code == 2 and "config.toml:1: grace_seconds must be between" in out
    assert "poppy_tui.agent.config_model" in modules


def test_call_loads_one_transport_and_no_text_checks_for_a_json_get(home, strict):
    code, _, out = loaded_by(home, "companies", "add", strict.base_url)
    assert code == 0, out
    code, modules, out = loaded_by(home, "call", strict.base_url, "GET", "/bookings/bk_1")
    assert code == 0 and json.loads(out)["id"] == "bk_1", out
    assert "httpx2" in modules and "poppy_tui.agent.agent" in modules  # it did make the request
    # Printing a JSON answer needs no sanitiser: that (and regex) loads only for Company text.
    # The agent's client is httpx2, which imports its command-line client (click, rich, pygments)
    # only when that is run; httpx imported it whenever they were installed.
    assert not present(modules, EVERYWHERE | {"regex", "poppy_tui.safety.sanitize"})
    # Signed out: the access token is looked up in the store; no sign-in flow or parser loads.
    assert "poppy_tui.agent.signin.service" in modules
    assert not present(
        modules, {"poppy_tui.agent.signin.flows", "poppy_tui.protocol.signin", "authlib"}
    )
    assert "cryptography" in modules and "jwt" in modules  # the Session JWT, signed by PyJWT


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--home", "pending"],
        ["--home", "h", "pending", "--json"],
        ["--home=h", "history", "--limit", "3"],
        ["--config", "c.toml", "call", "shop", "GET", "/x", "--wait"],
        ["companies", "add", "shop.example"],
        ["companies", "list", "--json"],
        ["companies", "refresh"],
        ["companies", "remove", "shop"],
        ["tool", "shop", "cancel", "--args", "{}"],
        ["say", "shop", "hi", "--new"],
        ["show", "3", "--json"],
        ["locate", "db"],
        ["locate", "log", "--json"],
        ["config", "check"],
        ["config", "check", "other.toml", "--json", "--home", "h"],
        ["--demo", "--faults", "slow=1"],
        ["history", "--status", "pending,declined"],
        ["history", "--since", "2026-12-01"],
        ["send", "--watch"],
        ["mcp"],
        ["call", "shop", "GET", "/x", "--json"],
        ["identity", "init", "--client-id", "https://a.example/c.json"],
        ["identity", "show", "--json"],
        ["signin", "shop", "--device"],
        ["signout", "shop"],
        ["--demo", "--accounts"],
        ["mcp", "--http", "--listen", "[::1]:0", "--allow-host", "a", "--allow-host", "b"],
        ["mcp", "token"],
        ["mcp", "token", "--rotate", "--home", "h"],
        ["mcp", "--http", "--allow-remote", "--tls-cert", "c", "--tls-key", "k"],
    ],
)
def test_building_only_the_chosen_command_parses_alike(argv):
    from poppy_tui.cli.parser import build_parser

    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_mcp_token_reads_a_file_and_loads_no_server(home):
    code, modules, out = loaded_by(home, "mcp", "token")
    assert code == 0 and len(out.splitlines()[0]) >= 43, out
    assert "poppy_tui.mcp_server.http_token" in modules
    assert not present(
        modules,
        EVERYWHERE
        | {
            "uvicorn",
            "starlette",
            "httpx2",
            "anyio",
            "asyncio",
            "ssl",
            "poppy_tui.agent.agent",
            "poppy_tui.agent.store",
            "poppy_tui.mcp_server.server",
            "poppy_tui.mcp_server.http_gate",
            "poppy_tui.mcp_server.http_guard",
        },
    )


def test_mcp_help_loads_no_server_and_shows_no_token(home):
    loaded_by(home, "mcp", "token")
    token = (home / "data" / "mcp-http-token").read_text().strip()
    for argv in (["mcp", "--help"], ["mcp", "token", "--help"]):
        code, modules, out = loaded_by(home, *argv)
        assert code == 0 and "--rotate" in out and token not in out
        assert not present(
            modules,
            EVERYWHERE
            | {"uvicorn", "starlette", "httpx2", "poppy_tui.agent", "poppy_tui.mcp_server"},
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["approve", "1"],
        ["pending", "--yes"],
        ["--yes"],
        ["call", "shop"],
        ["history", "--limit", "0"],
        ["nope"],
        ["--", "pending"],
        ["locate", "elsewhere"],
        ["config"],
        ["config", "validate"],
    ],
)
def test_building_only_the_chosen_command_refuses_alike(argv, capsys):
    from poppy_tui.cli.parser import build_parser

    said = []
    for parser in (build_parser(argv), build_parser()):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(argv)
        said.append((stop.value.code, capsys.readouterr().err))
    assert said[0] == said[1]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--home", "h"],
        ["--home=h"],
        ["--config", "c.toml"],
        ["--home", "h", "--config=c.toml"],
        ["--home", "a", "--home", "b"],
        ["--home="],
        ["--config", "c.toml", "--home", "h"],
    ],
)
def test_a_bare_start_reads_its_options_as_the_parser_does(argv):
    from poppy_tui.cli.main import bare_start
    from poppy_tui.cli.parser import build_parser

    assert vars(bare_start(argv)) == vars(build_parser(argv).parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["pending"],
        ["--home"],
        ["--home", "-x"],
        ["--home", "h", "pending"],
        ["--demo"],
        ["--help"],
        ["--version"],
        ["--", "--home", "h"],
        ["--hom", "h"],
        ["--home", "h", "--yes"],
        ["-h"],
        ["--config"],
    ],
)
def test_anything_but_a_bare_start_goes_to_the_parser(argv):
    from poppy_tui.cli.main import bare_start

    assert bare_start(argv) is None
