"""A demo conversation's record and the events it is made of (0.2 layout, see conventions.py).

`Conversation` is one conversation's state (its events, what was last proposed in it, whose it
is); `Reply` is one Company Agent message before it becomes an event. The events are built here
in the shapes the routes (conversation.py) serve: the echoed user message, an `authorization`
event, and the Company's message carrying its operation in `extensions.operations.operation`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from poppy_tui.demo.accounts.guard import Challenge
from poppy_tui.demo.shop import Action
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.timestamps import format_rfc3339, utcnow


@dataclass
class Conversation:
    conversation_id: str
    owner: tuple[str, str]  # (client_id, user_id): whose conversation it is
    events: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Action] = field(
        default_factory=dict
    )  # operation_id -> what was last proposed
    latest: dict[str, str] = field(default_factory=dict)  # operation_id -> revision last sent
    exchange_op: str | None = None  # the exchange under discussion, for "size L instead"
    account: str | None = None  # the account it used, once a signed-in message came (accounts only)

    _loop: Any = field(default=None, repr=False)
    _changed: asyncio.Condition | None = field(default=None, repr=False)
    _turn: asyncio.Lock | None = field(default=None, repr=False)

    @property
    def channel(self) -> str:
        return f"conversation:{self.conversation_id}"

    def _primitives(self) -> tuple[asyncio.Condition, asyncio.Lock]:
        # asyncio primitives belong to one loop; a Company restarted on the same
        # state (tests do this) serves from a new one.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._changed is None or self._turn is None:
            self._loop, self._changed, self._turn = loop, asyncio.Condition(), asyncio.Lock()
        return self._changed, self._turn

    @property
    def changed(self) -> asyncio.Condition:
        return self._primitives()[0]

    @property
    def turn(self) -> asyncio.Lock:
        """One message at a time, in order."""
        return self._primitives()[1]


@dataclass
class Reply:
    text: str
    operation: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    challenge: Challenge | None = None  # sent as an `authorization` event before the message


def now_text() -> str:
    return format_rfc3339(utcnow().replace(microsecond=0))


def user_event(message: dict[str, Any]) -> dict[str, Any]:
    echoed: dict[str, Any] = {
        "id": message["id"],
        "role": "user",
        "author": message.get("author") or {"type": "agent"},
    }
    for name in ("text", "data", "extensions"):
        if name in message:
            echoed[name] = message[name]
    return {"id": new_id("evt_"), "type": "message", "created_at": now_text(), "message": echoed}


def authorization_event(challenge: Challenge) -> dict[str, Any]:
    """0.2's sign-in mid-conversation: an `authorization` event, and a message saying so."""
    return {
        "id": new_id("evt_"),
        "type": c.CONVERSATION_AUTHORIZATION_EVENT,
        "created_at": now_text(),
        **challenge.event_fields(),
    }


def company_event(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": new_id("msg_"),
        "role": "company",
        "author": {"type": "agent"},
        "text": reply.text,
    }
    if reply.data is not None:
        message["data"] = reply.data
    if reply.operation is not None:
        message["extensions"] = {c.EXTENSION_NAME: {"operation": reply.operation}}
    return {"id": new_id("evt_"), "type": "message", "created_at": now_text(), "message": message}
