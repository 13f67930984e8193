"""The command line itself: help, version, usage errors, config errors, locate, import cost."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from cli_support import run_process, subprocess_env
from poppy_tui import __version__
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.parser import build_parser

COMMANDS = (
    "companies",
    "call",
    "tool",
    "say",
    "pending",
    "history",
    "show",
    "locate",
    "config",
    "signin",
    "signout",
    "identity",
    "mcp",
    "send",
    "completion",
)
HEAVY = (
    "textual",
    "rich",
    "mcp",
    "httpx",
    "httpx2",
    "httpcore",
    "uvicorn",
    "starlette",
    "keyring",
    "poppy_tui.ui",
)


def test_help_lists_every_command_and_the_exit_codes(cli):
    run = cli("--help")
    assert run.code == 0
    out = run.out
    for name in COMMANDS:
        assert name in out
    for code in (
        "0  done",
        "3  an operation waits",
        "4  declined",
        "5  not performed",
        "6  outcome unknown",
        "7  expired",
    ):
        assert code in out
    assert "no approve command and no --yes" in out


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if c != "companies"] + ["companies add", "companies list"]
)
def test_every_command_has_help(command, cli):
    run = cli(*command.split(), "--help")
    assert run.code == 0
    assert f"usage: poppy-tui {command}" in run.out


@pytest.mark.parametrize("command", ["", *COMMANDS, "companies add"])
def test_help_fits_an_80_column_terminal(command, home):
    # The exit codes and the commands' descriptions were written out (or filled) at 88 columns
    # and more, so an 80-column terminal broke them again mid-word.
    run = run_process(*command.split(), "--help", home=home, COLUMNS="80")
    assert run.code == 0, run.err
    too_long = [line for line in run.out.splitlines() if len(line) > 79]
    assert not too_long, too_long


def test_version(cli):
    run = cli("--version")
    assert (run.code, run.out.strip()) == (0, f"poppy-tui {__version__}")


def probe_result(probe: str, home):
    """Run `probe` (Python that prints JSON as its last line on stderr) in a fresh interpreter with
    `home`'s environment; the JSON it printed."""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_help_and_version_import_nothing_heavy():
    """--help and --version must stay instant: no Textual, mcp, httpx, or the store's users."""
    probe = (
        "import json, sys\n"
        "from poppy_tui.cli.main import main\n"
        "loaded = {}\n"
        "for argv in (['--help'], ['--version'], ['call', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    loaded[argv[0] + argv[-1]] = sorted(sys.modules)\n"
        "print(json.dumps(loaded), file=sys.stderr)\n"
    )
    for argv, modules in probe_result(probe, None).items():
        heavy = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith("poppy_tui.ui")]
        assert heavy == [], f"{argv} imported {heavy}"


def test_read_commands_do_not_load_the_tui(home):
    """A script listing the queue shouldn't pay for Textual or the MCP client."""
    probe = (
        "import json, sys\n"
        "from poppy_tui.cli.main import main\n"
        "codes = [main(['pending', '--json']), main(['history']), main(['companies', 'list', '--json'])]\n"
        "print(json.dumps([codes, sorted(sys.modules)]), file=sys.stderr)\n"
    )
    codes, modules = probe_result(probe, home)
    assert codes == [0, 0, 0]
    heavy = [
        m for m in modules if m.split(".")[0] in ("textual", "rich", "mcp", "uvicorn", "starlette")
    ]
    heavy += [m for m in modules if m.startswith("poppy_tui.ui")]
    assert heavy == []


def test_version_as_a_real_program():
    done = run_process("--version", home=None)
    assert (done.code, done.out.strip()) == (0, f"poppy-tui {__version__}")


# ---- nothing approves without a person -------------------------------------------------------


def test_there_is_no_command_that_decides(cli, home):
    run = cli("approve", "1")
    assert run.code == Exit.USAGE
    subcommands = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    )
    assert set(subcommands.choices) == set(COMMANDS)
    every_option = [o for a in build_parser()._actions for o in a.option_strings]
    assert not {"--yes", "-y", "--approve", "--always-allow", "--auto-approve"} & set(every_option)


