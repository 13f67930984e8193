"""The conversation interface (spec 8; 0.2 layout, see conventions.CONVERSATION_*).

POST {endpoint}                          create, with the first message     -> 201
POST {endpoint}/{id}/messages            send a message                      -> 202
GET  {endpoint}/{id}/events?cursor=&wait= read events (long poll)           -> 200

Every message carries an ID we chose, kept in the store before it is sent, so a retry after a
timeout is the same message (the Company answers a repeated ID with the original response
and adds nothing). A 2xx here means "accepted", not "done": what a message led to comes in
later Company messages.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx2

from poppy_tui.agent.net import http
from poppy_tui.agent.sessions import Sessions
from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
from poppy_tui.agent.store.requests import Requester
from poppy_tui.agent.transports import Exchange
from poppy_tui.agent.transports.signed import signed_exchange
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, approval_to_message_extensions
from poppy_tui.protocol.challenges import (
    SIGN_IN_REQUIRED,
    Challenge,
    challenge_from_fields,
)
from poppy_tui.protocol.errors import InvalidMessage, ProtocolError
from poppy_tui.protocol.ids import is_valid_id, new_id
from poppy_tui.protocol.operation import operation_from_message
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
    conversation_reply,
    describe,
)
from poppy_tui.protocol.requests import ConversationRequest
from poppy_tui.protocol.retry import BackoffPolicy, parse_retry_after

# How long one events read may hold the connection open (the guide suggests ~30 s long polls).
MAX_WAIT_SECONDS = 25
# Text of the agent message that carries an approval. The text approves nothing (Ops 6);
# the approval is in extensions.operations.approval.
APPROVAL_MESSAGE_TEXT = "The user approved this operation."


def agent_message(
    message_id: str, text: str, extensions: dict[str, Any] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"id": message_id, "author": {"type": "agent"}, "text": text}
    if extensions:
        message["extensions"] = extensions
    return message


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


def conversation_id_of(body: Any) -> str | None:
    """The new conversation's ID in a create answer. Spellings seen in 0.1/0.2 implementations."""
    if not isinstance(body, dict):
        return None
    for candidate in (
        body.get("conversation_id"),
        body.get("id"),
        (body.get("conversation") or {}).get("id")
        if isinstance(body.get("conversation"), dict)
        else None,
    ):
        if is_valid_id(candidate):
            return candidate
    return None


class ConversationTransport:
    def __init__(
        self, client: Callable[[], Awaitable[httpx2.AsyncClient]], sessions: Sessions
    ) -> None:
        self._client = client
        self._sessions = sessions

    def describe(self, company: CompanyRecord, challenge: Challenge) -> str:
        return self._sessions.challenge_detail(company, challenge)

    @staticmethod
    def messages_url(endpoint: str, conversation_id: str) -> str:
        return endpoint.rstrip("/") + c.CONVERSATION_MESSAGES_PATH.format(
            conversation_id=quote(conversation_id, safe="")
        )

    @staticmethod
    def events_url(endpoint: str, conversation_id: str) -> str:
        return endpoint.rstrip("/") + c.CONVERSATION_EVENTS_PATH.format(
            conversation_id=quote(conversation_id, safe="")
        )

    async def create(
        self, company: CompanyRecord, endpoint: str, message: dict[str, Any], session_id: str
    ) -> Exchange:
        url = endpoint.rstrip("/") + c.CONVERSATION_CREATE_PATH
        return await self._exchange(company, "POST", url, session_id, False, {"message": message})

    async def send_message(
        self,
        company: CompanyRecord,
        endpoint: str,
        conversation_id: str,
        message: dict[str, Any],
        session_id: str,
        carries_approval: bool = False,
        account_owned: bool = False,
    ) -> Exchange:
        url = self.messages_url(endpoint, conversation_id)
        return await self._exchange(
            company,
            "POST",
            url,
            session_id,
            carries_approval,
            {"message": message},
            account_owned=account_owned,
        )

    async def read_events(
        self,
        company: CompanyRecord,
        endpoint: str,
        conversation_id: str,
        cursor: str | None,
        wait: float,
        session_id: str,
    ) -> Exchange:
        params = {"wait": str(int(max(0, min(wait, MAX_WAIT_SECONDS))))}
        if cursor:
            params["cursor"] = cursor
        return await self._exchange(
            company,
            "GET",
            self.events_url(endpoint, conversation_id),
            session_id,
            False,
            None,
            params,
            read_timeout_extra=float(params["wait"]),
        )

    async def _exchange(
        self,
        company: CompanyRecord,
        method: str,
        url: str,
        session_id: str,
        carries_approval: bool,
        payload: dict[str, Any] | None,
        params: dict[str, str] | None = None,
        read_timeout_extra: float = 0.0,
        account_owned: bool = False,
    ) -> Exchange:
        client = await self._client()
        content = (
            None if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        )

        async def send(sent: dict[str, str]) -> http.HttpAnswer | NotSent | Unknown:
            return await http.request(
                client,
                method,
                url,
                headers=sent,
                content=content,
                params=params,
                extra_read_seconds=read_timeout_extra,
            )

        return await signed_exchange(
            self._sessions,
            company,
            session_id,
            send,
            lambda _company, answer: _classify(answer),
            json_body=content is not None,
            carries_approval=carries_approval,
            account_owned=account_owned,
        )


