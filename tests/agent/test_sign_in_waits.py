"""Approvals that wait for sign-in keep until the terms expire, and every approval goes in the
Session its revision was returned in (Ops 3). Against Birch Market (tests/companies/
account_company.py, written from the spec alone), over real HTTP, API and conversation."""

from __future__ import annotations

from datetime import timedelta

import jwt

from poppy_tui.agent.store import Status
from poppy_tui.agent.store.connection import now_utc, parse_stamp
from tests.companies.account_company import NAME
from tests.signed_in import Tokens
from tests.waiting import wait_until

# Shorter than the time the person takes to sign in below: the wait must not count against it.
TINY_WINDOW = 0.3


async def setup(make_agent, birch, token: str | None, **config):
    agent = make_agent(**config)
    tokens = Tokens(token)
    agent.access_token_source = tokens
    company = await agent.add_company(birch.base_url)
    return agent, company, tokens


async def wait_past_the_window(agent, op_row: int, window: float) -> None:
    """Until the retry window, counted from the first attempt, is over (short polls, no fixed pause);
    the dispatcher runs meanwhile, as the TUI's would."""
    first = parse_stamp(agent.store.attempts(op_row)[0].started_at)
    past = first + timedelta(seconds=window * 2)

    async def dispatched_past_it() -> bool:
        await agent.dispatch_once()
        return now_utc() > past

    await wait_until(dispatched_past_it, timeout=window * 2 + 30, describe=f"the clock past {past}")


def sid_of(token: str) -> str:
    return jwt.decode(token, options={"verify_signature": False})["sid"]


# ---- the wait for sign-in lasts as long as the terms (A34, X6) --------------------------------------


async def test_a_sign_in_after_the_retry_window_still_sends_the_approval(make_agent, birch):
    agent, company, tokens = await setup(
        make_agent, birch, "tok_alice", retry_window_seconds=TINY_WINDOW
    )
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = None  # the person signed out
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=5)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    await wait_past_the_window(agent, op.id, TINY_WINDOW)
    still = agent.store.get_operation(op.id)
    assert (
        still.status == Status.SENDING and still.waiting_sign_in
    )  # kept: the terms are still valid
    tokens.token = "tok_alice"  # signed in again, long after the window
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.performed["ord_birch_1"] == 1
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["sign_in_required", "performed"]


async def test_after_sign_in_the_window_counts_again_from_the_next_send(make_agent, birch):
    """The neighbour: once signed in, a Company that can't be reached still ends the resending
    after the window, with the true reason, counted from the send after sign-in."""
    agent, company, tokens = await setup(
        make_agent, birch, "tok_alice", retry_window_seconds=TINY_WINDOW
    )
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = None
    agent.approve(op.id, op.current.id)
    await agent.wait_for_outcome(op.id, timeout=5)
    await wait_past_the_window(agent, op.id, TINY_WINDOW)
    birch.stop()  # gone: nothing can be delivered now
    tokens.token = "tok_alice"
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.NOT_PERFORMED
    assert "could not be reached" in done.outcome_detail
    attempts = agent.store.attempts(op.id)
    assert attempts[0].outcome == "sign_in_required" and {a.outcome for a in attempts[1:]} == {
        "not_sent"
    }
    assert len(attempts) >= 2  # sent again after sign-in, not cut off by the wait before it


