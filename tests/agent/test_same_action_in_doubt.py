"""No new approval for the same action while an earlier one is in doubt (Ops 7), against the
strict Company (written from the spec alone) minting a new operation_id for every request, as a
Company may once it forgot the first (Ops 7): over the API, MCP (the real SDK) and a conversation.
The hold is read afresh: it lifts once the earlier outcome is known. A hold names only an
operation whose action is the same: the same Company and interface and the same method, URL and
body, tool and arguments, or the same conversation; never the same words in another one."""

from __future__ import annotations


import pytest

from poppy_tui.agent.store import StateError, Status
from poppy_tui.safety.request_reuse import IN_DOUBT_CODE, in_doubt_findings
from tests.companies.strict_company import RawAnswer, StrictCompany

HTML = b"<html><body>Internal Server Error</body></html>"


@pytest.fixture
def strict(strict: StrictCompany) -> StrictCompany:
    """tests/conftest.py's strict Company, minting a new operation_id for every request."""
    strict.state.mint_operation_ids = True
    return strict


async def ask(agent, company, interface: str, booking: str = "bk_1", conversation=None):
    """The same request again and again: a new operation_id each time (the Company's minting).
    A conversation's is said in `conversation` (a conversation row), else in a new one."""
    if interface == "api":
        result = await agent.call_api(company, "POST", f"/bookings/{booking}/cancel", {})
        return result.operation_row
    if interface == "mcp":
        result = await agent.call_tool(company, "cancel_booking", {"booking_id": booking})
        return result.operation_row
    said = await agent.say(company, f"Please cancel {booking}", conversation)
    [row] = said.operation_rows
    return row


def conversation_of(agent, operation_row: int) -> int:
    """The conversation row an operation's request was said in."""
    request = agent.store.get_operation(operation_row).request
    return agent.store.find_conversation(
        agent.store.get_operation(operation_row).company.id, request.conversation_id
    )


def in_doubt_after_approval(strict, interface: str) -> None:
    if interface == "api":
        strict.state.approval_answers = [
            RawAnswer(500, "application/json", HTML) for _ in range(200)
        ]
    elif interface == "mcp":
        strict.state.mcp_errors_after_perform = ["plain"] * 200
    # A conversation: the strict Company says how it went in words only, so the outcome is unknown.


@pytest.mark.parametrize("interface", ["api", "mcp", "conversation"])
async def test_the_same_request_under_a_new_operation_id_cant_be_approved_until_the_first_is_known(
    make_agent, strict, interface
):
    in_doubt_after_approval(strict, interface)
    agent = make_agent(retry_window_seconds=1.0)
    company = await agent.add_company(strict.base_url)
    first = await ask(agent, company, interface)
    op = agent.store.get_operation(first)
    agent.approve(op.id, op.current.id)
    assert (await agent.wait_for_outcome(op.id, timeout=30)).status == Status.OUTCOME_UNKNOWN
    assert strict.state.bookings["bk_1"]["status"] == "cancelled"  # it was in fact performed

    # A conversation's same request is said again in the same conversation.
    here = conversation_of(agent, first) if interface == "conversation" else None
    second = await ask(agent, company, interface, conversation=here)
    again = agent.store.get_operation(second)
    assert (
        second != first and again.operation_id != op.operation_id and again.status == Status.PENDING
    )
    [held] = agent.store.earlier_in_doubt(second)
    assert held.operation_row == first and held.status == Status.OUTCOME_UNKNOWN
    [finding] = in_doubt_findings([held])
    assert finding.severity == "danger" and finding.code == IN_DOUBT_CODE
    assert (
        f"operation {first} ({op.operation_id})" in finding.message and "unknown" in finding.message
    )
    with pytest.raises(StateError, match=f"operation {first}"):
        agent.approve(second, again.current.id)
    assert agent.store.get_operation(second).status == Status.PENDING
    assert agent.store.decisions(second) == []  # nothing recorded

    # Another action is not held (in a conversation: another conversation).
    other = await ask(agent, company, interface, "bk_2")
    assert agent.store.earlier_in_doubt(other) == []

    # The person finds out (here: performed) and records it: the hold lifts, re-read, not frozen.
    agent.resolve_unknown(first, performed=True)
    assert agent.store.earlier_in_doubt(second) == []
    assert agent.approve(second, again.current.id).status == Status.APPROVED


