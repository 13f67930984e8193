"""Reading a conversation: the Company's events, kept once, and what they carry (spec 8).

Messages are kept in the store once each (by their ID); an operation a Company message carries
is recorded with the Session and account of the exchange that delivered it (Ops 3); an
`authorization` event (the Company wants the person signed in) is kept and shown, never skipped.
Only the operation object is read from a Company message: its text never approves anything.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from poppy_tui.agent.store import CompanyRecord, Store
from poppy_tui.agent.transports.conversation_http import ConversationTransport
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.challenges import (
    SIGN_IN_REQUIRED,
    Challenge,
    challenge_from_fields,
)
from poppy_tui.protocol.errors import InvalidMessage, ProtocolError
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.operation import operation_from_message
from poppy_tui.protocol.outcomes import NotPerformed, Performed, describe
from poppy_tui.protocol.requests import ConversationRequest

MAX_PAGES_PER_READ = 100  # a Company that always says has_more can't keep us reading forever


@dataclass(frozen=True)
class EventPage:
    conversation_id: str | None
    events: list[dict[str, Any]]
    cursor: str | None
    has_more: bool
    status: str | None
    problems: list[str]


def parse_event_page(body: Any) -> EventPage:
    """Read an events page leniently: events we can't read are skipped and named, never fatal."""
    if not isinstance(body, dict):
        raise InvalidMessage("events", "the events answer must be a JSON object")
    problems: list[str] = []
    raw_events = body.get("events", [])
    if not isinstance(raw_events, list):
        raise InvalidMessage("events", "must be an array")
    events = []
    for i, event in enumerate(raw_events):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            problems.append(f"events[{i}] is not an event object; skipped")
            continue
        events.append(event)
    cursor = body.get("cursor")
    conversation_id = body.get("conversation_id")
    return EventPage(
        conversation_id=conversation_id if isinstance(conversation_id, str) else None,
        events=events,
        cursor=cursor if isinstance(cursor, str) else None,
        has_more=body.get("has_more") is True,
        status=body.get("status") if isinstance(body.get("status"), str) else None,
        problems=problems,
    )


@dataclass
class Ingested:
    messages: list[dict[str, Any]] = field(default_factory=list)  # new Company messages, as sent
    operation_rows: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    challenges: list[Challenge] = field(
        default_factory=list
    )  # `authorization` events: sign-in asked for

    def extend(self, other: Ingested) -> None:
        self.messages.extend(other.messages)
        self.operation_rows.extend(r for r in other.operation_rows if r not in self.operation_rows)
        self.problems.extend(other.problems)
        self.challenges.extend(other.challenges)


