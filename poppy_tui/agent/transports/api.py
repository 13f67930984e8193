"""The API interface (spec 7, Ops 4 and 6): one HTTP request, resent unchanged with the approval."""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Awaitable, Callable

import httpx2

from poppy_tui.agent.net import http
from poppy_tui.agent.sessions import Sessions
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.agent.transports import Exchange
from poppy_tui.agent.transports.signed import signed_exchange
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, encode_approval_header
from poppy_tui.protocol.errors import ProtocolError, ProtocolViolation
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
    classify_http,
)
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.protocol.retry import parse_retry_after

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def encode_body(body: Any) -> bytes | None:
    """One spelling for a JSON body. The stored request is re-encoded the same way on every
    resend, so "the same body" (Ops 6) holds byte for byte, whatever order the keys came in."""
    if body is None:
        return None
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
        "utf-8"
    )


def idempotency_header(key: str) -> str:
    # Bare, as the Poppy example sends it (conventions.IDEMPOTENCY_KEY_QUOTED).
    return f'"{key}"' if c.IDEMPOTENCY_KEY_QUOTED else key


class ApiTransport:
    def __init__(
        self, client: Callable[[], Awaitable[httpx2.AsyncClient]], sessions: Sessions
    ) -> None:
        self._client = client
        self._sessions = sessions

    async def send(
        self,
        company: CompanyRecord,
        req: ApiRequest,
        *,
        session_id: str,
        approval: Approval | None = None,
        idempotency_key: str | None = None,
        account_owned: bool = False,
    ) -> Exchange:
        client = await self._client()
        content = encode_body(req.body)
        headers = {}
        if idempotency_key:
            headers[c.HEADER_IDEMPOTENCY_KEY] = idempotency_header(idempotency_key)
        if approval is not None:
            headers[c.HEADER_APPROVAL] = encode_approval_header(approval)

        async def send(sent: dict[str, str]) -> http.HttpAnswer | NotSent | Unknown:
            return await http.request(client, req.method, req.url, headers=sent, content=content)

        return await signed_exchange(
            self._sessions,
            company,
            session_id,
            send,
            self._classify,
            json_body=content is not None,
            carries_approval=approval is not None,
            account_owned=account_owned,
            headers=headers,
            new_session_detail="started a new Session (invalid_session)",
        )

    def _classify(self, company: CompanyRecord, answer: http.HttpAnswer):
        ok = 200 <= answer.status < 300
        retry_after = parse_retry_after(answer.headers.get("retry-after"))
        if answer.cut_off:
            if answer.status in (503, 429):
                # "Wait and send again" is in the status line and Retry-After; the body adds nothing.
                return RetryLater(retry_after, f"HTTP {answer.status} (its body was cut off)")
            # We don't know what the rest said. Resending the same approval is safe (at most
            # once) and gets the Company's whole answer; the dispatcher remembers the 2xx.
            return Unknown(f"HTTP {answer.status} arrived but the connection broke before the body")
        if answer.error and ok:
            # The Company said it did it; we just can't keep what it said.
            return Performed(answer.status, None)
        if answer.error and not 400 <= answer.status < 500:
            # A 3xx or 5xx says what it says by its status alone (a crash page declared as JSON, a
            # busy answer with a broken body): read as the status, so a 503 still waits and
            # resends and a 500 to an approval is in doubt (outcomes.as_approval_answer).
            return classify_http(answer.status, answer.headers, None, retry_after)
        if answer.error:
            # A 4xx whose body can't be read: a refusal (it may have been approval_required), unusable.
            return BadResponse(ProtocolError("response", answer.error), answer.status)
        outcome = classify_http(answer.status, answer.headers, answer.body, retry_after)
        if isinstance(outcome, ApprovalRequired) and not self._sessions.declares_operations(
            company
        ):
            return BadResponse(
                ProtocolViolation(
                    "operation",
                    "the Company returned an operation to a request that did not declare the operations "
                    "extension (it does not list operations v2 in its poppy.json)",
                ),
                answer.status,
                refusal=True,
            )
        return outcome
