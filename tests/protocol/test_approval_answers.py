"""What an answer to an approval says (outcomes.as_approval_answer, conventions.APPROVAL_*): only
an answer that says nothing was performed stays a refusal; every other failure is in doubt."""

from __future__ import annotations

import json

import pytest

from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.outcomes import (
    BadResponse,
    NotPerformed,
    Performed,
    RetryLater,
    Unknown,
    as_approval_answer,
    carries_an_operation,
    classify_http,
)
from tests.protocol import spec_examples as ex

OPERATION = json.loads(ex.API_403_BODY)["operation"]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (403, "approval_required"),
        (403, "invalid_session"),
        (401, "sign_in_required"),
        (401, "invalid_token"),
        (403, "insufficient_scope"),
        (401, "invalid_client"),
        (403, "extension_required"),
        (404, "not_found"),
        (409, "http_409"),
        (400, "invalid_approval"),
        (202, "not_performed"),  # a conversation's structured "not performed" (conventions)
        (200, "mcp_error_-32602"),
        (200, "mcp_error_-32601"),  # JSON-RPC: the tool never ran
        (200, "sign_in_required"),  # an MCP tool error naming a refusal the spec defines
        (None, "no_conversation"),  # nothing left the machine
    ],
)
def test_answers_that_say_nothing_was_performed_stay_refusals(status, error):
    refused = NotPerformed(status, error, None)
    assert as_approval_answer(refused) is refused


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (500, "internal_error"),
        (500, "http_500"),
        (501, "http_501"),
        (507, "http_507"),
        (302, "http_302"),
        (303, "http_303"),
        (408, "http_408"),
        (200, "tool_error"),  # an MCP tool error without an operation or a spec code
        (200, "mcp_error_-32603"),
        (200, "mcp_error_x"),
    ],
)
def test_failures_that_dont_say_so_are_in_doubt(status, error):
    answer = as_approval_answer(NotPerformed(status, error, None))
    assert isinstance(answer, Unknown) and "may have been performed" in answer.detail


def test_425_is_a_retry():
    assert isinstance(as_approval_answer(NotPerformed(425, "http_425", None)), RetryLater)


def test_unreadable_answers_are_in_doubt_unless_they_are_refusals():
    broken = ProtocolError("response", "the body is not valid JSON")
    for status in (200, 202, 500, 502, None):
        assert isinstance(as_approval_answer(BadResponse(broken, status)), Unknown), status
    for refusal in (BadResponse(broken, 403), BadResponse(broken, 200, refusal=True)):
        assert as_approval_answer(refusal) is refusal
    success = BadResponse(broken, 200, success=True)
    assert isinstance(as_approval_answer(success), Unknown)


def test_other_outcomes_pass_through():
    for outcome in (Performed(200, {}), RetryLater(1.0), Unknown("x")):
        assert as_approval_answer(outcome) is outcome


def test_an_operation_in_a_success_answer_is_no_operation_and_no_success():
    for status in (200, 201, 202):
        for body in (
            {"error": "approval_required", "operation": OPERATION},
            {"operation": OPERATION},
            {"error": "approval_required"},
        ):
            answer = classify_http(status, {}, body, None)
            assert isinstance(answer, BadResponse) and answer.success and not answer.refusal, (
                status,
                body,
            )
            assert "neither an operation to approve nor a sign that it was done" in str(
                answer.error
            )
    # A Company's own data named "operation" that is no operation of this extension is just data.
    assert isinstance(
        classify_http(200, {}, {"operation": {"id": "op_1", "state": "done"}}, None), Performed
    )
    assert not carries_an_operation({"operation": "transfer"})
    assert not carries_an_operation(["operation"])
    assert carries_an_operation({"operation": OPERATION})