@pytest.mark.parametrize(
    "argv",
    [
        ["approve", "1"],
        ["decline", "1"],
        ["--yes"],
        ["call", "shop", "POST", "/x", "--yes"],
        ["tool", "shop", "cancel", "--yes"],
        ["say", "shop", "hi", "--yes"],
        ["call", "shop", "POST", "/x", "-y"],
    ],
)
def test_yes_and_approve_are_rejected_as_a_real_program(argv, home):
    done = run_process(*argv, home=home)
    assert done.code == Exit.USAGE
    assert done.out == ""
    assert len(done.err.strip().splitlines()) == 1, done.err
    assert "Traceback" not in done.err


def test_yes_error_explains_where_approval_happens(home):
    done = run_process("call", "shop", "POST", "/x", "--yes", home=home)
    assert "only a person approves, in the TUI" in done.err


def test_options_are_not_abbreviated(cli, home):
    # allow_abbrev=False: `--wai` must not quietly mean --wait, or a future `--wa...` change meaning.
    assert cli("call", "shop", "GET", "/x", "--wai").code == Exit.USAGE


# ---- usage errors ----------------------------------------------------------------------------


def test_faults_need_demo(cli, home):
    run = cli("--faults", "slow=1")
    assert run.code == Exit.USAGE
    assert "--faults works only with --demo" in run.err


def test_accounts_need_demo(cli, home):
    run = cli("--accounts")
    assert run.code == Exit.USAGE
    assert "--accounts works only with --demo" in run.err
    run = cli("--no-accounts")
    assert run.code == Exit.USAGE
    assert "--no-accounts works only with --demo" in run.err
    assert cli("--demo", "--accounts", "--no-accounts").code == Exit.USAGE


def test_demo_cannot_be_combined_with_a_command(cli, home):
    assert cli("--demo", "pending").code == Exit.USAGE


def test_tui_needs_a_terminal(home):
    done = run_process(home=home)
    assert done.code == Exit.USAGE
    assert "needs a terminal" in done.err
    assert "Traceback" not in done.err


@pytest.mark.parametrize("limit", ["0", "-1", "many"])
def test_history_limit_must_be_positive(cli, home, limit):
    run = cli("history", "--limit", limit)
    assert run.code == Exit.USAGE
    assert "--limit" in run.err


def test_unknown_status(cli, home):
    run = cli("history", "--status", "pending,done")
    assert run.code == Exit.USAGE
    assert "unknown status 'done'" in run.err


def test_unknown_operation(cli, home):
    run = cli("show", "exc_nothing")
    assert run.code == Exit.ERROR
    assert "no operation 'exc_nothing'" in run.err


def test_unknown_company_in_history(cli, home):
    run = cli("history", "--company", "nowhere.example")
    assert run.code == Exit.ERROR
    assert "unknown company 'nowhere.example'" in run.err


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["call", "shop", "POST", "/api/x", "--json", "{item_id: 1}"], "--json"),
        (["call", "shop", "POST", "/api/x", "--json", ""], "--json"),
        (["call", "shop", "POST", "/api/x", "--body", "{item_id: 1}"], "--body"),
        (["tool", "shop", "cancel_subscription", "--args", "{'a': 1}"], "--args"),
    ],
)
def test_bad_json_is_a_usage_error(cli, home, argv, option):
    run = cli(*argv)
    assert run.code == Exit.USAGE
    assert f"{option} is not valid JSON" in run.err
    assert run.out == ""


def test_tool_args_must_be_an_object(cli, home):
    run = cli("tool", "shop", "cancel_subscription", "--args", "[1, 2]")
    assert run.code == Exit.USAGE
    assert "--args must be a JSON object" in run.err


def test_method_must_be_a_method(cli, home):
    run = cli("call", "shop", "PO ST", "/api/x")
    assert run.code == Exit.USAGE


