"""`poppy-tui send` (sending without the TUI), against the demo Company as real programs. The
person is simulated by the TUI's write path (Store.approve), never by a command."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from cli_support import run_process, start_process
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.exit_codes import Exit
from tests.waiting import wait_until_blocking

EXCHANGE = ("POST", "/api/orders/ord_7Hk2/exchanges")
EXCHANGE_BODY = json.dumps({"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"})


def queue_exchange(cli, shop) -> int:
    run = cli("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY)
    assert run.code == Exit.PENDING, run.err
    with Store.open(resolve_paths(None).database) as store:
        return store.list_operations([Status.PENDING])[0].id


def approve(home, row: int, grace: float = 0.0) -> None:
    with Store.open(resolve_paths(home).database) as store:
        record = store.get_operation(row)
        store.approve(row, record.current.id, grace_seconds=grace)


def status_of(home, row: int) -> Status:
    with Store.open(resolve_paths(home).database) as store:
        return store.get_operation(row).status


def test_send_delivers_what_was_approved_then_exits(cli, home, shop):
    row = queue_exchange(cli, shop)
    approve(home, row, grace=1.0)  # still in its grace period when send starts: it waits for it
    run = run_process("send", "--json", home=home)
    assert run.code == Exit.OK, run.err
    assert f"sending 1 approved operation(s): {row}" in run.err
    (sent,) = json.loads(run.out)["operations"]
    assert (sent["id"], sent["status"]) == (row, "performed")
    assert f"operation {row} (Manzanita Outfitters, exc_5Rt2): performed by the Company" in run.err
    assert status_of(home, row) == Status.PERFORMED
    assert shop.context.shop.performed("exc_5Rt2") == 1


def test_send_with_nothing_approved_exits_at_once_and_sends_nothing(cli, home, shop):
    row = queue_exchange(cli, shop)  # pending: the person hasn't decided
    run = run_process("send", home=home)
    assert run.code == Exit.OK
    assert "nothing approved is waiting to be sent" in run.err
    assert status_of(home, row) == Status.PENDING
    assert shop.context.shop.performed("exc_5Rt2") == 0


def test_send_watch_sends_approvals_made_later_and_stops_on_sigterm(cli, home, shop):
    row = queue_exchange(cli, shop)
    process = start_process("send", "--watch", home=home)
    try:
        # It says it watches once it is ready (its SIGTERM handler in place), and is still running.
        said = ""
        while "watching for approvals to send" not in said:
            line = process.stderr.readline()
            assert line, f"the sender ended before watching: {said}"
            said += line
        assert process.poll() is None
        approve(home, row)
        wait_until_blocking(
            lambda: status_of(home, row) == Status.PERFORMED,
            timeout=30,
            step=0.05,
            describe="the watching sender never sent the approval",
        )
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
        err = said + err
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == Exit.OK, err
    assert "watching for approvals to send" in err
    assert f"operation {row} (Manzanita Outfitters, exc_5Rt2): performed by the Company" in err


def test_send_watch_stops_on_ctrl_c_with_exit_0_as_documented(home):
    import selectors

    process = start_process("send", "--watch", home=home)
    try:
        seen = ""
        with selectors.DefaultSelector() as selector:
            selector.register(process.stderr, selectors.EVENT_READ)
            deadline = time.monotonic() + 30
            while (
                "watching for approvals to send" not in seen
            ):  # its signal handlers are set by then
                assert time.monotonic() < deadline and process.poll() is None, seen
                if selector.select(timeout=1):  # raw reads: nothing can wait unseen in a buffer
                    seen += os.read(process.stderr.fileno(), 4096).decode()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == Exit.OK, seen + err
    assert "interrupted" not in err


# ---- scripting: --body/--json, --wait --timeout, history export, completion ---------------------


def test_old_call_json_body_spelling_still_works_with_a_deprecation_note(cli, home, shop):
    run = cli("call", shop.domain, *EXCHANGE, "--json", EXCHANGE_BODY)
    assert run.code == Exit.PENDING
    assert "'call --json BODY' is deprecated; use 'call --body BODY'" in run.err
    assert run.out.startswith("operation 1: needs your approval")


def test_call_json_prints_one_json_object_with_the_queued_operation(cli, home, shop):
    run = cli("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--json")
    assert run.code == Exit.PENDING
    assert "deprecated" not in run.err
    data = json.loads(run.out)
    assert data["outcome"] == "operation" and data["http_status"] == 403
    (operation,) = data["operations"]
    assert operation["operation_id"] == "exc_5Rt2" and operation["status"] == "pending"
    assert "operation 1: needs your approval" in run.err  # the human lines moved to stderr


def test_wait_timeout_gives_up_with_its_own_exit_code_and_leaves_the_operation_queued(
    cli, home, shop
):
    run = cli(
        "call",
        shop.domain,
        *EXCHANGE,
        "--body",
        EXCHANGE_BODY,
        "--wait",
        "--timeout",
        "0.5",
        "--json",
    )
    assert run.code == Exit.TIMED_OUT == 9
    assert "gave up waiting after 0.5s: operation 1 stays queued" in run.err
    data = json.loads(run.out)
    assert data["timed_out"] is True and data["operations"][0]["status"] == "pending"
    assert status_of(home, 1) == Status.PENDING
    again = cli(
        "tool",
        shop.domain,
        "cancel_subscription",
        "--args",
        '{"subscription_id": "sub_6Tc1"}',
        "--wait",
        "--timeout",
        "0.3",
    )
    assert again.code == Exit.TIMED_OUT and again.out == ""


def test_wait_timeout_that_is_not_reached_reports_the_outcome(cli, home, shop):
    import threading

    def person() -> None:
        with Store.open(resolve_paths(home).database) as store:
            rows = wait_until_blocking(
                lambda: store.list_operations([Status.PENDING]),
                timeout=20,
                step=0.05,
                describe="an operation to approve",
            )
            store.approve(rows[0].id, store.get_operation(rows[0].id).current.id, grace_seconds=0)

    threading.Thread(target=person, daemon=True).start()
    run = cli("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait", "--timeout", "60")
    assert run.code == Exit.OK, run.err
    assert "operation 1: performed by the Company" in run.err


def test_timeout_needs_wait(cli, home):
    run = cli("call", "shop", "GET", "/x", "--timeout", "5")
    assert run.code == Exit.USAGE and "--timeout works only with --wait" in run.err
    assert cli("call", "shop", "GET", "/x", "--wait", "--timeout", "0").code == Exit.USAGE


def test_history_exports_ndjson_and_csv_between_since_and_until(cli, home, shop):
    import csv
    import io

    queue_exchange(cli, shop)
    cli("tool", shop.domain, "cancel_subscription", "--args", '{"subscription_id": "sub_6Tc1"}')
    approve(home, 1)
    assert run_process("send", home=home).code == Exit.OK

    lines = cli("history", "--format", "ndjson").out.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == [1, 2]  # the performed one changed last
    performed = records[0]
    assert performed["status"] == "performed" and performed["attempts"] and performed["decisions"]
    assert performed["outcome"] is not None and performed["revisions"]

    rows = list(csv.DictReader(io.StringIO(cli("history", "--format", "csv").out)))
    assert [r["id"] for r in rows] == ["1", "2"]
    assert (
        rows[0]["status"] == "performed" and json.loads(rows[0]["terms"])["order_id"] == "ord_7Hk2"
    )
    assert json.loads(rows[0]["decisions"])[0]["decision"] == "approved"

    assert cli("history", "--format", "ndjson", "--since", "2999-01-01").out == ""
    assert cli("history", "--format", "ndjson", "--until", "2000-01-01T00:00:00Z").out == ""
    updated = records[1]["updated_at"]
    only_older = cli(
        "history", "--format", "ndjson", "--until", records[0]["updated_at"]
    ).out.splitlines()
    assert [json.loads(line)["id"] for line in only_older] == [2]
    since = cli("history", "--json", "--since", updated)
    assert {o["id"] for o in json.loads(since.out)["operations"]} == {1, 2}
    bad = cli("history", "--since", "last tuesday")
    assert bad.code == Exit.USAGE and "--since must be a date" in bad.err
    assert cli("history", "--json", "--format", "csv").code == Exit.USAGE


def test_csv_cells_that_a_spreadsheet_would_run_are_defused():
    from poppy_tui.cli.export import _cell

    assert _cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert _cell("fine\x1b[2J") == "fine\\x1b[2J"
    assert _cell({"a": "\u202e"}) == '{"a":"\\u202e"}'


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_come_from_the_parser(cli, shell):
    run = cli("completion", shell)
    assert run.code == Exit.OK
    for word in ("pending", "history", "mcp", "send", "--body", "--format"):
        assert word in run.out
    assert not re.search(
        r"(?<![\w-])(approve|decline|--yes)(?![\w-])", run.out
    )  # no such command or option


def test_every_request_and_listing_command_takes_json(cli, home):
    data = json.loads(cli("locate", "db", "--json").out)
    assert data["db"].endswith("poppy.db")
    for argv in (
        ["call", "x", "GET", "/"],
        ["tool", "x", "t"],
        ["say", "x", "hi"],
        ["companies", "add", "x"],
        ["send"],
        ["pending"],
        ["history"],
        ["show", "1"],
        ["companies", "list"],
        ["locate", "db"],
        ["companies", "refresh"],
        ["companies", "remove", "x"],
    ):
        assert "--json" in cli(*argv, "--help").out, argv


@pytest.mark.parametrize(
    ("argv", "expected", "noted"),
    [
        (
            ["call", "s", "POST", "/x", "--json", '{"a": 1}'],
            ["call", "s", "POST", "/x", "--body", '{"a": 1}'],
            True,
        ),
        (["call", "s", "POST", "/x", "--json={}"], ["call", "s", "POST", "/x", "--body={}"], True),
        (
            ["call", "s", "POST", "/x", "--json", "{bad"],
            ["call", "s", "POST", "/x", "--body", "{bad"],
            True,
        ),
        (["call", "s", "POST", "/x", "--json"], ["call", "s", "POST", "/x", "--json"], False),
        (
            ["call", "s", "GET", "/x", "--json", "--wait"],
            ["call", "s", "GET", "/x", "--json", "--wait"],
            False,
        ),
        (
            ["--home", "{h}", "call", "s", "GET", "/x", "--json"],
            ["--home", "{h}", "call", "s", "GET", "/x", "--json"],
            False,
        ),
        (
            ["say", "s", "--json", "[1]"],
            ["say", "s", "--json", "[1]"],
            False,
        ),  # only call ever took a body
        (
            ["call", "s", "POST", "/x", "--", "--json", "{}"],
            ["call", "s", "POST", "/x", "--", "--json", "{}"],
            False,
        ),
    ],
)
def test_only_the_old_call_body_spelling_is_rewritten(argv, expected, noted):
    from poppy_tui.cli.gate_parser import rewrite_deprecated

    notes: list[str] = []
    out = rewrite_deprecated(argv, notes.append)
    assert out == (expected + ["--old-body-spelling"] if noted else expected)
    assert bool(notes) == noted


def test_companies_add_refresh_and_remove_answer_in_json(cli, home, company):
    added = json.loads(cli("companies", "add", company.base_url, "--json").out)["company"]
    assert added["name"] == "Manzanita Outfitters" and added["domain"] == company.domain
    refreshed = cli("companies", "refresh", "--json")
    assert refreshed.code == Exit.OK
    (entry,) = json.loads(refreshed.out)["companies"]
    assert entry["id"] == added["id"] and entry["refresh"] in ("unchanged", "updated")
    removed = json.loads(cli("companies", "remove", "manzanita", "--json").out)["removed"]
    assert removed["id"] == added["id"]
    assert json.loads(cli("companies", "list", "--json").out)["companies"] == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_the_path_their_shell_reads(cli, shell):
    from poppy_tui.cli.completion import INSTALL

    lines = cli("completion", shell).out.splitlines()
    if shell == "zsh":
        assert lines[0] == "#compdef poppy-tui"  # zsh reads this line first
    assert f"# Install: {INSTALL[shell]}" in lines[:3]
    assert "bash_completion/" not in "\n".join(
        lines[:8]
    )  # shtab's own suggestion, a folder bash never reads
    assert "poppy-tui completion bash > ~/.local/share/bash-completion/completions/poppy-tui" in (
        Path("docs/cli.md").read_text(encoding="utf-8")
    )


def test_bash_completes_company_domains(cli, home, shop, tmp_path):
    """A real bash sources the script and completes `poppy-tui call <Tab>` with the domains this
    home knows, asking `poppy-tui` itself (here a stand-in program running this checkout)."""
    import shutil
    import subprocess
    import sys

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    script = tmp_path / "poppy-tui.bash"
    script.write_text(cli("completion", "bash").out)
    program = tmp_path / "bin" / "poppy-tui"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m poppy_tui "$@"\n')
    program.chmod(0o755)
    probe = (
        f"source {script}\n"
        "COMP_WORDS=(poppy-tui call ''); COMP_CWORD=2; COMP_LINE='poppy-tui call '; COMP_POINT=${#COMP_LINE}\n"
        "_shtab_poppy_tui poppy-tui '' call\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    env = {
        **os.environ,
        "PATH": f"{program.parent}:{os.environ['PATH']}",
        "POPPY_TUI_HOME": str(home),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    done = subprocess.run(
        [bash, "--norc", "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert shop.domain in done.stdout.split(), done.stdout