async def test_an_approval_waiting_to_be_sent_holds_the_same_action_too(make_agent, strict):
    agent = make_agent(grace_seconds=600)
    company = await agent.add_company(strict.base_url)
    first = await ask(agent, company, "api")
    agent.approve(first, agent.store.get_operation(first).current.id)
    second = await ask(agent, company, "api")
    with pytest.raises(StateError, match="approved and waits to be sent"):
        agent.approve(second, agent.store.get_operation(second).current.id)
    agent.withdraw(first)  # taken back before anything was sent: nothing is in doubt
    assert (
        agent.approve(second, agent.store.get_operation(second).current.id).status
        == Status.APPROVED
    )


async def test_found_out_by_the_probe_lifts_the_hold(make_agent, strict):
    strict.state.approval_answers = [RawAnswer(500, "application/json", HTML) for _ in range(200)]
    agent = make_agent(retry_window_seconds=0.3)
    company = await agent.add_company(strict.base_url)
    first = await ask(agent, company, "api")
    agent.approve(first, agent.store.get_operation(first).current.id)
    assert (await agent.wait_for_outcome(first, timeout=30)).status == Status.OUTCOME_UNKNOWN
    second = await ask(agent, company, "api")
    assert agent.store.earlier_in_doubt(second)
    strict.state.approval_answers = []  # the Company recovers: a resend gets its first answer
    with agent.store._write() as db:  # the probe's next look, due now rather than in 30 s
        db.execute(
            "UPDATE operations SET next_attempt_at=? WHERE id=?",
            ("2000-01-01T00:00:00.000000Z", first),
        )
    await agent.dispatch_once()
    assert agent.store.get_operation(first).status == Status.PERFORMED
    assert agent.store.earlier_in_doubt(second) == []


async def test_an_approval_being_sent_holds_the_same_action(make_agent, strict):
    """The Company answers the approval 503 with a long Retry-After: the operation stays `sending`
    (its resend scheduled), and the same request's new operation can't be approved meanwhile."""
    from poppy_tui.protocol.retry import BackoffPolicy

    strict.state.approval_answers = [
        RawAnswer(503, "application/json", b"{}", {"retry-after": "120"}, perform=False)
    ]
    agent = make_agent(backoff=BackoffPolicy(base_seconds=0.05, max_retry_after_seconds=600))
    company = await agent.add_company(strict.base_url)
    first = await ask(agent, company, "api")
    agent.approve(first, agent.store.get_operation(first).current.id)
    await agent.dispatch_once()
    sending = agent.store.get_operation(first)
    assert sending.status == Status.SENDING and sending.next_attempt_at is not None
    second = await ask(agent, company, "api")
    with pytest.raises(StateError, match="is being sent"):
        agent.approve(second, agent.store.get_operation(second).current.id)


# ---- conversations: the conversation is the action's scope, not the words (A51) ----------------


async def approved_in_doubt_in_a_conversation(agent, company, booking: str):
    """ "What about <booking>?", then "Yes please, go ahead": the operation the Company Agent then
    returns, approved; the Company says how it went in words only, so its outcome is unknown."""
    proposed = await agent.say(company, f"What about {booking}?", None)
    said = await agent.say(company, "Yes please, go ahead", proposed.conversation_row)
    [row] = said.operation_rows
    agent.approve(row, agent.store.get_operation(row).current.id)
    assert (await agent.wait_for_outcome(row, timeout=30)).status == Status.OUTCOME_UNKNOWN
    return row, proposed.conversation_row


async def test_the_same_words_in_another_conversation_for_another_action_are_not_held(
    make_agent, strict
):
    """The audit's E-a case: "Yes please, go ahead" in a second conversation, for another
    booking, is a different action; it is approvable, and nothing says it was approved before."""
    from poppy_tui.cli.output import record_json, show_text

    agent = make_agent(retry_window_seconds=1.0)
    company = await agent.add_company(strict.base_url)
    first, _ = await approved_in_doubt_in_a_conversation(agent, company, "bk_1")
    proposed = await agent.say(company, "What about bk_2?", None)
    said = await agent.say(company, "Yes please, go ahead", proposed.conversation_row)
    [second] = said.operation_rows
    op = agent.store.get_operation(second)
    assert op.operation_id != agent.store.get_operation(first).operation_id
    assert agent.store.earlier_in_doubt(second) == []
    assert agent.store.same_action_performed(second) == []
    assert record_json(agent.store, op)["held_by"] == []
    assert "approved before" not in show_text(agent.store, op)
    assert agent.approve(second, op.current.id).status == Status.APPROVED