@pytest.mark.parametrize(
    "target",
    [
        "http://shop.example",
        "http://10.0.0.1:8080",
        "ftp://shop.example",
        "https://user:pw@shop.example",
    ],
)
def test_companies_add_refuses_plain_http_off_loopback(cli, home, target):
    run = cli("companies", "add", target)
    assert run.code == Exit.USAGE
    assert "can't use" in run.err
    assert len(run.err.strip().splitlines()) == 1


def test_bad_input_as_a_real_program_is_one_line_without_traceback(home):
    for argv in (
        ["call", "shop", "POST", "/x", "--body", "{nope"],
        ["companies", "add", "http://shop.example"],
        ["history", "--status", "bogus"],
    ):
        done = run_process(*argv, home=home)
        assert done.code == Exit.USAGE, (argv, done.err)
        assert "Traceback" not in done.err
        assert len(done.err.strip().splitlines()) == 1, done.err


# ---- config --------------------------------------------------------------------------------


def test_broken_config_is_a_usage_error(cli, home):
    (home / "config" / "config.toml").write_text("grace_seconds = [\n")
    run = cli("pending")
    assert run.code == Exit.USAGE
    assert "config.toml: is not valid TOML" in run.err


def test_unknown_config_key_names_the_file_and_key(cli, home):
    (home / "config" / "config.toml").write_text("grace_second = 5\n")
    run = cli("pending")
    assert run.code == Exit.USAGE
    assert "unknown setting 'grace_second'" in run.err
    assert str(home / "config" / "config.toml") in run.err


def test_config_option_must_name_an_existing_file(cli, home, tmp_path):
    run = cli("--config", str(tmp_path / "missing.toml"), "pending")
    assert run.code == Exit.USAGE
    assert "no such config file" in run.err


def test_config_option_is_read_instead_of_the_home_config(cli, home, tmp_path):
    (home / "config" / "config.toml").write_text("this is not toml = = =\n")
    other = tmp_path / "other.toml"
    other.write_text("grace_seconds = 2\n")
    assert cli("--config", str(other), "pending").code == Exit.OK
    assert cli("pending", "--config", str(other)).code == Exit.OK


def test_config_error_as_a_real_program(home):
    (home / "config" / "config.toml").write_text("key_storage = 'floppy'\n")
    done = run_process("pending", home=home)
    assert done.code == Exit.USAGE
    assert "key_storage must be one of keyring, file" in done.err
    assert "Traceback" not in done.err


# ---- locate ---------------------------------------------------------------------------------


def test_locate_follows_home(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("POPPY_TUI_HOME", str(tmp_path / "env-home"))
    assert cli("locate", "db").out.strip() == str(tmp_path / "env-home" / "data" / "poppy.db")
    assert cli("--home", str(tmp_path / "h"), "locate", "config").out.strip() == str(
        tmp_path / "h" / "config" / "config.toml"
    )
    assert cli("locate", "data", "--home", str(tmp_path / "h")).out.strip() == str(
        tmp_path / "h" / "data"
    )


def test_locate_works_with_a_broken_config(cli, home):
    (home / "config" / "config.toml").write_text("[[[")
    run = cli("locate", "config")
    assert (run.code, run.out.strip()) == (0, str(home / "config" / "config.toml"))


def test_locate_config_names_the_config_option(cli, home, tmp_path):
    assert cli("--config", str(tmp_path / "x.toml"), "locate", "config").out.strip() == str(
        tmp_path / "x.toml"
    )


def test_locate_does_not_create_anything(cli, tmp_path):
    cli("--home", str(tmp_path / "fresh"), "locate", "db")
    assert not (tmp_path / "fresh").exists()


def test_home_option_overrides_environment(cli, home, tmp_path):
    other = tmp_path / "other-home"
    other.mkdir()
    assert cli("--home", str(other), "pending").code == 0
    assert (other / "data" / "poppy.db").exists()
