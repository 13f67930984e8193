"""Conversations with the Company Agent (0.2 layout, see conventions.py): the routes that
serve them.

POST creates a conversation with its first message, POST .../messages sends one, GET
.../events reads them (long poll). A repeated message ID gets the original response and adds
nothing (Ops 7). The conversation's record and event shapes are in conversation_events.py; the
scripted Company Agent that answers (proposing operations, performing approved ones, and saying
how it went in a later message; a message's text never approves anything) is company_agent.py.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.demo.accounts.guard import Caller, Challenge
from poppy_tui.demo.accounts.users import READ_NEEDS
from poppy_tui.demo.api import error, guarded, json_body
from poppy_tui.demo.company_agent import CompanyAgent
from poppy_tui.demo.context import RETRY_AFTER_SECONDS, CompanyContext, request_flags
from poppy_tui.demo.conversation_events import (
    Conversation,
    Reply,
    authorization_event,
    company_event,
    user_event,
)
from poppy_tui.demo.sessions import Refusal
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, approval_from_message
from poppy_tui.protocol.errors import InvalidApproval
from poppy_tui.protocol.ids import id_problem, new_id
from poppy_tui.protocol.jsonlimits import canonical_json
from poppy_tui.protocol.session_jwt import VerifiedSession

MAX_WAIT_SECONDS = 30.0
PAGE_SIZE = 100
MAX_TEXT_CHARS = 8000
_CURSOR_RE = re.compile(r"^c_(\d{1,9})$")


@dataclass
class _Stored:
    content: str
    status: int | None = None  # None while the first send is still being handled
    body: dict[str, Any] | None = None


def cursor_for(n: int) -> str:
    return f"c_{n}"


def parse_cursor(value: str | None, conversation: Conversation) -> int:
    if value is None or value == "":
        return 0
    match = _CURSOR_RE.match(value)
    if not match or int(match.group(1)) > len(conversation.events):
        raise Refusal(
            400,
            {
                "error": "invalid_cursor",
                "error_description": "The cursor is not one this conversation returned.",
            },
        )
    return int(match.group(1))


def validate_message(obj: object) -> dict[str, Any]:
    def bad(description: str) -> Refusal:
        return Refusal(400, {"error": "invalid_request", "error_description": description})

    if not isinstance(obj, dict):
        raise bad("message must be a JSON object.")
    problem = id_problem(obj.get("id"))
    if problem:
        raise bad(f"message.id {problem}.")
    text = obj.get("text")
    if text is not None and (not isinstance(text, str) or len(text) > MAX_TEXT_CHARS):
        raise bad(f"message.text must be a string of at most {MAX_TEXT_CHARS} characters.")
    for name in ("author", "data", "extensions"):
        if name in obj and not isinstance(obj[name], dict):
            raise bad(f"message.{name} must be a JSON object.")
    if not text and "data" not in obj and "extensions" not in obj:
        raise bad("message needs text, data or extensions.")
    return obj


class Conversations:
    def __init__(self, ctx: CompanyContext) -> None:
        self.ctx = ctx
        self.agent = CompanyAgent(ctx)
        self._conversations: dict[str, Conversation] = {}
        self._messages: dict[tuple[str, str, str], _Stored] = {}

    def routes(self, base_path: str = "/poppy/conversations") -> list[Route]:
        ctx = self.ctx
        return [
            Route(
                base_path + c.CONVERSATION_CREATE_PATH, guarded(ctx, self.create), methods=["POST"]
            ),
            Route(
                base_path + c.CONVERSATION_MESSAGES_PATH, guarded(ctx, self.send), methods=["POST"]
            ),
            Route(base_path + c.CONVERSATION_EVENTS_PATH, guarded(ctx, self.read), methods=["GET"]),
        ]

    def _get(self, request: Request, session: VerifiedSession) -> Conversation:
        conversation = self._conversations.get(request.path_params["conversation_id"])
        # Someone else's conversation looks exactly like a missing one.
        if conversation is None or conversation.owner != (session.client_id, session.user_id):
            raise Refusal(
                404,
                {
                    "error": "conversation_not_found",
                    "error_description": "There is no such conversation.",
                },
            )
        if conversation.account is not None:
            caller: Caller = request_flags(request.scope)["caller"]
            if caller.token is None:
                # 0.2: a conversation that used the account needs sign-in, to read it too.
                raise Challenge(
                    c.SIGN_IN_REQUIRED,
                    READ_NEEDS,
                    "Sign in to Manzanita Outfitters to continue this conversation.",
                )
            if caller.token.account_id != conversation.account:
                raise Refusal(
                    404,
                    {
                        "error": "conversation_not_found",
                        "error_description": "There is no such conversation.",
                    },
                )
        return conversation

    async def create(self, request: Request, session: VerifiedSession) -> Response:
        body = await json_body(request)
        message = validate_message(body.get("message"))
        return await self._handle(request, session, None, message)

    async def send(self, request: Request, session: VerifiedSession) -> Response:
        conversation = self._get(request, session)
        body = await json_body(request)
        message = validate_message(body.get("message"))
        return await self._handle(request, session, conversation, message)

    async def read(self, request: Request, session: VerifiedSession) -> Response:
        conversation = self._get(request, session)
        start = parse_cursor(request.query_params.get("cursor"), conversation)
        wait = _wait_seconds(request.query_params.get("wait"))
        if wait > 0 and len(conversation.events) <= start:
            async with conversation.changed:
                try:
                    await asyncio.wait_for(
                        conversation.changed.wait_for(lambda: len(conversation.events) > start),
                        wait,
                    )
                except TimeoutError:
                    pass
        return JSONResponse(self._page(conversation, start))

    def _page(self, conversation: Conversation, start: int) -> dict[str, Any]:
        events = conversation.events[start : start + PAGE_SIZE]
        end = start + len(events)
        return {
            "conversation_id": conversation.conversation_id,
            "events": events,
            "cursor": cursor_for(end),
            "has_more": end < len(conversation.events),
            "status": "idle",
            "responder": "agent",
        }

    async def _handle(
        self,
        request: Request,
        session: VerifiedSession,
        conversation: Conversation | None,
        message: dict[str, Any],
    ) -> Response:
        ctx = self.ctx
        uses_ext = ctx.operations_in_use(request.headers)
        approval: Approval | None = None
        if uses_ext:
            try:
                approval = approval_from_message(message)
            except InvalidApproval as exc:
                return error(400, "invalid_request", str(exc))
        target = conversation.conversation_id if conversation else "new"
        key = (session.client_id, session.user_id, message["id"])
        content = canonical_json({"target": target, "message": message})
        stored = self._messages.get(key)
        if stored is not None:
            if stored.content != content:
                return error(
                    409, "message_id_conflict", "A different message was already sent with this id."
                )
            if stored.status is None:
                return error(
                    503,
                    "message_in_progress",
                    "This message is still being handled.",
                    {"Retry-After": str(RETRY_AFTER_SECONDS)},
                )
            return JSONResponse(stored.body, status_code=stored.status)
        if approval is not None and ctx.counters.take_busy():
            return error(
                503,
                "temporarily_unavailable",
                "Busy; try again shortly.",
                {"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        stored = self._messages[key] = _Stored(content)
        try:
            if conversation is None:
                conversation = Conversation(new_id("cnv_"), (session.client_id, session.user_id))
                self._conversations[conversation.conversation_id] = conversation
            async with conversation.turn:
                start = len(conversation.events)
                await self._append(conversation, user_event(message))
                caller = request_flags(request.scope)["caller"]
                if caller.token is not None and conversation.account is None:
                    conversation.account = caller.token.account_id
                replies, performed = await self.agent.respond(
                    conversation, message, approval, caller, uses_ext
                )
                for reply in replies:
                    if reply.challenge is not None:
                        await self._append(conversation, authorization_event(reply.challenge))
                    await self._append(conversation, company_event(reply))
            cursor_param = request.query_params.get("cursor")
            if cursor_param:
                start = parse_cursor(cursor_param, conversation)
            page = self._page(conversation, start)
            if target == "new":
                status, body = 201, page
            else:
                status, body = 202, {k: page[k] for k in ("events", "cursor", "has_more")}
        except BaseException:
            self._messages.pop(key, None)  # nothing to replay: let a retry be handled afresh
            raise
        stored.status, stored.body = status, body
        if performed and ctx.counters.take_drop():
            request_flags(request.scope)["drop"] = True
        return JSONResponse(body, status_code=status)

    async def _append(self, conversation: Conversation, event: dict[str, Any]) -> None:
        async with conversation.changed:
            conversation.events.append(event)
            conversation.changed.notify_all()


def _wait_seconds(value: str | None) -> float:
    if value is None or value == "":
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        raise Refusal(
            400,
            {"error": "invalid_request", "error_description": "wait must be a number of seconds."},
        ) from None
    if not seconds >= 0:
        raise Refusal(
            400,
            {"error": "invalid_request", "error_description": "wait must be 0 or more seconds."},
        )
    return min(seconds, MAX_WAIT_SECONDS)


__all__ = [
    "CompanyAgent",
    "Conversation",
    "Conversations",
    "MAX_WAIT_SECONDS",
    "Reply",
    "cursor_for",
    "parse_cursor",
    "validate_message",
]
