"""The conversation service: what the person says, and the approvals sent in a conversation
(spec 8; Ops 6).

Every message carries an ID we chose, kept in the store before it is sent, so a retry after a
timeout is the same message (the Company answers a repeated ID with the original response
and adds nothing). A 2xx here means "accepted", not "done": what a message led to comes in
later Company messages, read by conversation_events.ConversationReader. The HTTP exchanges
themselves are conversation_http.ConversationTransport's.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from collections.abc import Awaitable, Callable

from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
from poppy_tui.agent.store.requests import Requester
from poppy_tui.agent.transports import Exchange
from poppy_tui.agent.transports.conversation_events import (
    MAX_PAGES_PER_READ,
    ConversationReader,
    EventPage,
    Ingested,
    parse_event_page,
)
from poppy_tui.agent.transports.conversation_http import (
    MAX_WAIT_SECONDS,
    ConversationTransport,
)
from poppy_tui.protocol.approval import Approval, approval_to_message_extensions
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
)
from poppy_tui.protocol.requests import ConversationRequest
from poppy_tui.protocol.retry import BackoffPolicy

__all__ = [
    "APPROVAL_MESSAGE_TEXT",
    "MAX_MESSAGE_RETRY_DELAY",
    "MAX_MESSAGE_SENDS",
    "MAX_PAGES_PER_READ",
    "MAX_WAIT_SECONDS",
    "ConversationReader",
    "ConversationTransport",
    "Conversations",
    "EventPage",
    "Ingested",
    "Said",
    "agent_message",
    "conversation_id_of",
    "parse_event_page",
]

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


# How a Company says how an approved operation went: conventions.CONVERSATION_OUTCOME_*
# (read by outcomes.conversation_reply).
MAX_MESSAGE_SENDS = 4
MAX_MESSAGE_RETRY_DELAY = 10.0


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
        self._reader = ConversationReader(store, transport)

    # ---- reading what the Company says (conversation_events.py) ------------------------------

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
        """Keep every message once; record the operations Company messages carry (the reader's)."""
        return self._reader.ingest(
            company,
            conversation_row,
            endpoint,
            conversation_id,
            events,
            signed_in,
            session_id,
            account,
        )

    async def read(
        self,
        company: CompanyRecord,
        conversation_row: int,
        wait: float = 0.0,
        until: Callable[[], bool] | None = None,
        stop_on_challenge: bool = False,
    ) -> Ingested:
        """Read new events (the reader's long poll: conversation_events.ConversationReader.read)."""
        return await self._reader.read(company, conversation_row, wait, until, stop_on_challenge)

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
        got = self._reader.ingest_body(
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
        got = self._reader.ingest_body(
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
