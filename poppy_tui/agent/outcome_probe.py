"""Finding out another way (Ops 7) when an approval's outcome is unknown.

"If a request with an approval fails or times out, the Personal Agent sends it again with the
same approval. It MUST NOT ask the User to approve a new operation for the same action until it
knows whether the first one was performed. [...] the Personal Agent finds out another way, such
as from the order in the Company's API."

So, for each `outcome_unknown` operation, until the person resolves it:
1. While the Company must remember the operation (until the approved revision's `expires_at`),
   and the last answer left it in doubt, send the same approval again (same request, same key,
   an attempt row committed first). A Company replays its first answer, so a success settles it
   `performed`. A new revision in answer doesn't say (Ops 7) and is only recorded.
2. Read the state where the Company offers it: a GET on the resource the request acted on, found
   in the Company's OpenAPI (`POST /bookings/bk_1/cancel` -> `GET /bookings/{id}`, never the
   request's own URL), a tool of the MCP server the Company marks read-only (`readOnlyHint`)
   that reads what the call named, or, for a conversation, the Company's later messages. What is found is kept (an `observed` event) and
   shown beside the operation, in its outcome detail; a structured conversation reply settles it.
   A Company's state is its own format: poppy-tui shows it and lets the person judge.
3. Look again later: spaced out (30 s, doubling, at most 10 min) until `expires_at`.
The person's resolution stays the last resort; it wins over anything in flight here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Awaitable, Callable

from poppy_tui.agent.companies import api_origins, origin_of
from poppy_tui.agent.keys import KeyStorageError
from poppy_tui.agent.store import OperationRecord, StateError, Status, Store, StoreError
from poppy_tui.agent.store.store import now_utc
from poppy_tui.agent.transports import Exchange, outcome_name
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.openapi import resource_url  # one rule, importable from here too
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    NotSent,
    Performed,
    Unknown,
    as_approval_answer,
    conversation_reply,
    describe,
)
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from poppy_tui.protocol.timestamps import parse_rfc3339
from poppy_tui.safety.wording import possessive

if TYPE_CHECKING:
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.store import CompanyRecord
    from poppy_tui.agent.transports.api import ApiTransport
    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.transports.conversation import Conversations
    from poppy_tui.agent.transports.mcp import McpTransport

log = logging.getLogger(__name__)

FIRST_PROBE_SECONDS = 1.0  # after the send ended unknown: read the state right away
PROBE_INTERVAL_SECONDS = 30.0
MAX_PROBE_INTERVAL_SECONDS = 600.0
# Attempt outcomes after which resending can still tell something (the Company may not have
# answered the approval at all). After a definite answer (a new revision, a refusal) it can't.
RESEND_AFTER = frozenset({"unknown", "retry_later", "interrupted", "not_sent"})
MAX_SHOWN_CHARS = 600


@dataclasses.dataclass
class _Found:
    observations: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    settle: Status | None = None
    outcome: Any = None
    settle_detail: str = ""


class ProbeAgent(Protocol):
    """What the probe uses of the agent that runs it (the `Agent` facade, agent.py, which builds
    the probe: the facade imports this module, never the other way round)."""

    @property
    def config(self) -> Config: ...
    @property
    def store(self) -> Store: ...
    @property
    def api(self) -> ApiTransport: ...
    @property
    def conversations(self) -> Conversations: ...
    @property
    def mcp(self) -> McpTransport: ...
    @property
    def sessions(self) -> Sessions: ...
    def signing_problem(self) -> str | None: ...
    async def fetch_openapi(self, company: CompanyRecord) -> dict: ...


# Sends an approval again as the dispatcher does (Agent._send_approval).
SendApproval = Callable[[OperationRecord, Approval], Awaitable[Exchange]]


class OutcomeProbe:
    def __init__(
        self,
        agent: ProbeAgent,
        send_approval: SendApproval,
        owner: str,
        lease_seconds: float,
        interval_seconds: float = PROBE_INTERVAL_SECONDS,
        max_interval_seconds: float = MAX_PROBE_INTERVAL_SECONDS,
    ) -> None:
        self._agent = agent
        self._send_approval = send_approval
        self.owner = owner
        # A probe sends and reads without renewing its lease: its lease covers the longest it can take.
        timeout = agent.config.request_timeout_seconds
        self.lease_seconds = max(
            lease_seconds, 4 * timeout + agent.conversations.reply_wait_seconds
        )
        self.interval = interval_seconds
        self.max_interval = max_interval_seconds

    @property
    def store(self) -> Store:
        return self._agent.store

    async def probe_once(self) -> int:
        """Find out about every unknown outcome that is due. Returns how many were looked at."""
        count = 0
        while True:
            op = self.store.claim_probe(self.owner, self.lease_seconds)
            if op is None:
                return count
            count += 1
            try:
                await self._probe(op)
            except StateError as exc:  # resolved by the person meanwhile: their word stands
                log.info("finding out about operation %s stopped: %s", op.id, exc)
                self.store.release_lease(op.id, self.owner)
            except Exception:  # one Company's oddity must not stop the others
                log.exception("finding out about operation %s failed", op.id)
                # Look again later, not on the very next pass: a failure must not become a loop.
                try:
                    self.store.finish_probe(
                        op.id,
                        self.owner,
                        detail=op.outcome_detail or "",
                        observations=[],
                        next_probe_at=now_utc() + timedelta(seconds=self.interval),
                    )
                except StoreError as exc:  # the lease lapses on its own; nothing is lost
                    log.warning("operation %s: %s", op.id, exc)

    # ---- one operation ----------------------------------------------------------------------

    async def _probe(self, op: OperationRecord) -> None:
        if op.approved_revision_id is None:
            self.store.finish_probe(
                op.id,
                self.owner,
                detail=op.outcome_detail or "",
                observations=[],
                next_probe_at=None,
            )
            return
        approved = self.store.get_revision(op.approved_revision_id)
        request, _, _ = self.store.get_request(approved.request_id)
        # The approved revision's request and Session: the same approval, sent where it was (Ops 3, 6).
        sending = dataclasses.replace(
            op,
            request=request,
            request_id=approved.request_id,
            interface=request.interface,
            session_id=approved.session_id or op.session_id,
        )
        now = now_utc()
        remembered = approved.expires_at > now
        found = _Found()
        problem = self._agent.signing_problem()
        if problem:
            # Nothing can be signed, so nothing can be sent or read: no attempt, look again later.
            reason = (
                self.store.unknown_reason(op.id) or op.outcome_detail or "the outcome is unknown"
            )
            next_at = self._next_probe(op.id, now, approved.expires_at)
            self.store.finish_probe(
                op.id,
                self.owner,
                detail=_detail(reason, [f"can't look now: {problem}"], next_at),
                observations=[],
                next_probe_at=next_at,
            )
            return
        if isinstance(request, ConversationRequest):
            replied = await self._read_conversation(sending, found)
            if found.settle is None and not replied and remembered and self._worth_resending(op):
                # The Company never answered the approval message: send it again (same ID).
                await self._resend(sending, approved.revision, found)
        elif remembered and self._worth_resending(op):
            await self._resend(sending, approved.revision, found)
        if found.settle is None and isinstance(request, ApiRequest):
            await self._read_resource(sending, request, found)
        elif found.settle is None and isinstance(request, McpRequest):
            await self._read_with_tool(sending, request, found)
        reason = self.store.unknown_reason(op.id) or op.outcome_detail or "the outcome is unknown"
        if found.settle is not None:
            self.store.finish_probe(
                op.id,
                self.owner,
                detail=found.settle_detail,
                observations=found.observations,
                next_probe_at=None,
                settle=found.settle,
                outcome=found.outcome,
            )
            return
        next_at = self._next_probe(op.id, now, approved.expires_at)
        self.store.finish_probe(
            op.id,
            self.owner,
            detail=_detail(reason, found.notes, next_at),
            observations=found.observations,
            next_probe_at=next_at,
        )

    def _next_probe(
        self, operation_row: int, now: datetime, expires_at: datetime
    ) -> datetime | None:
        """Spaced out, and only while the Company must remember the operation."""
        since = [
            e.at for e in self.store.events(operation_row) if e.kind == Status.OUTCOME_UNKNOWN.value
        ]
        unknown_since = parse_rfc3339(since[-1]) if since else now
        return next_probe_at(unknown_since, now, expires_at, self.interval, self.max_interval)

    def _worth_resending(self, op: OperationRecord) -> bool:
        for orphan in self.store.attempts(op.id):
            if orphan.finished_at is None and orphan.owner != self.owner:
                # A probe's resend whose process died: it may have reached the Company.
                self.store.finish_attempt(
                    orphan.id,
                    "interrupted",
                    None,
                    None,
                    f"the sender ({orphan.owner}) stopped before an answer arrived; it may have been performed",
                )
        finished = [a for a in self.store.attempts(op.id) if a.finished_at is not None]
        return bool(finished) and finished[-1].outcome in RESEND_AFTER

    async def _resend(self, sending: OperationRecord, revision: str, found: _Found) -> None:
        attempt = self.store.start_probe_attempt(sending.id, self.owner)
        exchange = await self._send(sending, Approval(sending.operation_id, revision))
        outcome = as_approval_answer(exchange.outcome)
        detail = exchange.detail or describe(outcome)
        self.store.finish_attempt(
            attempt.id, outcome_name(outcome), exchange.status, exchange.response, detail
        )
        observation = {
            "source": "the same approval, sent again",
            "outcome": outcome_name(outcome),
            "http_status": exchange.status,
        }
        found.observations.append(observation)
        if isinstance(outcome, Performed):
            found.settle, found.outcome = Status.PERFORMED, exchange.response
            found.settle_detail = "found out: the same approval, sent again, got the Company's answer that it was done"
            return
        if isinstance(outcome, ApprovalRequired):
            answered = outcome.operation
            if answered.operation_id == sending.operation_id and answered.revision != revision:
                # Recorded for the person; it stays undecidable until the outcome is known (Ops 7).
                self.store.record_operation(
                    sending.company.id,
                    sending.request_id,
                    exchange.session_id,
                    answered,
                    exchange.carrier_text,
                    sending.interface,
                )
            found.notes.append(
                "the same approval, sent again, got new terms, which don't say whether it was done "
                "(the Company may have forgotten the operation)"
            )
            return
        found.notes.append(
            f"the same approval, sent again, got no definite answer ({_short(detail)})"
        )

    async def _send(self, sending: OperationRecord, approval: Approval) -> Exchange:
        try:
            return await self._send_approval(sending, approval)
        except asyncio.CancelledError:
            raise
        except KeyStorageError as exc:
            detail = f"not sent: {exc}"
            return Exchange(NotSent(detail), None, {"error": detail}, sending.session_id, detail)
        except Exception as exc:  # a bug of ours must not settle anything
            log.exception("resending operation %s failed inside poppy-tui", sending.id)
            detail = f"poppy-tui failed while resending ({type(exc).__name__}: {exc})"
            return Exchange(Unknown(detail), None, {"error": detail}, sending.session_id, detail)

    # ---- reading the state ------------------------------------------------------------------

    async def _read_resource(
        self, sending: OperationRecord, request: ApiRequest, found: _Found
    ) -> None:
        company = self.store.get_company(sending.company.id)
        try:
            document = await self._agent.fetch_openapi(company)
        except Exception as exc:  # logged: no OpenAPI is only no way to look
            log.info("no OpenAPI to read %s's state from: %s", company.name, exc, exc_info=True)
            return
        url = resource_url(request.url, document)
        if url is None:
            return
        if origin_of(url) not in api_origins(company):
            # Only the Company's own API is read (spec 3): never another host, whatever the request said.
            found.notes.append(
                f"{origin_of(url)} is not {possessive(company.name)} API, so nothing was read there"
            )
            return
        exchange = await self._agent.api.send(
            company, ApiRequest("GET", url), session_id=company.session_id
        )
        body = exchange.response.get("body") if isinstance(exchange.response, dict) else None
        observation = {
            "source": f"GET {url}",
            "http_status": exchange.status,
            "body": _capped(body),
        }
        found.observations.append(observation)
        if isinstance(exchange.outcome, Performed):
            found.notes.append(f"GET {url} says: {_short(json.dumps(body, ensure_ascii=False))}")
        else:
            found.notes.append(
                f"GET {url} could not be read ({_short(exchange.detail or describe(exchange.outcome))})"
            )

    async def _read_with_tool(
        self, sending: OperationRecord, request: McpRequest, found: _Found
    ) -> None:
        """Over MCP: the state read with a tool the Company marks read-only (`readOnlyHint`), by
        the rule the read before the decision uses (resource_read.mcp_read_call: never a tool
        guessed by its name, never the call's own). Shown, not interpreted, as an API read is."""
        from poppy_tui.agent.resource_read import MAX_RESOURCE_BYTES, mcp_read_call

        company = self.store.get_company(sending.company.id)
        token = await self._agent.sessions.access_token(company) if sending.account_owned else None
        session_id = company.session_id if sending.account_owned else sending.session_id

        def choose(tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
            return mcp_read_call(request.tool, request.arguments, tools)

        call, body, problem = await self._agent.mcp.read_with_tool(
            company,
            request.server_url,
            choose,
            session_id=session_id,
            token=token,
            limit=MAX_RESOURCE_BYTES,
        )
        if call is None:
            if problem:
                found.notes.append(
                    f"the MCP server could not be asked for a read ({_short(problem)})"
                )
            return  # it marks no tool read-only for this: nothing to read
        name, args = call
        source = f"MCP {name}(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"
        found.observations.append({"source": source, "body": _capped(body), "problem": problem})
        if body is not None and problem is None:
            found.notes.append(f"{source} says: {_short(json.dumps(body, ensure_ascii=False))}")
        else:
            found.notes.append(f"{source} could not be read ({_short(problem or 'no answer')})")

    async def _read_conversation(self, sending: OperationRecord, found: _Found) -> bool:
        """Read the conversation; say whether the Company has written since the approval."""
        replied = False
        request = sending.request
        assert isinstance(request, ConversationRequest)
        company = self.store.get_company(sending.company.id)
        row = self.store.find_conversation(company.id, request.conversation_id or "")
        if row is None:
            return replied
        got = await self._agent.conversations.read(company, row)
        position = (
            self.store.message_position(row, sending.idempotency_key or "")
            if sending.idempotency_key
            else None
        )
        if position is None:
            if got.problems:
                found.notes.append(
                    f"the conversation could not be read ({_short('; '.join(got.problems))})"
                )
            return replied
        later = self.store.messages_after(row, position, "company")
        replied = bool(later)
        texts = []
        for message_id, _, text, message in later:
            said = conversation_reply(message, sending.operation_id)
            if said == "unrelated":
                continue
            if said == "performed":
                found.settle, found.outcome = Status.PERFORMED, message
                found.settle_detail = f"found out: the Company said later in the conversation that it was done: {_short(text or '')}"
            elif said == "not_performed" and found.settle is None:
                found.settle, found.outcome = Status.NOT_PERFORMED, message
                found.settle_detail = f"found out: the Company said later in the conversation that it was not done: {_short(text or '')}"
            if text:
                texts.append((message_id, text))
        if texts:
            found.observations.append(
                {
                    "source": "the conversation's later messages",
                    "messages": [{"id": mid, "text": _short(t, 2000)} for mid, t in texts[-10:]],
                }
            )
            found.notes.append(
                "the Company said since: " + " / ".join(repr(_short(t, 300)) for _, t in texts[-3:])
            )
        if got.problems:
            found.notes.append(f"reading the conversation: {_short('; '.join(got.problems))}")
        return replied


def next_probe_at(
    unknown_since: datetime,
    now: datetime,
    expires_at: datetime,
    interval: float = PROBE_INTERVAL_SECONDS,
    max_interval: float = MAX_PROBE_INTERVAL_SECONDS,
    first: float = FIRST_PROBE_SECONDS,
) -> datetime | None:
    """When to look next, on one fixed schedule counted from when the outcome became unknown:
    `first` seconds after, then `interval` later, each gap doubling up to `max_interval`, never
    past `expires_at` (after it the Company may forget the operation, Ops 7: None, no more).
    From the clock, not from how many looks there were, so a pass that found several things,
    or nothing, or a process that was stopped for a while, keeps the same spacing."""
    if expires_at <= now:
        return None
    at = unknown_since + timedelta(seconds=first)
    gap = interval
    while at <= now and gap < max_interval:
        at += timedelta(seconds=gap)
        gap = min(gap * 2, max_interval)
    if at <= now:  # the gaps are all max_interval from here: jump over the ones already past
        behind = (now - at).total_seconds()
        at += timedelta(seconds=max_interval * (behind // max_interval + 1))
    return min(at, expires_at)


def _detail(reason: str, notes: list[str], next_at: datetime | None) -> str:
    text = reason
    if notes:
        text += ". Found out so far: " + "; ".join(notes)
    text += (
        ". poppy-tui looks again by itself until the approved terms expire; resolve it once you know"
        if next_at is not None
        else ". poppy-tui has stopped looking (the approved terms expired); resolve it once you know"
    )
    return text


def _capped(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= 4000 else text[:4000] + "…"


def _short(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