def _classify(answer: http.HttpAnswer):
    status = answer.status
    if 200 <= status < 300:
        if answer.error:
            return BadResponse(ProtocolError("response", answer.error), status)
        return Performed(status, answer.body)
    if status in (503, 429):
        return RetryLater(parse_retry_after(answer.headers.get("retry-after")), f"HTTP {status}")
    if status in (502, 504):
        return Unknown(f"HTTP {status} from a gateway")
    body = answer.body
    error = body.get("error") if isinstance(body, dict) else None
    code = error if isinstance(error, str) else f"http_{status}"
    return NotPerformed(status, code, body)


# ---- the conversation service: keeping messages, reading replies, sending approvals -----------

# How a Company says how an approved operation went: conventions.CONVERSATION_OUTCOME_*
# (read by outcomes.conversation_reply).
MAX_MESSAGE_SENDS = 4
MAX_PAGES_PER_READ = 100  # a Company that always says has_more can't keep us reading forever
MAX_MESSAGE_RETRY_DELAY = 10.0


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


@dataclass
class Said:
    conversation_row: int | None
    conversation_id: str | None
    request_id: int
    delivered: bool
    exchange: Exchange
    ingested: Ingested


class Conversations:
    def __init__(
        self,
        store: Store,
        transport: ConversationTransport,
        backoff: BackoffPolicy | None = None,
        reply_wait_seconds: float = 10.0,
    ) -> None:
        self._store = store
        self._transport = transport
        self._backoff = backoff or BackoffPolicy(cap_seconds=MAX_MESSAGE_RETRY_DELAY)
        self.reply_wait_seconds = reply_wait_seconds

    # ---- keeping what the Company says ----------------------------------------------------------

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

    def _ingest_body(
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

    # ---- what the person says --------------------------------------------------------------------

    async def _deliver(self, send: Callable[[], Awaitable[Exchange]]) -> Exchange:
        """Send one message, resending it (same ID, same content) after transient failures."""
        for number in range(1, MAX_MESSAGE_SENDS + 1):
            exchange = await send()
            outcome = exchange.outcome
            if number < MAX_MESSAGE_SENDS and isinstance(outcome, (NotSent, Unknown, RetryLater)):
                retry_after = outcome.retry_after if isinstance(outcome, RetryLater) else None
                await asyncio.sleep(
                    min(self._backoff.delay(number, retry_after), MAX_MESSAGE_RETRY_DELAY)
                )
                continue
            return exchange
        raise AssertionError("unreachable")  # pragma: no cover

    async def say(
        self,
        company: CompanyRecord,
        endpoint: str,
        text: str,
        conversation_row: int | None,
        origin: str,
        *,
        requester: Requester | None = None,
    ) -> Said:
        message = agent_message(new_id("msg_"), text)
        if conversation_row is None:
            request_id = self._store.add_request(
                company.id,
                ConversationRequest(endpoint, None, message["id"], text),
                origin,
                requester,
            )
            exchange = await self._deliver(
                lambda: self._transport.create(company, endpoint, message, company.session_id)
            )
            self._store.set_first_response(request_id, exchange.status, exchange.response)
            if not isinstance(exchange.outcome, Performed):
                return Said(None, None, request_id, False, exchange, Ingested())
            conversation_id = conversation_id_of(exchange.outcome.body)
            if conversation_id is None:
                bad = Exchange(
                    BadResponse(
                        InvalidMessage(
                            "conversation_id",
                            "the Company created a conversation but did not name it",
                        ),
                        exchange.status,
                    ),
                    exchange.status,
                    exchange.response,
                    exchange.session_id,
                    "the Company did not name the new conversation",
                )
                return Said(None, None, request_id, False, bad, Ingested())
            conversation_row = self._store.upsert_conversation(
                company.id, endpoint, conversation_id
            )
            self._store.set_request_conversation(request_id, conversation_id)
            self._store.add_message(conversation_row, message, "user")
        else:
            _, _, endpoint, conversation_id, _ = self._store.get_conversation(conversation_row)
            request_id = self._store.add_request(
                company.id,
                ConversationRequest(endpoint, conversation_id, message["id"], text),
                origin,
                requester,
            )
            # Kept before it is sent: a resend after a timeout is this very message.
            self._store.add_message(conversation_row, message, "user")
            exchange = await self._deliver(
                lambda: self._transport.send_message(
                    company, endpoint, conversation_id, message, company.session_id
                )
            )
            self._store.set_first_response(request_id, exchange.status, exchange.response)
            if not isinstance(exchange.outcome, Performed):
                return Said(
                    conversation_row, conversation_id, request_id, False, exchange, Ingested()
                )
        company = self._store.get_company(company.id)  # the Session may have been renewed
        got = self._ingest_body(
            company,
            conversation_row,
            endpoint,
            conversation_id,
            exchange.outcome.body,
            exchange.signed_in,
            exchange.session_id,
            exchange.account,
        )
        if not got.messages:
            position = self._store.message_position(conversation_row, message["id"]) or 0
            got.extend(
                await self.read(
                    company,
                    conversation_row,
                    self.reply_wait_seconds,
                    until=lambda: bool(
                        self._store.messages_after(conversation_row, position, "company")
                    ),
                )
            )
        return Said(conversation_row, conversation_id, request_id, True, exchange, got)

    # ---- sending an approval -------------------------------------------------------------------

    async def send_approval(self, op: OperationRecord, approval: Approval) -> Exchange:
        request = op.request
        company = op.company
        if not isinstance(request, ConversationRequest) or not request.conversation_id:
            detail = "poppy-tui does not know which conversation this operation came from"
            return Exchange(
                NotPerformed(None, "no_conversation", None),
                None,
                {"error": detail},
                op.session_id,
                detail,
            )
        endpoint, conversation_id = request.endpoint, request.conversation_id
        conversation_row = self._store.find_conversation(company.id, conversation_id)
        if conversation_row is None:
            conversation_row = self._store.upsert_conversation(
                company.id, endpoint, conversation_id
            )
        assert op.idempotency_key, "an approved conversation operation has its approval message ID"
        message = agent_message(
            op.idempotency_key, APPROVAL_MESSAGE_TEXT, approval_to_message_extensions(approval)
        )
        self._store.add_message(conversation_row, message, "user")
        position = self._store.message_position(conversation_row, message["id"]) or 0
        # The account's operation is approved from the current Session; any other only in its own,
        # the Session of the approved revision (op.session_id, as the dispatcher hands it over; Ops 3).
        session_id = (
            self._store.get_company(company.id).session_id if op.account_owned else op.session_id
        )
        exchange = await self._transport.send_message(
            company,
            endpoint,
            conversation_id,
            message,
            session_id,
            carries_approval=True,
            account_owned=op.account_owned,
        )
        if not isinstance(exchange.outcome, Performed):
            return exchange  # not accepted: the dispatcher resends, or settles on a refusal
        got = self._ingest_body(
            company,
            conversation_row,
            endpoint,
            conversation_id,
            exchange.outcome.body,
            exchange.signed_in,
            exchange.session_id,
            exchange.account,
        )
        asked = list(got.challenges)  # `authorization` events: the Company wants sign-in first
        verdict = self._reply(op, conversation_row, position, exchange)
        if verdict is None and not asked:
            read = await self.read(
                company,
                conversation_row,
                self.reply_wait_seconds,
                until=lambda: self._reply(op, conversation_row, position, exchange) is not None,
                stop_on_challenge=True,
            )
            asked.extend(read.challenges)
            verdict = self._reply(op, conversation_row, position, exchange)
        if asked and (verdict is None or _words_only(verdict)):
            # Asked to sign in in answer to the approval: not an outcome, and not "unknown". The
            # Company did not take the approval; it goes again once the person signed in (Ops 3).
            # Its words, if any, are kept in the conversation.
            challenge = asked[0]
            return Exchange(
                NotPerformed(
                    exchange.status,
                    challenge.error,
                    verdict.response if verdict is not None else None,
                ),
                exchange.status,
                exchange.response,
                exchange.session_id,
                self._transport.describe(company, challenge),
                challenge=challenge,
                token_fingerprint=exchange.token_fingerprint,
            )
        if verdict is None:
            return Exchange(
                RetryLater(None, "no reply yet"),
                exchange.status,
                exchange.response,
                exchange.session_id,
                "the Company accepted the approval message and has not said how it went yet",
            )
        return verdict

    def _reply(
        self, op: OperationRecord, conversation_row: int, position: int, sent: Exchange
    ) -> Exchange | None:
        """The Company's later message about this operation, read as the outcome (Ops 6)."""
        for _, _, text, message in self._store.messages_after(
            conversation_row, position, "company"
        ):
            try:
                operation = operation_from_message(message)
            except ProtocolError as exc:
                # Resending the same message can't change a message already written: final.
                return Exchange(
                    BadResponse(exc, sent.status),
                    sent.status,
                    message,
                    sent.session_id,
                    str(exc),
                    final=True,
                )
            if operation is not None:
                if operation.operation_id != op.operation_id:
                    continue  # about another action
                return Exchange(
                    ApprovalRequired(operation),
                    sent.status,
                    message,
                    sent.session_id,
                    carrier_text=text,
                )
            said = conversation_reply(message, op.operation_id)
            if said in ("unrelated", "in_progress"):
                continue  # about another action, or not finished yet: keep waiting for the word
            shown = (text or "")[:2000]
            if said == "performed":
                return Exchange(
                    Performed(sent.status, message),
                    sent.status,
                    message,
                    sent.session_id,
                    f"the Company said it was done: {shown}"
                    if shown
                    else "the Company said it was done",
                )
            if said == "not_performed":
                return Exchange(
                    NotPerformed(sent.status, "not_performed", message),
                    sent.status,
                    message,
                    sent.session_id,
                    f"the Company said it was not done: {shown}"
                    if shown
                    else "the Company said it was not done",
                )
            # Words only: shown to the person, never taken as an outcome (conventions.py).
            return Exchange(
                Unknown(shown or "the Company replied without saying whether it was done"),
                sent.status,
                message,
                sent.session_id,
                f"the Company replied in words only: {shown!r}. poppy-tui takes an outcome only from a structured "
                "reply (message.data.status), so read its words (kept with the operation) and confirm whether it "
                "was done; poppy-tui keeps reading the conversation meanwhile"
                if shown
                else "the Company replied without words or a structured status; poppy-tui keeps reading the conversation",
                final=True,
            )
        return None


def _words_only(verdict: Exchange) -> bool:
    """A reply that says nothing structured about the operation (conventions.py): words."""
    return isinstance(verdict.outcome, Unknown) and verdict.final
