"""A sign-in the Company revoked, and a sign-in made by another poppy-tui process, while an approval
waits for it (Ops 3). Against the spec-written Company with an authorization server
(spec_auth_server.py, its POST /orders needs sign-in and approval), with real processes: the
dispatcher the TUI runs (Agent.run_dispatcher) beside `poppy-tui signin` in another process, and
`poppy-tui send --watch` in another process beside `poppy-tui signin` in this one. The retry
window (1 s) is shorter than the time the person takes to sign in.

Its Device Sign-In names no account (opaque tokens, `account_proof` "none"), so a new sign-in
can't be shown to be the operation's account: the approval is then held, not sent, until the
person says in the review that it is (Agent.confirm_account, as `u` does); with an ID token the
account is known and it goes by itself (the last test)."""

from __future__ import annotations

import asyncio
import signal
import threading
from datetime import timedelta

import httpx
import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.connection import now_utc, parse_stamp
from poppy_tui.agent.store.sign_ins import get_sign_in
from poppy_tui.cli.exit_codes import Exit
from tests.cli.cli_support import run_process, start_process
from tests.waiting import wait_until, wait_until_blocking

WINDOW_SECONDS = 1  # the smallest retry window config.toml takes


@pytest.fixture
def home(registered_home):
    return registered_home(
        f'key_storage = "file"\nrequest_timeout_seconds = 5\ngrace_seconds = 0\nretry_window_seconds = {WINDOW_SECONDS}\n'
    )


def approve_device_when_asked(served) -> threading.Thread:
    """The person confirming the code on the Company's page, as soon as a sign-in asks for it."""
    known = set(served.devices)

    def work() -> None:
        fresh = wait_until_blocking(
            lambda: [e for code, e in list(served.devices.items()) if code not in known],
            timeout=30,
            describe="a device sign-in asking",
        )
        with httpx.Client(trust_env=False) as browser:
            browser.post(
                f"{served.base_url}/device", data=served.approve_device_form(fresh[0]["user_code"])
            )

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def sign_in_here(cli, served) -> str:
    thread = approve_device_when_asked(served)
    code, out, err = cli("signin", "Juniper")
    thread.join(10)
    assert code == Exit.OK, err
    return out


def unconfirmed(store: Store, op_row: int) -> bool:
    """Held for the person's word: signed in, but not shown to be the operation's account."""
    standing = store.account_standing(store.get_operation(op_row))
    return standing is not None and standing.standing == "unconfirmed"


def past_the_window(store: Store, op_row: int) -> bool:
    first = parse_stamp(store.attempts(op_row)[0].started_at)
    return now_utc() > first + timedelta(seconds=2 * WINDOW_SECONDS)


async def test_a_revoked_token_is_cleared_and_a_sign_in_in_another_process_sends_the_approval(
    home, served, cli
):
    # The CLI runs its own event loop: in a thread beside this test's.
    assert (await asyncio.to_thread(cli, "companies", "add", served.base_url)).code == Exit.OK
    await asyncio.to_thread(sign_in_here, cli, served)
    agent = Agent.open(resolve_paths(home))  # the TUI's agent: its dispatcher sends
    try:
        company = agent.find_company("Juniper")
        result = await agent.call_api(company, "POST", "/orders", {"item": "rain jacket"})
        assert result.outcome == "operation"
        op = agent.store.get_operation(result.operation_row)
        assert op.account_owned  # returned signed in: the account's (Ops 3)
        served.revoke_everything()  # the Company ends the sign-in; this process still holds its token
        agent.approve(op.id, op.current.id)
        stop = asyncio.Event()
        dispatcher = asyncio.create_task(agent.run_dispatcher(stop))
        try:
            # The approval met 401 invalid_token: kept, waiting for sign-in, and the dead sign-in cleared.
            await wait_until(
                lambda: agent.store.get_operation(op.id).waiting_sign_in is not None, timeout=30
            )
            assert served.order_answers[-1] == "invalid_token"
            assert get_sign_in(agent.store, company.id) is None
            await wait_until(lambda: past_the_window(agent.store, op.id), timeout=30)
            assert agent.store.get_operation(op.id).status == Status.SENDING
            # The person signs in again with the CLI, another process: a real sign-in, not "already signed in".
            thread = approve_device_when_asked(served)
            signed = await asyncio.to_thread(run_process, "signin", "Juniper", home=home)
            thread.join(10)
            assert signed.code == Exit.OK, signed.err
            assert signed.out.startswith("signed in to Juniper Outfitters"), signed.out
            # The running dispatcher notices the new sign-in through the store, but can't show it
            # to be the operation's account: held, and the person asked; nothing goes.
            await wait_until(lambda: unconfirmed(agent.store, op.id), timeout=30)
            assert served.order_answers[-1] == "invalid_token"
            agent.confirm_account(op.id)  # the person, in the review: this sign-in is mine
            await wait_until(
                lambda: agent.store.get_operation(op.id).status == Status.PERFORMED, timeout=30
            )
        finally:
            stop.set()
            await dispatcher
        assert served.orders_performed == 1
        assert [a.outcome for a in agent.store.attempts(op.id)] == ["sign_in_required", "performed"]
    finally:
        await agent.aclose()