class ConversationReader:
    """Reads a conversation's events and keeps what they say (the sending side is Conversations)."""

    def __init__(self, store: Store, transport: ConversationTransport) -> None:
        self._store = store
        self._transport = transport

    def _request_for(self, company: CompanyRecord, endpoint: str, conversation_id: str) -> int:
        request_id = self._store.last_conversation_request(company.id, conversation_id)
        if request_id is None:
            # A conversation we never wrote in (opened elsewhere): operations still need a request row.
            request_id = self._store.add_request(
                company.id, ConversationRequest(endpoint, conversation_id, "", ""), "refresh"
            )
        return request_id

    def ingest(
        self,
        company: CompanyRecord,
        conversation_row: int,
        endpoint: str,
        conversation_id: str,
        events: list[dict[str, Any]],
        signed_in: bool = False,
        session_id: str | None = None,
        account: str | None = None,
    ) -> Ingested:
        """Keep every message once; record the operations Company messages carry.

        Only the operation object is read from a Company message: its text never approves
        anything, and an `approval` a Company puts in its own message is ignored.
        `session_id`: the Session of the exchange that delivered these events (after any renewal
        inside it): an operation returned signed out is approved only there (Ops 3). `account`: the
        account that exchange was signed in as, where known: an operation returned signed in is its.
        """
        got = Ingested()
        for event in events:
            if event.get("type") == c.CONVERSATION_AUTHORIZATION_EVENT:
                # The Company needs the person signed in (or more scopes) to go on: shown, not skipped.
                challenge = challenge_from_fields(event) or Challenge("sign_in", SIGN_IN_REQUIRED)
                got.challenges.append(challenge)
                # Kept, so Talk and the inbox can offer the sign-in after this call returns (and
                # in another process): what it asks is read from it again (open_sign_in_asks).
                kept = {
                    **event,
                    "id": f"authorization:{event.get('id') or new_id('evt_')}",
                }  # apart from message ids
                self._store.add_message(conversation_row, kept, "authorization")
                got.problems.append(self._transport.describe(company, challenge))
                continue
            if event.get("type") != "message":
                continue  # state and unknown types are skipped (spec 8)
            message = event.get("message")
            if not isinstance(message, dict):
                got.problems.append(f"event {event.get('id')!r} has no message object; skipped")
                continue
            if message.get("role") == "user":
                self._store.add_message(conversation_row, message, "user")
                continue
            if not self._store.add_message(conversation_row, message, "company"):
                continue  # already kept (an earlier read, or another process)
            got.messages.append(message)
            try:
                operation = operation_from_message(message)
            except ProtocolError as exc:
                got.problems.append(
                    f"message {message.get('id')!r} carries an operation that can't be used: {exc}"
                )
                continue
            if operation is None:
                continue
            if not company.supports_operations:
                got.problems.append(
                    f"message {message.get('id')!r} carries an operation, but operations were not negotiated "
                    "(the Company does not list operations v2); ignored"
                )
                continue
            text = message.get("text") if isinstance(message.get("text"), str) else None
            result = self._store.record_operation(
                company.id,
                self._request_for(company, endpoint, conversation_id),
                session_id or company.session_id,
                operation,
                text,
                "conversation",
                account_owned=signed_in,
                account=account if signed_in else None,
            )
            if result.operation_row not in got.operation_rows:
                got.operation_rows.append(result.operation_row)
        return got

    def ingest_body(
        self,
        company: CompanyRecord,
        conversation_row: int,
        endpoint: str,
        conversation_id: str,
        body: Any,
        signed_in: bool = False,
        session_id: str | None = None,
        account: str | None = None,
    ) -> Ingested:
        """POST answers may carry events too (the 0.2 `?wait=` form)."""
        if not isinstance(body, dict) or "events" not in body:
            return Ingested()
        try:
            page = parse_event_page(body)
        except ProtocolError as exc:
            return Ingested(problems=[str(exc)])
        got = self.ingest(
            company,
            conversation_row,
            endpoint,
            conversation_id,
            page.events,
            signed_in,
            session_id,
            account,
        )
        got.problems.extend(page.problems)
        if page.cursor:
            self._store.set_cursor(conversation_row, page.cursor)
        return got

    async def read(
        self,
        company: CompanyRecord,
        conversation_row: int,
        wait: float = 0.0,
        until: Callable[[], bool] | None = None,
        stop_on_challenge: bool = False,
    ) -> Ingested:
        """Read new events; with `until`, keep long-polling until it holds or `wait` runs out
        (or, with `stop_on_challenge`, an `authorization` event arrives)."""
        _, _, endpoint, conversation_id, cursor = self._store.get_conversation(conversation_row)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        got = Ingested()
        restarted = False
        pages = 0
        session_id = company.session_id
        while True:
            remaining = max(0.0, deadline - loop.time())
            exchange = await self._transport.read_events(
                company, endpoint, conversation_id, cursor, remaining if until else 0.0, session_id
            )
            session_id = (
                exchange.session_id
            )  # a new one when the Company ended ours during the read
            outcome = exchange.outcome
            if (
                isinstance(outcome, NotPerformed)
                and outcome.error == "cursor_expired"
                and not restarted
            ):
                got.problems.append(
                    "the Company no longer has part of this conversation; read again from the start"
                )
                cursor, restarted = None, True
                self._store.set_cursor(conversation_row, None)
                continue
            if not isinstance(outcome, Performed):
                got.problems.append(
                    f"could not read the conversation: {exchange.detail or describe(outcome)}"
                )
                return got
            try:
                page = parse_event_page(outcome.body)
            except ProtocolError as exc:
                got.problems.append(str(exc))
                return got
            got.extend(
                self.ingest(
                    company,
                    conversation_row,
                    endpoint,
                    conversation_id,
                    page.events,
                    exchange.signed_in,
                    session_id,
                    exchange.account,
                )
            )
            got.problems.extend(page.problems)
            if page.cursor and page.cursor != cursor:
                cursor = page.cursor
                self._store.set_cursor(conversation_row, cursor)
            pages += 1
            if page.has_more and page.events and pages < MAX_PAGES_PER_READ:
                continue
            if (
                until is None
                or until()
                or loop.time() >= deadline
                or (stop_on_challenge and got.challenges)
            ):
                return got
