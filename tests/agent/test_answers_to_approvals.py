"""What an answer to an approval says (Ops 7), against the strict Company (written from the spec
alone) over real loopback HTTP and the real MCP SDK: only an answer that says nothing was
performed settles `not_performed`. A failure that doesn't say so (a 5xx whatever its body, an MCP
tool error) is in doubt: the same approval is sent again, and the operation is never reopened for
a new approval while its outcome is unknown."""

from __future__ import annotations


import pytest

from poppy_tui.agent.store import Status
from tests.companies.strict_company import RawAnswer, StrictCompany

HTML = b"<!DOCTYPE html><html><body><h1>Internal Server Error</h1></body></html>"


def tool_approvals(strict: StrictCompany) -> list[tuple[str, str]]:
    return [b["approval"] for m, _, _, b in strict.state.received if m == "TOOL" and b["approval"]]


async def approve_api(agent, strict, booking="bk_1"):
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", f"/bookings/{booking}/cancel", {})
    assert first.outcome == "operation", first
    op = agent.store.get_operation(first.operation_row)
    agent.approve(op.id, op.current.id)
    return company, op


async def approve_tool(agent, strict, booking="bk_1"):
    company = await agent.add_company(strict.base_url)
    first = await agent.call_tool(company, "cancel_booking", {"booking_id": booking})
    assert first.outcome == "operation", first
    op = agent.store.get_operation(first.operation_row)
    assert op.interface == "mcp"
    agent.approve(op.id, op.current.id)
    return company, op


# ---- the API: a failure that doesn't say "not performed" is resent ---------------------------

IN_DOUBT = {
    "500 declared JSON, an HTML page": RawAnswer(500, "application/json", HTML),
    "500 declared JSON, plain text": RawAnswer(500, "application/json", b"Internal Server Error"),
    "502 HTML": RawAnswer(502, "text/html", HTML),
    "500 empty body": RawAnswer(500, "application/json", b""),
    "504 empty body, no type": RawAnswer(504, "", b""),
    "500 duplicate members": RawAnswer(
        500, "application/json", b'{"error":"internal_error","error":"oops"}'
    ),
    "500 cut off": RawAnswer(500, "application/json", b'{"error":"internal', cut_off=True),
    "500 NaN": RawAnswer(500, "application/json", b'{"error":"internal","retry_in":NaN}'),
    "302 redirect": RawAnswer(302, "text/html", b"", {"location": "/bookings/bk_1"}),
    "408 request timeout": RawAnswer(408, "application/json", b'{"error":"timeout"}'),
}