def test_send_watch_sends_once_the_person_signs_in_with_the_cli(home, served, cli):
    assert cli("companies", "add", served.base_url).code == Exit.OK
    sign_in_here(cli, served)
    code, _, err = cli("call", "Juniper", "POST", "/orders", "--body", '{"item": "rain jacket"}')
    assert code == Exit.PENDING, err
    paths = resolve_paths(home)
    with Store.open(paths.database) as store:
        (row,) = [r.id for r in store.list_operations([Status.PENDING])]
    served.revoke_everything()
    approver = Agent.open(paths)  # the person's approval, as the TUI records it
    try:
        op = approver.store.get_operation(row)
        approver.approve(op.id, op.current.id)
    finally:
        asyncio.run(approver.aclose())
    watcher = start_process("send", "--watch", home=home)
    try:
        with Store.open(paths.database) as store:
            wait_until_blocking(
                lambda: store.get_operation(row).waiting_sign_in is not None, timeout=30
            )
            company_id = store.get_operation(row).company.id
            # The sign-in it could not renew is cleared, so `signin` below really signs in.
            wait_until_blocking(lambda: get_sign_in(store, company_id) is None, timeout=30)
            wait_until_blocking(lambda: past_the_window(store, row), timeout=30)
            out = sign_in_here(cli, served)
            assert out.startswith("signed in to Juniper Outfitters"), out
            wait_until_blocking(lambda: unconfirmed(store, row), timeout=30)
            store.confirm_account(row)  # the person's word, as the review records it
            wait_until_blocking(
                lambda: store.get_operation(row).status == Status.PERFORMED, timeout=30
            )
            assert [a.outcome for a in store.attempts(row)] == ["sign_in_required", "performed"]
    finally:
        watcher.send_signal(signal.SIGTERM)
        try:
            watcher.communicate(timeout=20)
        except Exception:  # noqa: BLE001 - never leave it running
            watcher.kill()
            watcher.communicate()
    assert served.orders_performed == 1


async def test_a_sign_in_made_elsewhere_replaces_the_token_this_process_holds(home, served, cli):
    """The TUI holds an access token; the person signs out and in again with the CLI (another
    process). The TUI's next request carries the new sign-in's token, not the one it held."""
    assert (await asyncio.to_thread(cli, "companies", "add", served.base_url)).code == Exit.OK
    await asyncio.to_thread(sign_in_here, cli, served)
    tui = Agent.open(resolve_paths(home))
    try:
        company = tui.find_company("Juniper")
        held = await tui.signins.access_token(company)
        assert held is not None and served.valid_access(held)
        assert (await asyncio.to_thread(cli, "signout", "Juniper")).code == Exit.OK  # revokes it
        await asyncio.to_thread(sign_in_here, cli, served)
        now = await tui.signins.access_token(company)
        assert now is not None and now != held and served.valid_access(now)
    finally:
        await tui.aclose()


async def _an_approved_order(home, served, cli) -> tuple[Agent, int]:
    assert (await asyncio.to_thread(cli, "companies", "add", served.base_url)).code == Exit.OK
    await asyncio.to_thread(sign_in_here, cli, served)
    agent = Agent.open(resolve_paths(home))
    result = await agent.call_api(
        agent.find_company("Juniper"), "POST", "/orders", {"item": "rain jacket"}
    )
    op = agent.store.get_operation(result.operation_row)
    return agent, op.id