async def test_a_sign_in_request_answering_an_approval_message_waits_for_sign_in(make_agent, birch):
    agent, company, tokens = await setup(
        make_agent, birch, "tok_alice", retry_window_seconds=TINY_WINDOW
    )
    said = await agent.say(company, "Please order 2 kg of oats")
    (op_row,) = said.operation_rows
    op = agent.store.get_operation(op_row)
    assert op.account_owned
    tokens.token = None  # signed out before approving
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    # Not "outcome unknown": the Company asked for sign-in (an `authorization` event) and said so in words.
    assert waiting.status == Status.SENDING, waiting.outcome_detail
    assert (
        waiting.waiting_sign_in
        == f"waiting for sign-in: Sign in to {NAME} to continue (scopes orders)"
    )
    assert "ord_birch_1" not in birch.state.performed
    await wait_past_the_window(agent, op.id, TINY_WINDOW)
    tokens.token = "tok_alice"
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.performed["ord_birch_1"] == 1
    attempts = agent.store.attempts(op.id)
    assert [a.outcome for a in attempts] == ["sign_in_required", "performed"]
    # A message sent again with the same ID gets its first answer, this sign-in request (spec
    # 8.3): after sign-in the approval went in a new message.
    assert attempts[0].idempotency_key != attempts[1].idempotency_key
    approvals = [
        key
        for key in birch.state.answered_messages
        if key[1] in {a.idempotency_key for a in attempts}
    ]
    assert len(approvals) == 2


async def test_a_structured_answer_wins_over_a_sign_in_event_in_the_same_reply(make_agent, birch):
    """The neighbour: an approval the Company performed and reported done, with a sign-in request
    beside it, is performed: the structured reply is the outcome, not the request to sign in."""
    agent, company, _ = await setup(make_agent, birch, "tok_alice")
    said = await agent.say(company, "Please order 2 kg of oats")
    (op_row,) = said.operation_rows
    op = agent.store.get_operation(op_row)
    birch.state.sign_in_event_when_done = True
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=10)
    assert done.status == Status.PERFORMED and done.waiting_sign_in is None
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["performed"]
    assert birch.state.performed["ord_birch_1"] == 1


# ---- the right Session (A33, A43) ---------------------------------------------------------------------


async def test_the_approval_of_a_revision_from_a_later_session_goes_in_that_session(
    make_agent, birch
):
    """Probe P15: rev 1 in S1; the Company ends S1; the same request in S2 gets rev 2 of the same
    operation; its approval carries S2's sid (the Company would not take it in S1)."""
    agent, company, _ = await setup(make_agent, birch, None)
    first = await agent.call_api(company, "POST", "/wishlist/share", {})
    op = agent.store.get_operation(first.operation_row)
    s1 = op.session_id
    assert op.current.session_id == s1 and not op.account_owned
    birch.state.ended_sessions.add(s1)
    second = await agent.call_api(company, "POST", "/wishlist/share", {})
    assert second.operation_row == op.id
    op = agent.store.get_operation(op.id)
    s2 = agent.store.get_company(company.id).session_id
    assert s2 != s1 and op.current.revision != agent.store.revisions(op.id)[0].revision
    assert op.current.session_id == s2 and op.session_id == s2
    assert agent.store.revisions(op.id)[0].session_id == s1  # each revision keeps its own
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.approval_sessions == [s2]
    assert birch.state.performed["wsh_birch_1"] == 1


async def test_over_mcp_the_approval_of_a_revision_from_a_later_session_goes_in_that_session(
    make_agent, birch
):
    """P15 over MCP: rev 1 from the tool in S1; the Company ends S1; the same call in S2 gets rev 2."""
    agent, company, _ = await setup(make_agent, birch, None)
    first = await agent.call_tool(company, "share_wishlist", {})
    assert first.outcome == "operation", first.detail
    s1 = agent.store.get_operation(first.operation_row).session_id
    birch.state.ended_sessions.add(s1)
    second = await agent.call_tool(company, "share_wishlist", {})
    assert second.operation_row == first.operation_row
    op = agent.store.get_operation(second.operation_row)
    s2 = agent.store.get_company(company.id).session_id
    assert s2 != s1 and op.current.session_id == s2 and op.interface == "mcp"
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.approval_sessions == [s2]