@pytest.mark.parametrize("answer", list(IN_DOUBT.values()), ids=list(IN_DOUBT))
async def test_a_failure_after_performing_is_resent_with_the_same_approval_and_settles_performed(
    make_agent, strict, answer
):
    strict.state.approval_answers = [answer]
    agent = make_agent()
    _, op = await approve_api(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["unknown", "performed"]
    assert done.outcome["body"]["status"] == "cancelled"  # the Company's replay of its first answer
    sent = strict.state.approvals_received()
    assert len(sent) == 2 and len(set(sent)) == 1
    assert len({a.idempotency_key for a in agent.store.attempts(op.id)}) == 1
    assert strict.state.perform_count["cxl_bk_1"] == 1


@pytest.mark.parametrize(
    "answer",
    [
        RawAnswer(503, "application/json", b"{oops", {"retry-after": "1"}),
        RawAnswer(
            503,
            "application/json",
            b'{"error":"operation_in_progress","error":"x"}',
            {"retry-after": "1"},
        ),
        RawAnswer(
            503,
            "application/json",
            b'{"error":"operation_in_progress"}',
            {"retry-after": "1"},
            cut_off=True,
        ),
    ],
    ids=["malformed JSON", "duplicate members", "cut off"],
)
async def test_503_being_performed_with_a_broken_body_waits_its_retry_after_and_resends(
    make_agent, strict, answer
):
    from poppy_tui.agent.store.store import parse_stamp

    strict.state.approval_answers = [answer]
    agent = make_agent()
    _, op = await approve_api(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    first, second = agent.store.attempts(op.id)
    assert (first.outcome, first.http_status, second.outcome) == ("retry_later", 503, "performed")
    # Retry-After: 1 was read from the header although the body could not be.
    assert (parse_stamp(second.started_at) - parse_stamp(first.finished_at)).total_seconds() >= 0.9
    assert strict.state.perform_count["cxl_bk_1"] == 1


async def test_broken_5xx_until_the_window_ends_is_unknown_and_the_same_request_does_not_reopen_it(
    make_agent, strict
):
    strict.state.approval_answers = [RawAnswer(500, "application/json", HTML) for _ in range(200)]
    agent = make_agent(retry_window_seconds=1.0)
    company, op = await approve_api(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.OUTCOME_UNKNOWN, done.outcome_detail
    assert len(agent.store.attempts(op.id)) >= 2  # resent, never settled on the first answer
    assert (
        strict.state.bookings["bk_1"]["status"] == "cancelled"
    )  # it was performed: "not performed" would lie
    # The same request again: the Company answers with new terms of the same operation; the
    # person is not asked to approve the action again while the first outcome is unknown.
    again = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert again.operation_row == op.id and "outcome_unknown" in again.detail
    assert agent.store.get_operation(op.id).status == Status.OUTCOME_UNKNOWN
    assert agent.store.list_operations([Status.PENDING]) == []


# ---- what does settle not_performed: a refusal ------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (RawAnswer(404, "application/json", b'{"error":"not_found"}', perform=False), "not_found"),
        (RawAnswer(409, "text/html", HTML, perform=False), "http_409"),
        (
            RawAnswer(
                400, "application/json", b'{"error":"invalid_approval","error":"x"}', perform=False
            ),
            None,
        ),
    ],
    ids=["404 JSON error", "409 HTML", "400 duplicate members"],
)
async def test_a_4xx_is_the_companys_refusal_and_settles_not_performed_at_once(
    make_agent, strict, answer, code
):
    strict.state.approval_answers = [answer]
    agent = make_agent()
    _, op = await approve_api(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.NOT_PERFORMED, done.outcome_detail
    assert len(agent.store.attempts(op.id)) == 1
    assert code is None or code in done.outcome_detail
    assert "cxl_bk_1" not in strict.state.perform_count


# ---- MCP: a tool error after an approval is in doubt -------------------------------------------


@pytest.mark.parametrize(
    "kind", ["plain", "json"], ids=["isError plain text", "isError with its own JSON error"]
)
async def test_an_mcp_tool_error_after_performing_is_resent_and_settles_performed(
    make_agent, strict, kind
):
    strict.state.mcp_errors_after_perform = [kind]
    agent = make_agent()
    _, op = await approve_tool(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["unknown", "performed"]
    assert len(tool_approvals(strict)) == 2 and len(set(tool_approvals(strict))) == 1
    assert done.outcome["structuredContent"]["status"] == "cancelled"
    assert strict.state.perform_count["cxl_bk_1"] == 1


async def test_mcp_tool_errors_until_the_window_ends_are_unknown_and_the_same_call_does_not_reopen_it(
    make_agent, strict
):
    strict.state.mcp_errors_after_perform = ["plain"] * 200
    agent = make_agent(retry_window_seconds=1.0)
    company, op = await approve_tool(agent, strict)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.OUTCOME_UNKNOWN, done.outcome_detail
    assert strict.state.bookings["bk_1"]["status"] == "cancelled"
    again = await agent.call_tool(company, "cancel_booking", {"booking_id": "bk_1"})
    assert again.operation_row == op.id
    assert agent.store.get_operation(op.id).status == Status.OUTCOME_UNKNOWN
    assert agent.store.list_operations([Status.PENDING]) == []


# ---- a conversation: an approval message whose answer can't be read -----------------------------


@pytest.mark.parametrize(
    "answer",
    [
        RawAnswer(202, "application/json", b'{"accepted": tru'),
        RawAnswer(500, "application/json", HTML),
    ],
    ids=["202 broken JSON", "500 declared JSON, HTML"],
)
async def test_an_approval_message_whose_answer_cant_be_read_is_resent_not_settled(
    make_agent, strict, answer
):
    strict.state.conversation_post_answers = [answer]
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    said = await agent.say(company, "Please cancel bk_1")
    [row] = said.operation_rows
    op = agent.store.get_operation(row)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    # The strict Company says how it went in words only: unknown, never "not performed".
    assert done.status == Status.OUTCOME_UNKNOWN, done.outcome_detail
    assert "words only" in done.outcome_detail
    first, *rest = agent.store.attempts(op.id)
    assert (
        first.outcome == "unknown" and rest
    )  # resent: the same message, which the Company doesn't repeat
    assert len({a.idempotency_key for a in agent.store.attempts(op.id)}) == 1
    assert strict.state.perform_count["cxl_bk_1"] == 1
