"""poppy-tui against a Company written from the spec alone (tests/companies/strict_company.py),
over real loopback HTTP: cross-interface revisions, 5xx after performing, operation_id reuse,
text-only conversation outcomes, finding out another way (Ops §3, §6, §7)."""

from __future__ import annotations


import pytest

from poppy_tui.agent.store import StateError, Status
from tests.clock_waits import until_past


async def api_then_conversation(agent, strict):
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert first.outcome == "operation"
    said = await agent.say(company, "Please cancel bk_1")
    assert said.operation_rows == [first.operation_row]
    return company, agent.store.get_operation(first.operation_row)


# ---- 1. the approval goes through the interface that returned the approved revision ----------


async def test_revision_from_a_conversation_is_approved_in_that_conversation(make_agent, strict):
    agent = make_agent()
    _, op = await api_then_conversation(agent, strict)
    assert op.current.revision.startswith("conversation-")
    assert op.interface == "conversation"  # what the review header, `show` and JSON name
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    # The strict Company says how it went in words only: unknown, with the reason and its words.
    assert done.status == Status.OUTCOME_UNKNOWN, done.outcome_detail
    assert "words only" in done.outcome_detail and "now cancelled" in done.outcome_detail
    assert strict.state.bookings["bk_1"]["status"] == "cancelled"
    assert strict.state.approvals_received() == []  # nothing went to the API
    assert strict.state.perform_count["cxl_bk_1"] == 1


async def test_revision_from_the_api_after_a_conversation_is_approved_over_the_api(
    make_agent, strict
):
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    said = await agent.say(company, "cancel bk_1 please")
    [row] = said.operation_rows
    again = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert again.operation_row == row
    op = agent.store.get_operation(row)
    assert op.interface == "api" and op.current.revision.startswith("api-")
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert strict.state.approvals_received() == [
        f'operation_id="cxl_bk_1", revision="{op.current.revision}"'
    ]


async def test_a_request_names_the_revision_it_returned_and_an_older_one_is_not_approved(
    make_agent, strict
):
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert first.revision_row == agent.store.get_operation(first.operation_row).current.id
    said = await agent.say(company, "Please cancel bk_1")  # a newer revision, from the conversation
    assert said.operation_rows == [first.operation_row]
    op = agent.store.get_operation(first.operation_row)
    assert op.current.id != first.revision_row and op.current.revision.startswith("conversation-")
    with pytest.raises(StateError, match="newer revision"):
        agent.approve(first.operation_row, first.revision_row)
    assert agent.store.get_operation(op.id).status == Status.PENDING
    again = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert (again.operation_row, again.revision_row) == (
        op.id,
        agent.store.get_operation(op.id).current.id,
    )


# ---- 3. a 5xx to an approval is in doubt: resend, never not_performed ------------------------


@pytest.mark.parametrize("status", [500, 502])
async def test_5xx_after_performing_is_resent_and_settles_performed(make_agent, strict, status):
    strict.state.error_after_perform, strict.state.error_after_perform_times = status, 2
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["unknown", "unknown", "performed"]
    assert (
        len(set(strict.state.approvals_received())) == 1
        and len(strict.state.approvals_received()) == 3
    )
    assert strict.state.perform_count["cxl_bk_1"] == 1


async def test_5xx_until_the_window_ends_is_unknown_not_refused(make_agent, strict):
    strict.state.error_after_perform, strict.state.error_after_perform_times = 500, 10_000
    agent = make_agent(retry_window_seconds=1.0)
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.OUTCOME_UNKNOWN, done.outcome_detail
    # A new request for the same action must not reopen it for a new approval.
    again = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert again.operation_row == op.id
    assert agent.store.get_operation(op.id).status == Status.OUTCOME_UNKNOWN


# ---- 2. an operation_id reused for a different request ----------------------------------------


async def test_operation_id_reused_for_another_booking_is_a_danger_and_callers_get_their_own_outcome(
    make_agent, strict
):
    from poppy_tui.ui.checks import check_record
    from poppy_tui.agent.store.store import now_utc

    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/rebook", {"date": "2026-12-05"})
    second = await agent.call_api(company, "POST", "/bookings/bk_2/rebook", {"date": "2026-12-07"})
    assert first.operation_row == second.operation_row  # the Company's one operation_id
    op = agent.store.get_operation(second.operation_row)
    findings = check_record(agent.store, op, now_utc(), 0).findings
    reused = [f for f in findings if f.code == "operation_reused"]
    assert reused and reused[0].severity == "danger" and findings[0].code == "operation_reused"
    assert (
        "/bookings/bk_1/rebook" in reused[0].message
        and "/bookings/bk_2/rebook" in reused[0].message
    )
    agent.approve(op.id, op.current.id)  # the person approves the bk_2 terms they see
    done = await agent.wait_for_outcome(op.id, timeout=30, request_id=second.request_id)
    assert done.status == Status.PERFORMED and done.outcome["body"]["id"] == "bk_2"
    theirs = await agent.wait_for_outcome(op.id, timeout=30, request_id=first.request_id)
    assert theirs.status == Status.NOT_PERFORMED and theirs.outcome is None
    assert (
        "/bookings/bk_2/rebook" in theirs.outcome_detail
        and "/bookings/bk_1/rebook" in theirs.outcome_detail
    )
    assert strict.state.bookings["bk_1"]["date"] == "2026-11-02"


