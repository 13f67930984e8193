"""call, tool, say and companies against the demo Company over real loopback HTTP, in this
process and as real programs. The person is simulated the only way a person decides: by
the TUI's write path, Store.approve / Store.decline, never through a CLI command."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from cli_support import run_process, start_process
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.exit_codes import Exit
from tests.waiting import wait_until_blocking

EXCHANGE = ("POST", "/api/orders/ord_7Hk2/exchanges")
EXCHANGE_BODY = json.dumps({"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"})
CANCEL_ARGS = json.dumps({"subscription_id": "sub_6Tc1"})
MOVE_FITTING = "Could you move my fitting appointment to tomorrow at 2pm?"


def database(home: Path) -> Path:
    return resolve_paths(home).database


def operations(home: Path):
    with Store.open(database(home)) as store:
        return store.list_operations(newest_first=False)


def decide(home: Path, approve: bool = True, count: int = 1, timeout: float = 30.0) -> list[int]:
    """Be the person at the TUI: wait for `count` open operations, then decide each."""
    with Store.open(database(home)) as store:
        rows = wait_until_blocking(
            lambda: rows if len(rows := store.list_operations([Status.PENDING])) >= count else [],
            timeout=timeout,
            describe=lambda: f"{count} pending operations (of {len(store.list_operations())})",
        )
        for row in rows:
            record = store.get_operation(row.id)
            if approve:
                store.approve(record.id, record.current.id, grace_seconds=0)
            else:
                store.decline(record.id, record.current.id)
        return [row.id for row in rows]


def decide_in_background(home: Path, approve: bool = True, count: int = 1) -> threading.Thread:
    errors: list[BaseException] = []

    def person() -> None:
        try:
            decide(home, approve, count)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the test through the thread's `errors`
            errors.append(exc)

    thread = threading.Thread(target=person, daemon=True)
    thread.errors = errors  # type: ignore[attr-defined]
    thread.start()
    return thread


# ---- companies ----------------------------------------------------------------------------


def test_companies_add_and_list(cli, home, company):
    run = cli("companies", "add", company.base_url)
    assert run.code == Exit.OK, run.err
    assert f"Manzanita Outfitters ({company.domain}) at {company.base_url}" in run.out
    assert "operations v2: yes; interfaces: api, mcp, conversation" in run.out
    listed = json.loads(cli("companies", "list", "--json").out)["companies"]
    assert len(listed) == 1
    entry = listed[0]
    assert entry["name"] == "Manzanita Outfitters"
    assert entry["domain"] == company.domain
    assert entry["supports_operations"] is True
    assert all(entry["interfaces"][kind] for kind in ("api", "mcp", "conversation"))


def test_companies_add_again_updates_rather_than_duplicates(cli, shop):
    assert cli("companies", "add", shop.base_url).code == Exit.OK
    assert len(json.loads(cli("companies", "list", "--json").out)["companies"]) == 1


def test_companies_add_unreachable_loopback_is_an_error(cli, home):
    run = cli("companies", "add", "http://127.0.0.1:9")
    assert run.code == Exit.ERROR
    assert len(run.err.strip().splitlines()) == 1
    assert "Traceback" not in run.err


def test_unknown_company(cli, shop):
    run = cli("call", "shop.invalid", "GET", "/api/orders")
    assert run.code == Exit.ERROR
    # Known Companies are listed with their domains, as everywhere a name is shown.
    assert "unknown company 'shop.invalid' (known: Manzanita Outfitters (127.0.0.1:" in run.err
    assert "poppy-tui companies add" in run.err


def test_unknown_company_as_a_real_program(home, shop):
    for argv in (
        ["call", "nope", "GET", "/api/orders"],
        ["tool", "nope", "list_orders"],
        ["say", "nope", "hi"],
    ):
        done = run_process(*argv, home=home)
        assert done.code == Exit.ERROR, done.err
        assert "unknown company 'nope'" in done.err
        assert "Traceback" not in done.err


# ---- requests that are simply answered -------------------------------------------------------


def test_call_get_prints_the_json_answer(cli, shop):
    run = cli("call", shop.domain, "GET", "/api/orders/ord_7Hk2")
    assert run.code == Exit.OK, run.err
    assert json.loads(run.out)["order_id"] == "ord_7Hk2"


def test_call_by_company_name(cli, shop):
    run = cli("call", "manzanita outfitters", "get", "/api/orders")
    assert run.code == Exit.OK, run.err


def test_call_refuses_urls_off_the_company(cli, shop):
    run = cli(
        "call",
        shop.domain,
        "POST",
        "https://elsewhere.example/api/orders/ord_7Hk2/exchanges",
        "--body",
        "{}",
    )
    assert run.code == Exit.ERROR
    assert "poppy-tui sends a Company's requests only to the Company" in run.err
    assert len(run.err.strip().splitlines()) == 1


def test_call_error_answer_is_not_performed(cli, shop):
    run = cli("call", shop.domain, "GET", "/api/orders/ord_nope")
    assert run.code == Exit.NOT_PERFORMED, run.err
    assert "not performed (HTTP 404)" in run.err
    assert json.loads(run.out)["error"] == "order_not_found"


def test_tool_that_needs_no_approval(cli, shop):
    run = cli("tool", shop.domain, "get_order", "--args", '{"order_id": "ord_7Hk2"}')
    assert run.code == Exit.OK, run.err
    assert "ord_7Hk2" in run.out


def test_say_prints_the_company_agent_indented(cli, shop):
    run = cli("say", shop.domain, "Where are my orders?")
    assert run.code == Exit.OK, run.err
    lines = run.out.splitlines()
    assert lines[0] == "message from Manzanita Outfitters:"
    assert lines[1].startswith("  Your orders: ord_7Hk2")


# ---- requests that return an operation -----------------------------------------------------


def test_call_returning_an_operation_exits_3_and_queues_it(cli, home, shop):
    run = cli("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY)
    assert run.code == Exit.PENDING, run.err
    [row] = operations(home)
    assert (row.status, row.interface, row.operation_id) == (Status.PENDING, "api", "exc_5Rt2")
    lines = run.out.splitlines()
    assert lines[0] == f"operation {row.id}: needs your approval: open poppy-tui to review"
    assert lines[1].startswith(
        "  Manzanita Outfitters (exc_5Rt2): Exchange the Stormline Jacket (M)"
    )
    assert shop.state.performed("exc_5Rt2") == 0


def test_tool_returning_an_operation_exits_3(cli, home, shop):
    run = cli("tool", shop.domain, "cancel_subscription", "--args", CANCEL_ARGS)
    assert run.code == Exit.PENDING, run.err
    [row] = operations(home)
    assert (row.status, row.interface) == (Status.PENDING, "mcp")
    assert f"operation {row.id}: needs your approval" in run.out
    assert shop.state.performed(row.operation_id) == 0


def test_say_returning_an_operation_exits_3(cli, home, shop):
    run = cli("say", shop.domain, MOVE_FITTING)
    assert run.code == Exit.PENDING, run.err
    [row] = operations(home)
    assert (row.status, row.interface) == (Status.PENDING, "conversation")
    assert run.out.startswith("message from Manzanita Outfitters:\n  ")
    assert f"operation {row.id}: needs your approval: open poppy-tui to review" in run.out


def test_say_continues_the_conversation_and_new_terms_replace_the_old(cli, home, shop):
    first = cli(
        "say", shop.domain, "I'd like to exchange my Stormline jacket for the insulated one"
    )
    assert first.code == Exit.PENDING, first.err
    [row] = operations(home)
    assert (row.operation_id, row.revision_count) == ("exc_5Rt2", 1)
    assert "Stormline Insulated Jacket (M)" in row.summary
    again = cli("say", shop.domain, "size L instead")
    assert again.code == Exit.PENDING, again.err
    [row] = operations(home)
    assert (row.operation_id, row.revision_count, row.status) == ("exc_5Rt2", 2, Status.PENDING)
    assert "Stormline Insulated Jacket (L)" in row.summary
    assert f"operation {row.id}: needs your approval" in again.out


def test_say_new_starts_another_conversation(cli, home, shop):
    assert (
        cli(
            "say", shop.domain, "I'd like to exchange my Stormline jacket for the insulated one"
        ).code
        == 3
    )
    fresh = cli("say", shop.domain, "size L instead", "--new")
    # Out of context, "size L instead" is not an exchange the Company can act on.
    assert fresh.code == Exit.OK, fresh.err
    [row] = operations(home)
    assert row.revision_count == 1


def test_pending_operation_as_a_real_program(home, shop):
    done = run_process("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, home=home)
    assert done.code == Exit.PENDING, done.err
    number = done.out.split()[1].rstrip(":")
    listed = json.loads(run_process("pending", "--json", home=home).out)["operations"]
    assert [(str(op["id"]), op["status"], op["operation_id"]) for op in listed] == [
        (number, "pending", "exc_5Rt2")
    ]
    shown = run_process("show", number, home=home)
    assert shown.code == Exit.OK
    assert "Status: pending: needs your approval: open poppy-tui to review" in shown.out
    assert f"Company: Manzanita Outfitters ({shop.domain})" in shown.out


def test_key_file_opt_in_from_the_environment(home, company):
    """Headless, no keyring: POPPY_TUI_KEY_STORAGE=file is the documented opt-in, config untouched."""
    (home / "config" / "config.toml").write_text("")
    keyless = {
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "POPPY_TUI_KEY_STORAGE": "file",
    }
    assert run_process("companies", "add", company.base_url, home=home, **keyless).code == Exit.OK
    done = run_process(
        "call", company.domain, *EXCHANGE, "--body", EXCHANGE_BODY, home=home, **keyless
    )
    assert done.code == Exit.PENDING, done.err
    assert (home / "data" / "agent-key.pem").exists()


def test_hostile_summary_is_sanitised_on_the_terminal(cli, home, start):
    hostile = start("hostile")
    assert cli("companies", "add", hostile.base_url).code == Exit.OK
    run = cli("call", hostile.domain, *EXCHANGE, "--body", EXCHANGE_BODY)
    assert run.code == Exit.PENDING
    for text in (run.out, run.err, cli("show", "exc_5Rt2").out, cli("pending").out):
        assert (
            "\x1b" not in text
            and "\x07" not in text
            and "\x9b" not in text
            and "\u202e" not in text
        )
    assert "\\x1b]8;;https://evil.example" in cli("show", "exc_5Rt2").out
    data = json.loads(cli("show", "exc_5Rt2", "--json").out)["operation"]
    assert "\x1b]8;;https://evil.example" in data["current"]["summary"]


# ---- --wait: the person decides in the TUI, the CLI reports --------------------------------


def test_wait_returns_after_approval_with_the_final_answer(cli, home, shop):
    person = decide_in_background(home, approve=True)
    run = cli("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait")
    person.join(10)
    assert not person.errors
    assert run.code == Exit.OK, run.err
    assert "waiting for a decision in poppy-tui" in run.err
    assert "operation 1: performed by the Company\n" in run.err
    final = json.loads(run.out)  # the Company's final response body, as `call` prints bodies
    assert (final["operation_id"], final["status"], final["replacement_sku"]) == (
        "exc_5Rt2",
        "completed",
        "stormline-insulated-m",
    )
    assert shop.state.performed("exc_5Rt2") == 1
    [row] = operations(home)
    assert row.status == Status.PERFORMED


def test_wait_after_decline_exits_4_and_sends_nothing(cli, home, shop):
    person = decide_in_background(home, approve=False)
    run = cli("tool", shop.domain, "cancel_subscription", "--args", CANCEL_ARGS, "--wait")
    person.join(10)
    assert run.code == Exit.DECLINED, run.err
    assert "declined; nothing was sent" in run.err
    [row] = operations(home)
    assert row.status == Status.DECLINED
    assert shop.state.performed(row.operation_id) == 0


def test_say_wait_after_approval(cli, home, shop):
    person = decide_in_background(home, approve=True)
    run = cli("say", shop.domain, MOVE_FITTING, "--wait")
    person.join(10)
    assert run.code == Exit.OK, run.err
    proposal, final = run.out.split("message from Manzanita Outfitters:\n")[1:]
    assert proposal.startswith("  I can move your jacket fitting")
    assert final.startswith("  Done: your fitting is now on")
    # The outcome is said once: the Company's message above, then a short status line.
    assert "Done: your fitting" not in run.err
    assert "performed by the Company\n" in run.err
    [row] = operations(home)
    assert row.status == Status.PERFORMED
    assert shop.state.performed(row.operation_id) == 1


def test_wait_on_an_expired_operation_exits_7(cli, home, start):
    late = start("expired")
    assert cli("companies", "add", late.base_url).code == Exit.OK
    run = cli("call", late.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait")
    assert run.code == Exit.EXPIRED, run.err
    assert "expired before it was approved" in run.err
    assert late.state.performed("exc_5Rt2") == 0


def test_wait_as_a_real_program_decided_by_another_process(home, shop, cli):
    agent = start_process(
        "call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait", home=home
    )
    try:
        decide(home, approve=True)
        out, err = agent.communicate(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == Exit.OK, err
    assert json.loads(out)["status"] == "completed"
    assert "operation 1: needs your approval: open poppy-tui to review" in err
    assert shop.state.performed("exc_5Rt2") == 1


def test_ctrl_c_stops_waiting_and_leaves_the_operation_queued(home, shop):
    import signal

    agent = start_process(
        "tool", shop.domain, "cancel_subscription", "--args", CANCEL_ARGS, "--wait", home=home
    )
    try:
        line = ""
        while "waiting for a decision" not in line:
            line = agent.stderr.readline()
            assert line, "the agent exited before waiting"
        agent.send_signal(signal.SIGINT)
        out, err = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == Exit.INTERRUPTED, err
    assert "anything queued stays in the queue" in err
    assert "Traceback" not in err
    [row] = operations(home)
    assert row.status == Status.PENDING


def test_wait_survives_a_dropped_answer_without_a_second_perform(cli, home, start):
    flaky = start("drop_after_perform=1,busy=1")
    assert cli("companies", "add", flaky.base_url).code == Exit.OK
    person = decide_in_background(home, approve=True)
    run = cli("call", flaky.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait")
    person.join(10)
    assert run.code == Exit.OK, run.err
    assert flaky.state.performed("exc_5Rt2") == 1


# ---- many processes, one queue ---------------------------------------------------------------

PERSON = """
import asyncio
from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from tests.waiting import wait_until