async def test_a_refused_access_token_is_renewed_once_and_the_approval_goes(home, served, cli):
    """The neighbour of a revoked sign-in: the Company dropped the access token but not the grant
    (it expired early, say). The refresh token renews it; nobody has to sign in."""
    agent, row = await _an_approved_order(home, served, cli)
    try:
        served.access_tokens.clear()
        op = agent.store.get_operation(row)
        agent.approve(op.id, op.current.id)
        await agent.wait_for_outcome(row, timeout=20)
        done = await agent.wait_for_outcome(row, timeout=20)
        assert done.status == Status.PERFORMED, done.outcome_detail
        assert [a.outcome for a in agent.store.attempts(row)] == ["sign_in_required", "performed"]
        assert get_sign_in(agent.store, op.company.id) is not None  # still signed in
        assert served.orders_performed == 1
    finally:
        await agent.aclose()


async def test_a_renewed_token_refused_again_ends_the_sign_in_without_a_loop(home, served, cli):
    agent, row = await _an_approved_order(home, served, cli)
    try:
        served.refuse_tokens = True  # every token, even a freshly renewed one
        op = agent.store.get_operation(row)
        agent.approve(op.id, op.current.id)
        await until_async_settled(agent, row)
        for _ in range(5):
            await agent.dispatch_once()
        attempts = agent.store.attempts(row)
        assert [a.outcome for a in attempts] == ["sign_in_required", "sign_in_required"]
        waiting = agent.store.get_operation(row)
        assert waiting.status == Status.SENDING and waiting.waiting_sign_in
        assert (
            get_sign_in(agent.store, op.company.id) is None
        )  # the person is asked to sign in again
        assert served.order_answers.count("invalid_token") == 2 and served.orders_performed == 0
    finally:
        await agent.aclose()


async def until_async_settled(agent: Agent, row: int) -> None:
    """Dispatch until the approval has met the Company twice or gave up waiting for it."""

    async def met_twice_or_gave_up() -> bool:
        if len(agent.store.attempts(row)) >= 2 and not get_sign_in(
            agent.store, agent.store.get_operation(row).company.id
        ):
            return True
        await agent.dispatch_once()
        return False

    await wait_until(met_twice_or_gave_up, timeout=20, describe="two attempts, signed out")


def test_send_without_watch_reports_an_approval_waiting_for_sign_in_and_exits(home, served, cli):
    """`poppy-tui send` doesn't sit until the terms expire on an approval nothing can send: it
    says what to do and exits 8; after `signin`, the next `send` delivers it."""
    assert cli("companies", "add", served.base_url).code == Exit.OK
    sign_in_here(cli, served)
    code, _, err = cli("call", "Juniper", "POST", "/orders", "--body", '{"item": "rain jacket"}')
    assert code == Exit.PENDING, err
    paths = resolve_paths(home)
    served.revoke_everything()
    approver = Agent.open(paths)
    try:
        (row,) = [r.id for r in approver.store.list_operations([Status.PENDING])]
        approver.approve(row, approver.store.get_operation(row).current.id)
    finally:
        asyncio.run(approver.aclose())
    code, _, err = cli("send")
    assert code == Exit.SIGN_IN_REQUIRED, err
    assert (
        f"operation {row} (Juniper Outfitters, ord_juniper_1): waiting for sign-in: Sign in to Juniper Outfitters"
        in err
    )
    assert (
        "kept until its terms expire. Run: poppy-tui signin 'Juniper Outfitters', then poppy-tui send"
        in err
    )
    out = sign_in_here(cli, served)
    assert out.startswith("signed in to Juniper Outfitters"), out  # the revoked sign-in was cleared
    code, _, err = cli("send")  # a new sign-in, not shown to be the operation's account: held
    assert code == Exit.SIGN_IN_REQUIRED, err
    assert f"operation {row} (Juniper Outfitters, ord_juniper_1): waiting for you to say" in err
    assert "Open it in poppy-tui (its review) to say so, or sign in as its account" in err
    assert "to continue" not in err and served.orders_performed == 0
    with Store.open(paths.database) as store:
        store.confirm_account(row)
    code, _, err = cli("send")
    assert code == Exit.OK, err
    assert f"operation {row} (Juniper Outfitters, ord_juniper_1): performed by the Company" in err
    assert served.orders_performed == 1