async def test_a_new_operation_in_the_same_conversation_is_held_whatever_its_words(
    make_agent, strict
):
    """Same conversation, new words: held. In a conversation the Company Agent acts on the whole
    conversation, so poppy-tui can't tell a new operation there from the same action offered
    again under a new operation_id (Ops 7 lets a Company forget the first); it waits until the
    earlier outcome is known, and says so in the conversation's words, not "the same request"."""
    agent = make_agent(retry_window_seconds=1.0)
    company = await agent.add_company(strict.base_url)
    first, conversation = await approved_in_doubt_in_a_conversation(agent, company, "bk_1")
    said = await agent.say(company, "Please cancel bk_2", conversation)
    [second] = said.operation_rows
    [held] = agent.store.earlier_in_doubt(second)
    assert held.operation_row == first
    [finding] = in_doubt_findings([held])
    assert "same conversation" in finding.message and "same request" not in finding.message
    assert f"operation {first}" in finding.message
    with pytest.raises(StateError, match="same conversation"):
        agent.approve(second, agent.store.get_operation(second).current.id)
    # Its own outcome found out (here: by the person), the hold lifts.
    agent.resolve_unknown(first, performed=True)
    assert agent.store.earlier_in_doubt(second) == []
    # A performed operation of the same conversation is no warning: it says nothing of this one.
    assert agent.store.same_action_performed(second) == []


def test_the_action_key_is_typed_and_a_conversations_names_the_conversation():
    from poppy_tui.protocol.requests import (
        ApiAction,
        ApiRequest,
        ConversationAction,
        ConversationRequest,
        McpAction,
        McpRequest,
        action_key,
    )

    api = action_key(ApiRequest("post", "https://a.test/x", {"b": 1, "a": [1, 2]}))
    assert isinstance(api, ApiAction)
    assert api == action_key(ApiRequest("POST", "https://a.test/x", {"a": [1, 2], "b": 1}))
    assert api != action_key(ApiRequest("POST", "https://a.test/x", {"a": [2, 1], "b": 1}))
    assert api != action_key(ApiRequest("POST", "https://a.test/y", {"a": [1, 2], "b": 1}))
    assert api != action_key(ApiRequest("PUT", "https://a.test/x", {"a": [1, 2], "b": 1}))
    mcp = action_key(McpRequest("https://a.test/mcp", "cancel", {"id": "1", "why": "x"}))
    assert isinstance(mcp, McpAction)
    assert mcp == action_key(McpRequest("https://a.test/mcp", "cancel", {"why": "x", "id": "1"}))
    assert mcp != action_key(McpRequest("https://a.test/mcp", "cancel", {"id": "2", "why": "x"}))
    assert mcp != action_key(McpRequest("https://b.test/mcp", "cancel", {"id": "1", "why": "x"}))
    # An API action and an MCP call never share a key, even where their parts read alike.
    assert action_key(ApiRequest("cancel", "https://a.test/mcp", {"id": "1"})) != action_key(
        McpRequest("https://a.test/mcp", "cancel", {"id": "1"})
    )
    said = action_key(ConversationRequest("https://a.test/c", "cnv_1", "msg_1", "Yes please"))
    assert said == ConversationAction("https://a.test/c", "cnv_1")
    # Other words, the same conversation: the same scope. The same words, another: not.
    assert said == action_key(ConversationRequest("https://a.test/c", "cnv_1", "msg_2", "No"))
    assert said != action_key(
        ConversationRequest("https://a.test/c", "cnv_2", "msg_3", "Yes please")
    )
    # A first message whose conversation the Company has not named: nothing to compare.
    assert action_key(ConversationRequest("https://a.test/c", None, "msg_4", "Yes please")) is None