async def main():
    # The TUI: the person approves what waits, and the TUI's dispatcher runs as well.
    paths = resolve_paths()
    agent = Agent.open(paths, load_config(paths))
    stop = asyncio.Event()
    dispatcher = asyncio.create_task(agent.run_dispatcher(stop))
    for row in agent.store.list_operations([Status.PENDING]):
        record = agent.store.get_operation(row.id)
        agent.store.approve(record.id, record.current.id, grace_seconds=0)
    await wait_until(
        lambda: all(row.status.is_final for row in agent.store.list_operations()),
        timeout=80,
        describe="every operation settled",
    )
    stop.set()
    await dispatcher
    await agent.aclose()


asyncio.run(main())
"""


@pytest.mark.slow
def test_two_agents_and_the_tui_share_one_queue_without_double_sends(home, shop, cli):
    import subprocess
    import sys

    from cli_support import subprocess_env

    agents = [
        start_process("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait", home=home),
        start_process("call", shop.domain, *EXCHANGE, "--body", EXCHANGE_BODY, "--wait", home=home),
        start_process(
            "tool", shop.domain, "cancel_subscription", "--args", CANCEL_ARGS, "--wait", home=home
        ),
        start_process(
            "tool", shop.domain, "cancel_subscription", "--args", CANCEL_ARGS, "--wait", home=home
        ),
    ]
    try:
        # Every agent has queued its request before the person looks, so no request can
        # arrive after the action was performed and be refused for that.
        for agent in agents:
            line = ""
            while "waiting for a decision" not in line:
                line = agent.stderr.readline()
                assert line, f"agent exited early with {agent.wait()}"
        # The person's script imports tests/waiting.py: the folder above tests/ on its path too
        # (after the package's, which is what it runs).
        env = subprocess_env(home)
        env["PYTHONPATH"] += os.pathsep + str(Path(__file__).resolve().parents[2])
        person = subprocess.run(
            [sys.executable, "-c", PERSON],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert person.returncode == 0, person.stderr
        results = [(agent.wait(timeout=60), *agent.communicate(timeout=60)) for agent in agents]
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
    for code, _out, err in results:
        assert code == Exit.OK, err
    rows = operations(home)
    assert sorted(row.interface for row in rows) == ["api", "mcp"]
    assert all(row.status == Status.PERFORMED for row in rows)
    for row in rows:
        assert shop.state.performed(row.operation_id) == 1
