"""The conversation interface's HTTP exchanges (spec 8; 0.2 layout, see conventions.CONVERSATION_*).

POST {endpoint}                          create, with the first message     -> 201
POST {endpoint}/{id}/messages            send a message                      -> 202
GET  {endpoint}/{id}/events?cursor=&wait= read events (long poll)           -> 200

One request each, signed and classified like the other interfaces (transports/signed.py). What
the Company's events say is read in conversation_events.py; the messages and approvals we send
are kept and resent in conversation.py.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx2

from poppy_tui.agent.net import http
from poppy_tui.agent.sessions import Sessions
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.agent.transports import Exchange
from poppy_tui.agent.transports.signed import signed_exchange
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.challenges import Challenge
from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.outcomes import (
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
)
from poppy_tui.protocol.retry import parse_retry_after

# How long one events read may hold the connection open (the guide suggests ~30 s long polls).
MAX_WAIT_SECONDS = 25


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
