"""The account a real sign-in names is the account an operation returned signed in belongs to
(Ops §3, "while signed in to the same account"), against the spec-written Company with an
authorization server (spec_auth_server.py): its mediated sign-in takes two people's accounts, its
POST /orders needs sign-in and approval, and it records whose grant's token carried each
approval. Real HTTP on loopback, the agent's real sign-in service, store and keyring backend."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.agent.store.connection import StateError
from poppy_tui.cli.output import record_json, show_text

from spec_auth_server import USER

BOB = {"email": "bob@juniper.test", "password": "another horse battery staple"}


async def sign_in(setup, who: dict[str, str]) -> None:
    flow = await setup.signins.begin(setup.company, "mediated")
    grant = await flow.submit({"email": who["email"], "password": who["password"]})
    assert grant.account == who["email"]


async def ordered(setup):
    result = await setup.agent.call_api(setup.company, "POST", "/orders", {"item": "rain jacket"})
    assert result.outcome == "operation"
    return setup.agent.store.get_operation(result.operation_row)


async def test_the_account_a_sign_in_named_is_recorded_and_shown(setup):
    await sign_in(setup, USER)
    op = await ordered(setup)
    assert op.account_owned and op.account == USER["email"]
    shown = show_text(setup.agent.store, op)
    assert f"Belongs to: your account “{USER['email']}” (returned signed in as it" in shown
    assert "Can't be approved now" not in shown
    as_json = record_json(setup.agent.store, op)
    assert (as_json["account_owned"], as_json["account"]) == (True, USER["email"])
    assert as_json["signed_in_as_other_account"] is None


def cli_show(capsys, monkeypatch, tmp_path, *args: str):
    """`poppy-tui show ...` in this process, on the setup agent's home (tmp_path/config, tmp_path/data)."""
    from tests.cli.cli_support import run_main

    monkeypatch.setenv("POPPY_TUI_HOME", str(tmp_path))
    return run_main(capsys, "show", *args)


async def test_show_and_show_json_name_the_account_and_the_other_one_signed_in(
    setup, capsys, monkeypatch, tmp_path
):
    import json

    setup.auth.more_users[BOB["email"]] = BOB["password"]
    await sign_in(setup, USER)
    op = await ordered(setup)
    await setup.signins.sign_out(setup.company)
    await sign_in(setup, BOB)
    text = cli_show(capsys, monkeypatch, tmp_path, str(op.id))
    assert text.code == 0, text.err
    assert f"Belongs to: your account “{USER['email']}”" in text.out
    assert (
        f"Can't be approved now: this operation belongs to your account “{USER['email']}”"
        in text.out
    )
    as_json = cli_show(capsys, monkeypatch, tmp_path, str(op.id), "--json")
    assert as_json.code == 0, as_json.err
    shown = json.loads(as_json.out)["operation"]
    assert (shown["account_owned"], shown["account"]) == (True, USER["email"])
    assert shown["signed_in_as_other_account"] == BOB["email"]


async def test_signed_in_as_another_account_it_is_refused_then_held_then_sent_as_its_own(setup):
    setup.auth.more_users[BOB["email"]] = BOB["password"]
    await sign_in(setup, USER)
    op = await ordered(setup)
    agent = setup.agent
    await setup.signins.sign_out(setup.company)
    await sign_in(setup, BOB)
    shown = show_text(agent.store, op)
    assert (
        f"Can't be approved now: this operation belongs to your account “{USER['email']}”" in shown
    )
    assert f"signed in there as “{BOB['email']}”" in shown
    assert record_json(agent.store, op)["signed_in_as_other_account"] == BOB["email"]
    with pytest.raises(StateError, match="sign in to Juniper Outfitters as"):
        agent.approve(op.id, op.current.id)
    # Approved while signed in as its account, then Bob signs in before it is sent: held, not sent.
    await setup.signins.sign_out(setup.company)
    await sign_in(setup, USER)
    agent.approve(op.id, op.current.id)
    await setup.signins.sign_out(setup.company)
    await sign_in(setup, BOB)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert f"waiting for sign-in as “{USER['email']}”" in waiting.waiting_sign_in
    assert setup.auth.approval_accounts == [] and setup.auth.orders_performed == 0
    await setup.signins.sign_out(setup.company)
    await sign_in(setup, USER)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and setup.auth.orders_performed == 1
    assert setup.auth.approval_accounts == [USER["email"]]  # Bob's token never carried it
