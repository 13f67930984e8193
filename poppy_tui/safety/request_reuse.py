"""An operation_id a Company gave to two different requests (Ops §3 forbids it).

`operation_id` identifies one action, and "the Company MUST NOT use it for another action"
(Ops 3). New terms for the same action legitimately come from other requests: another
interface (the API, then a conversation), or another message in a conversation. But two API
requests with another method, URL or body, or two tool calls with other arguments, ask for
different things; a revision that answers one of them is not the action the person saw for
the other. That is a DANGER finding naming both, and each waiting caller gets only the
outcome of its own request.

Pure: no store, no I/O. Requests are the protocol.requests descriptions.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Iterable

from poppy_tui.protocol.requests import ApiRequest, ConversationAction, McpRequest
from poppy_tui.safety.findings import Finding
from poppy_tui.safety.sanitize import sanitize_line

CODE = "operation_reused"
IN_DOUBT_CODE = "same_action_in_doubt"
PERFORMED_CODE = "same_action_performed"
# How each state of an earlier approval is said, in in_doubt_reason.
_NOT_KNOWN_YET = {
    "approved": "is approved and waits to be sent",
    "sending": "is being sent, with no definite answer yet",
    "outcome_unknown": "was sent, and whether the Company performed it is unknown",
}
_SHOWN_CHARS = 200


def different_requests(a: Any, b: Any) -> bool:
    """Whether two requests certainly ask for different things. Only requests through the same
    interface can be compared; across interfaces (or between conversation messages) the
    Company decides what is the same action (Ops 3, "New terms")."""
    if isinstance(a, ApiRequest) and isinstance(b, ApiRequest):
        return (a.method.upper(), a.url, _canonical(a.body)) != (
            b.method.upper(),
            b.url,
            _canonical(b.body),
        )
    if isinstance(a, McpRequest) and isinstance(b, McpRequest):
        return (a.server_url, a.tool, _canonical(a.arguments)) != (
            b.server_url,
            b.tool,
            _canonical(b.arguments),
        )
    return False


def describe_request(request: Any) -> str:
    """One sanitised line naming a request, for findings and CLI notes."""
    if isinstance(request, ApiRequest):
        text = request.describe() + ("" if request.body is None else " " + _canonical(request.body))
    elif isinstance(request, McpRequest):
        text = f"MCP tool {request.tool} {_canonical(request.arguments)}"
    else:
        text = getattr(request, "describe", lambda: "a request")()
    return sanitize_line(text, _SHOWN_CHARS).text


def reuse_findings(operation_id: str, current: Any, earlier: Iterable[Any]) -> list[Finding]:
    """A DANGER finding for each earlier request (of this operation's revisions) that asked for
    something else than the request that returned the current revision."""
    findings: list[Finding] = []
    seen: list[Any] = []
    for other in earlier:
        if not different_requests(current, other) or any(
            not different_requests(other, s) for s in seen
        ):
            continue
        seen.append(other)
        findings.append(
            Finding(
                "danger",
                CODE,
                f"The Company gave this operation ({sanitize_line(operation_id, 80).text}) to two different "
                f"requests: these terms answer {describe_request(current)}, but an earlier revision answered "
                f"{describe_request(other)}. Approving covers only these terms; check that they are what you "
                "asked for.",
                "operation_id",
            )
        )
    return findings


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def in_doubt_reason(earlier: Iterable[Any]) -> str:
    """Why an operation can't be approved while an earlier one for the same action is in doubt
    (Ops 7). `earlier`: store.same_action.EarlierInDoubt items (operation_row, operation_id,
    status, request, key), at least one; a conversation's are said as the conversation's."""
    parts = []
    for item in earlier:
        state = _NOT_KNOWN_YET.get(
            getattr(item.status, "value", str(item.status)), "has an unknown outcome"
        )
        parts.append(
            f"operation {item.operation_row} ({sanitize_line(item.operation_id, 80).text}) {state}"
        )
    first = next(iter(earlier))
    if isinstance(getattr(first, "key", None), ConversationAction):
        said = (
            "an earlier operation of this same conversation was approved, and "
            + "; ".join(parts)
            + ". In a conversation the Company acts on the whole conversation, not on one "
            "message's words, so poppy-tui can't tell whether this operation is for the same "
            "action; approving it too could have that done twice"
        )
    else:
        said = (
            f"the same request ({describe_request(first.request)}) was approved before, and "
            + "; ".join(parts)
            + ". Approving this one too could have it done twice"
        )
    return (
        said + ", so it waits until that outcome is known: poppy-tui keeps finding out, or you "
        "record it in that operation's review once you know"
    )


def in_doubt_findings(earlier: list[Any]) -> list[Finding]:
    """The DANGER finding an operation held by in_doubt_reason shows; none when nothing holds it."""
    if not earlier:
        return []
    return [
        Finding(
            "danger", IN_DOUBT_CODE, f"Can't be approved yet: {in_doubt_reason(earlier)}.", None
        )
    ]


def performed_findings(earlier: list[Any]) -> list[Finding]:
    """A WARNING when the same request was performed before under another operation_id: a
    Company that forgot an operation (Ops 7) answers the same request with a new one, and
    approving it would do the action again."""
    if not earlier:
        return []
    named = ", ".join(
        f"operation {e.operation_row} ({sanitize_line(e.operation_id, 80).text})" for e in earlier
    )
    return [
        Finding(
            "warning",
            PERFORMED_CODE,
            f"The same request ({describe_request(earlier[0].request)}) was performed before: {named}. "
            "Approving this one does it again; approve only if you want it done twice.",
            None,
        )
    ]