async def test_the_same_action_across_interfaces_is_no_reuse(make_agent, strict):
    from poppy_tui.ui.checks import check_record
    from poppy_tui.agent.store.store import now_utc

    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    await agent.say(company, "Please cancel bk_1")
    op = agent.store.get_operation(first.operation_row)
    assert not [
        f
        for f in check_record(agent.store, op, now_utc(), 0).findings
        if f.code == "operation_reused"
    ]
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30, request_id=first.request_id)
    assert done.status != Status.NOT_PERFORMED


# ---- 4, 5. finding out another way; conversation outcomes in words --------------------------


async def probe_when_due(agent, row):
    """Run the dispatcher (which finds out about unknown outcomes) once the probe is due."""
    from tests.waiting import wait_until

    await wait_until(
        lambda: (due := agent.dispatcher.next_due_in()) is not None and due <= 0,
        timeout=20,
        describe="the outcome probe never became due",
    )
    await agent.dispatch_once()
    return agent.store.get_operation(row)


async def _unknown_after_perform(make_agent, strict):
    """The bk_1 cancel approved while the Company answers 500 to every approval after performing
    it: its outcome unknown once the 0.5 s retry window is over."""
    strict.state.error_after_perform, strict.state.error_after_perform_times = 500, 10_000
    agent = make_agent(retry_window_seconds=0.5)
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    assert (await agent.wait_for_outcome(op.id, timeout=30)).status == Status.OUTCOME_UNKNOWN
    return agent, op


async def test_unknown_outcome_is_found_out_by_resending_the_same_approval(make_agent, strict):
    agent, op = await _unknown_after_perform(make_agent, strict)
    sent = len(agent.store.attempts(op.id))
    # Still failing: the resend says nothing, so the booking is read where the OpenAPI offers it.
    looked = await probe_when_due(agent, op.id)
    assert looked.status == Status.OUTCOME_UNKNOWN
    assert len(agent.store.attempts(op.id)) == sent + 1  # the same approval, once more
    assert f"GET {strict.base_url}/bookings/bk_1 says" in looked.outcome_detail
    assert '"status": "cancelled"' in looked.outcome_detail
    observed = agent.store.observations(op.id)
    assert {o["source"] for o in observed} == {
        "the same approval, sent again",
        f"GET {strict.base_url}/bookings/bk_1",
    }
    assert (
        agent.store.unknown_reason(op.id) in looked.outcome_detail
    )  # why it is unknown, still said
    assert looked.next_attempt_at is not None  # it keeps looking until the terms expire
    # The Company recovers: the next resend gets its first answer (a replay), and that settles it.
    strict.state.error_after_perform_times = 0
    with agent.store._write() as db:  # due now rather than in 30 s
        db.execute(
            "UPDATE operations SET next_attempt_at=? WHERE id=?",
            ("2000-01-01T00:00:00.000000Z", op.id),
        )
    done = await probe_when_due(agent, op.id)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert done.outcome["body"]["status"] == "cancelled"
    assert strict.state.perform_count["cxl_bk_1"] == 1
    assert len({a.idempotency_key for a in agent.store.attempts(op.id)}) == 1