async def test_a_revision_from_a_newer_session_without_invalid_session_goes_in_that_session(
    make_agent, birch
):
    """The neighbour: the agent itself started S2 (no invalid_session; S1 still valid) and rev 2
    came there: rev 2's approval goes in S2, the Session it was returned in, not the first one."""
    agent, company, _ = await setup(make_agent, birch, None)
    first = await agent.call_api(company, "POST", "/wishlist/share", {})
    op = agent.store.get_operation(first.operation_row)
    rev1 = op.current
    agent.store.new_session(
        company.id
    )  # a later Session of this agent (S1 stays valid at the Company)
    await agent.call_api(company, "POST", "/wishlist/share", {})
    op = agent.store.get_operation(op.id)
    assert op.current.id != rev1.id and op.current.session_id != rev1.session_id
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED
    assert birch.state.approval_sessions == [op.current.session_id]


async def test_a_conversation_operation_is_kept_with_the_session_of_the_read_that_delivered_it(
    make_agent, birch
):
    """A43: the Company ends S1; the read that delivers the operation starts S2 within itself;
    the operation is S2's, and its approval message goes in S2."""
    agent, company, _ = await setup(make_agent, birch, None)
    said = await agent.say(company, "Hello")
    s1 = agent.store.get_company(company.id).session_id
    birch.state.ended_sessions.add(s1)
    again = await agent.say(company, "Please share my wishlist", said.conversation_row)
    (op_row,) = again.operation_rows
    op = agent.store.get_operation(op_row)
    s2 = agent.store.get_company(company.id).session_id
    assert s2 != s1 and op.session_id == s2 and op.current.session_id == s2
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.approval_sessions == [s2]


async def test_a_conversation_read_that_renews_the_session_records_the_new_one(make_agent, birch):
    """A43 through a read (not a send): the operation arrives in the events read after the
    Company ended S1 and the read itself started S2."""
    agent, company, _ = await setup(make_agent, birch, None)
    said = await agent.say(company, "Hello")
    s1 = agent.store.get_company(company.id).session_id
    birch.state.ended_sessions.add(s1)
    birch.state.offers[said.conversation_id] = "Share your wishlist"
    got = await agent.refresh_conversation(said.conversation_row)
    (op_row,) = got.operation_rows
    op = agent.store.get_operation(op_row)
    s2 = agent.store.get_company(company.id).session_id
    assert s2 != s1 and op.session_id == s2
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.approval_sessions == [s2]


async def test_an_mcp_approval_waits_for_sign_in_past_the_retry_window(make_agent, birch):
    agent, company, tokens = await setup(
        make_agent, birch, "tok_alice", retry_window_seconds=TINY_WINDOW
    )
    result = await agent.call_tool(company, "place_order", {"kg": 2})
    assert result.outcome == "operation", result.detail
    op = agent.store.get_operation(result.operation_row)
    assert op.account_owned and op.interface == "mcp"
    tokens.token = None  # signed out: the tools/call is refused at the HTTP layer (401)
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING, waiting.outcome_detail
    assert (
        waiting.waiting_sign_in
        == f"waiting for sign-in: Sign in to {NAME} to continue (scopes orders)"
    )
    await wait_past_the_window(agent, op.id, TINY_WINDOW)
    tokens.token = "tok_alice"
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.performed["ord_birch_1"] == 1
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["sign_in_required", "performed"]


async def test_an_mcp_approval_with_a_refused_token_waits_for_a_new_one(make_agent, birch):
    """The neighbour: signed in, but with a token the Company no longer takes (401 invalid_token)."""
    agent, company, tokens = await setup(
        make_agent, birch, "tok_alice", retry_window_seconds=TINY_WINDOW
    )
    result = await agent.call_tool(company, "place_order", {"kg": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = "tok_revoked"
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    for _ in range(3):
        await agent.dispatch_once()
    assert len(agent.store.attempts(op.id)) == 1  # the refused token is not sent again
    await wait_past_the_window(agent, op.id, TINY_WINDOW)
    tokens.token = "tok_alice"
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert birch.state.performed["ord_birch_1"] == 1
