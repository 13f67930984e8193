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


# ---- the account learnt from what the Company says: an ID token, userinfo, a JWT access token ----


async def device_sign_in(setup, email: str):
    """Device Sign-In as `email` at the Company's page (RFC 8628), polled without waiting."""
    import httpx

    async def no_wait(_seconds: float) -> None:
        return None

    flow = await setup.signins.begin(setup.company, "device", sleep=no_wait)
    await flow.start()
    async with httpx.AsyncClient(trust_env=False) as browser:
        done = await browser.post(
            flow.link.split("?")[0], data=setup.auth.approve_device_form(flow.user_code, email)
        )
    assert done.status_code == 200
    return await flow.wait()


def learnt(proof: str, email: str) -> str:
    from spec_auth_server import subject_of

    return subject_of(email) if proof == "jwt_access" else email


@pytest.mark.parametrize("proof", ["id_token", "userinfo", "jwt_access"])
async def test_a_device_sign_in_learns_the_account_where_the_company_says_it(setup, proof):
    """Device Sign-In names no account by itself; a Company that gives an ID token, a userinfo
    endpoint or JWT access tokens says which it is. Then another person's sign-in is another
    account, named with the owner in `show`, approving is refused, nothing is sent with their
    token, and the owner's own sign-in sends it without asking anything."""
    from poppy_tui.safety.account_owner import UNCONFIRMED_CODE

    setup.auth.account_proof = proof
    setup.auth.more_users[BOB["email"]] = BOB["password"]
    ada, bob = learnt(proof, USER["email"]), learnt(proof, BOB["email"])
    grant = await device_sign_in(setup, USER["email"])
    assert grant.account == ada
    op = await ordered(setup)
    assert op.account_owned and op.account == ada
    await setup.signins.sign_out(setup.company)
    assert (await device_sign_in(setup, BOB["email"])).account == bob
    shown = show_text(setup.agent.store, op)
    assert f"belongs to your account “{ada}” at Juniper Outfitters" in shown
    assert f"signed in there as “{bob}”" in shown and UNCONFIRMED_CODE not in shown
    with pytest.raises(StateError, match="sign in to Juniper Outfitters as"):
        setup.agent.approve(op.id, op.current.id)
    await setup.signins.sign_out(setup.company)
    await device_sign_in(setup, USER["email"])  # a new sign-in, but named: no question
    assert setup.agent.store.account_standing(op).standing == "same"
    setup.agent.approve(op.id, op.current.id)
    done = await setup.agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED
    assert setup.auth.approval_accounts == [USER["email"]]


async def test_an_opaque_device_sign_in_holds_the_approval_for_the_persons_word(setup):
    """The Company says nothing of the account (`account_proof` "none"): the owner approved, then
    signed out, and someone else signed in at the same Company. The approval is held, not spent
    on the other person's token; `show`, show --json and the MCP gate say so in the same words;
    the owner signs in again, says it is theirs, and it goes with their token."""
    from poppy_tui.cli.output import waiting_line
    from poppy_tui.safety.account_owner import unconfirmed_account_hold

    setup.auth.more_users[BOB["email"]] = BOB["password"]
    assert (await device_sign_in(setup, USER["email"])).account is None
    op = await ordered(setup)
    assert op.account_owned and op.account is None
    agent = setup.agent
    await setup.signins.sign_out(setup.company)
    await device_sign_in(setup, BOB["email"])
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and setup.auth.approval_accounts == []
    hold = unconfirmed_account_hold("Juniper Outfitters", None, None)
    assert f"Held: {hold}" in show_text(agent.store, waiting)
    assert record_json(agent.store, waiting)["account_held"] == hold
    assert record_json(agent.store, waiting)["account_standing"] == "unconfirmed"
    assert waiting_line(agent.store, waiting).startswith("waiting for you to say whose sign-in")
    from poppy_tui.mcp_server.results import operation_result

    meaning = operation_result(waiting, held="held: " + hold).structured_content["meaning"]
    assert meaning.endswith(f"held: {hold}")
    await setup.signins.sign_out(setup.company)
    await device_sign_in(setup, USER["email"])
    for _ in range(2):
        await agent.dispatch_once()
    assert setup.auth.approval_accounts == []  # a new sign-in: asked again, nothing sent
    agent.confirm_account(op.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and setup.auth.approval_accounts == [USER["email"]]


async def test_an_id_token_for_another_issuer_or_agent_or_expired_names_nothing(setup):
    """What an ID token says is taken only when it is this issuer's, for this agent, unexpired."""
    setup.auth.account_proof = "id_token"
    for change in ({"iss": "https://evil.test"}, {"aud": "someone-else"}, {"exp": 1}):
        import time

        import jwt as pyjwt

        token = pyjwt.encode(
            {
                "iss": setup.auth.issuer,
                "aud": setup.identity.client_id,
                "sub": "usr_1",
                "email": "mallory@evil.test",
                "exp": int(time.time()) + 600,
                **change,
            },
            setup.auth.signing_key,
            algorithm="ES256",
        )
        setup.auth.token_answer = {"id_token": token}
        grant = await device_sign_in(setup, USER["email"])
        assert grant.account is None, change
        await setup.signins.sign_out(setup.company)


async def direct_sign_in(setup, email: str):
    """Direct Sign-In as `email`: the Company's authorize page driven as a browser would, the
    redirect pasted back (complete), as when the browser can't come back here."""
    from urllib.parse import parse_qs, urlsplit

    import httpx

    flow = await setup.signins.begin(
        setup.company, "direct", scopes=["poppy:read", "orders"], open_browser=lambda _url: False
    )
    url = await flow.start()
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as browser:
        form = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        form |= {"email": email, "password": setup.auth.users()[email], "decision": "allow"}
        answer = await browser.post(url.split("?")[0], data=form)
    assert answer.status_code == 302
    return await flow.complete(answer.headers["location"])


@pytest.mark.parametrize("proof", ["none", "id_token"])
async def test_direct_sign_in_with_an_opaque_token_asks_and_with_an_id_token_knows(setup, proof):
    """Direct Sign-In: with an opaque token another person's sign-in holds the owner's approval
    for the person's word; with an ID token it is another named account, refused outright."""
    setup.auth.account_proof = proof
    setup.auth.more_users[BOB["email"]] = BOB["password"]
    first = await direct_sign_in(setup, USER["email"])
    assert first.account == (USER["email"] if proof == "id_token" else None)
    op = await ordered(setup)
    await setup.signins.sign_out(setup.company)
    await direct_sign_in(setup, BOB["email"])
    standing = setup.agent.store.account_standing(op)
    if proof == "none":
        assert standing.standing == "unconfirmed"
        setup.agent.approve(op.id, op.current.id)
        waiting = await setup.agent.wait_for_outcome(op.id, timeout=10)
        assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    else:
        assert (standing.standing, standing.current) == ("other", BOB["email"])
        with pytest.raises(StateError):
            setup.agent.approve(op.id, op.current.id)
    assert setup.auth.approval_accounts == []


async def test_a_userinfo_endpoint_off_the_companys_hosts_is_never_sent_the_token(setup):
    """The metadata names a userinfo endpoint on another host (`localhost`, not the issuer's
    127.0.0.1, though it reaches this very server): the access token never goes there, and the
    sign-in simply names no account."""
    setup.auth.account_proof = "userinfo"
    setup.auth.userinfo_url = f"http://localhost:{setup.auth.port}/oauth/userinfo"
    grant = await device_sign_in(setup, USER["email"])
    assert grant.account is None
    assert not any(s.path == "/oauth/userinfo" for s in setup.auth.received)