async def test_words_only_reply_is_explained_and_later_messages_are_found(make_agent, strict):
    strict.state.conversation_silent_replies = 1
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    said = await agent.say(company, "cancel bk_2 please")
    [row] = said.operation_rows
    op = agent.store.get_operation(row)
    agent.approve(op.id, op.current.id)
    unknown = await agent.wait_for_outcome(op.id, timeout=30)
    assert unknown.status == Status.OUTCOME_UNKNOWN
    assert "words only" in unknown.outcome_detail and "looking into it" in unknown.outcome_detail
    conversation_id = said.conversation_id
    strict.state.say(conversation_id, "All sorted \x1b[31m: bk_2 is cancelled.")
    looked = await probe_when_due(agent, op.id)
    assert looked.status == Status.OUTCOME_UNKNOWN
    assert (
        "the Company said since" in looked.outcome_detail
        and "bk_2 is cancelled" in looked.outcome_detail
    )
    [seen] = [
        o
        for o in agent.store.observations(op.id)
        if o["source"] == "the conversation's later messages"
    ]
    assert "bk_2 is cancelled" in seen["messages"][-1]["text"]
    # A structured word (the documented convention) settles it.
    strict.state.say(
        conversation_id, "Confirmed.", data={"status": "performed", "operation_id": op.operation_id}
    )
    with agent.store._write() as db:
        db.execute(
            "UPDATE operations SET next_attempt_at=? WHERE id=?",
            ("2000-01-01T00:00:00.000000Z", op.id),
        )
    done = await probe_when_due(agent, op.id)
    assert done.status == Status.PERFORMED, done.outcome_detail


async def test_the_persons_resolution_stays_the_last_resort(make_agent, strict):
    agent, op = await _unknown_after_perform(make_agent, strict)
    resolved = agent.resolve_unknown(op.id, performed=True)
    assert resolved.status == Status.PERFORMED and resolved.next_attempt_at is None
    sent = len(agent.store.attempts(op.id))
    await agent.dispatch_once()
    assert len(agent.store.attempts(op.id)) == sent  # nothing more is sent once the person said


# ---- an approval whose terms expired before it could be sent ---------------------------------


async def test_an_approval_that_expired_before_its_send_is_recorded_expired_and_never_sent(
    make_agent, strict
):
    """The Company's terms last two seconds here; the person approves in time, but nothing
    sends before they expire: the next pass claims nothing, records it expired, and the Company
    never sees the approval."""

    strict.state.expiry_seconds = 2.0
    agent = make_agent(grace_seconds=0)
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_2/cancel", {})
    assert first.outcome == "operation"
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    await until_past(
        op.current.expires_at
    )  # the terms have expired (second precision: at most 2 s)
    assert await agent.dispatch_once() == 0
    assert agent.store.get_operation(op.id).status == Status.EXPIRED
    assert strict.state.approvals_received() == []
    assert strict.state.bookings["bk_2"]["status"] == "confirmed"


async def test_the_probe_reads_the_resource_never_a_collection(make_agent, strict):
    # The OpenAPI offers no GET for a booking, only a one-segment template, which would take
    # "bookings" for an ID and read the whole collection.
    strict.state.openapi_paths = {
        "/{section}": {"get": {"summary": "A section"}},
        "/bookings/{booking_id}/cancel": {"post": {}},
    }
    agent, op = await _unknown_after_perform(make_agent, strict)
    looked = await probe_when_due(agent, op.id)
    assert looked.status == Status.OUTCOME_UNKNOWN
    assert strict.state.reads == []  # nothing read: no GET names this booking
    assert "GET" not in looked.outcome_detail
    assert {o["source"] for o in agent.store.observations(op.id)} == {
        "the same approval, sent again"
    }


async def test_the_next_look_is_30_s_after_the_first_whatever_it_found(make_agent, strict):
    from poppy_tui.protocol.timestamps import parse_rfc3339

    agent, op = await _unknown_after_perform(make_agent, strict)
    looked = await probe_when_due(agent, op.id)
    assert len(agent.store.observations(op.id)) == 2  # a resend and a GET: still one look
    [unknown] = [e for e in agent.store.events(op.id) if e.kind == "outcome_unknown"]
    after = (parse_rfc3339(looked.next_attempt_at) - parse_rfc3339(unknown.at)).total_seconds()
    assert after == pytest.approx(
        31, abs=0.01
    )  # 1 s, then 30 s (it was 60 s: two finds, two "looks")


async def test_the_probe_reads_only_on_the_companys_api_origin(make_agent, strict):
    # The conversation endpoint is on another origin (the same server, named localhost): a request
    # sent there may go, but finding out never reads from anything but the Company's API.
    port = strict.base_url.rsplit(":", 1)[1]
    strict.state.conversation_origin = f"http://localhost:{port}"
    strict.state.error_after_perform, strict.state.error_after_perform_times = 500, 10_000
    agent = make_agent(retry_window_seconds=0.5)
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(
        company, "POST", f"http://localhost:{port}/bookings/bk_1/cancel", {}
    )
    assert first.outcome == "operation", first.detail
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    assert (await agent.wait_for_outcome(op.id, timeout=30)).status == Status.OUTCOME_UNKNOWN
    looked = await probe_when_due(agent, op.id)
    assert strict.state.reads == []
    assert (
        f"http://localhost:{port} is not Strict Travel's API, so nothing was read there"
        in looked.outcome_detail
    )
