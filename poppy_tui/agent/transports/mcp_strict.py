"""Duplicate member names in what an MCP server sends, caught before the SDK reads it.

The MCP SDK parses JSON-RPC with pydantic, which keeps the last of two members with the same
name: a tool result with two `summary` members would be read one way by us and maybe another
way by the Company. It also reads NaN and Infinity, which JSON doesn't have (I-JSON refuses
them, and so does `loads_strict`). Every other Company document is parsed with `loads_strict`
(protocol/jsonlimits.py); here the same check runs on the bytes of each JSON answer and each
server-sent event as they pass from the network to the SDK. A duplicate is reported to
`on_malformed` (the MCP transport turns it into a malformed-answer outcome naming the member)
and the stream is broken off, so the SDK never sees the ambiguous message.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import AsyncIterator, Callable

import httpx2

from poppy_tui.protocol.conventions import MAX_RESPONSE_BYTES
from poppy_tui.protocol.jsonlimits import MalformedJson, loads_strict


class MalformedMessage(httpx2.RemoteProtocolError):
    """Raised into the SDK's read of the stream: the message can't be read one way only."""


def _check(text: str | bytes) -> None:
    try:
        loads_strict(text)
    except MalformedJson:
        raise
    except (ValueError, RecursionError):
        pass  # not JSON at all: the SDK reports that itself


class _CheckedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, event_stream: bool, on_malformed: Callable[[str], None]) -> None:
        self._inner = inner
        self._event_stream = event_stream
        self._on_malformed = on_malformed
        self._pending = b""  # the JSON body so far, or the SSE text not yet split into lines
        self._data: list[bytes] = []  # the current event's data lines

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            try:
                if self._event_stream:
                    self._feed_events(chunk)
                else:
                    self._pending += chunk
                    if len(self._pending) > MAX_RESPONSE_BYTES:
                        self._pending = (
                            b""  # past the bound nothing is kept; http.py refuses such bodies
                        )
            except MalformedJson as exc:
                self._on_malformed(str(exc))
                raise MalformedMessage(f"the MCP server sent a malformed message: {exc}") from None
            yield chunk
        if not self._event_stream and self._pending:
            try:
                _check(self._pending)
            except MalformedJson as exc:
                # The last bytes are already with the SDK; recording it is what makes the
                # transport refuse the result it parsed.
                self._on_malformed(str(exc))
                raise MalformedMessage(f"the MCP server sent a malformed message: {exc}") from None

    def _feed_events(self, chunk: bytes) -> None:
        self._pending += chunk
        if len(self._pending) > MAX_RESPONSE_BYTES:
            self._pending, self._data = b"", []
            return
        *lines, self._pending = (
            self._pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        )
        for line in lines:
            if not line:
                if self._data:
                    data, self._data = b"\n".join(self._data), []
                    _check(data)
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)

    async def aclose(self) -> None:
        await self._inner.aclose()


class StrictJsonTransport(httpx2.AsyncBaseTransport):
    """Wraps the (guarded) transport the MCP SDK's client uses."""

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, on_malformed: Callable[[str | None, str], None]
    ) -> None:
        self._inner = inner
        self._on_malformed = on_malformed

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        kind = response.headers.get("content-type", "")
        if "json" in kind or "event-stream" in kind:
            method = _method_of(request)
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                # Asked for identity; compressed bytes could hide a duplicate from the check.
                self._on_malformed(
                    method, f"the answer is {encoding}-compressed though poppy-tui asked for none"
                )
                await response.aclose()
                raise MalformedMessage(
                    "the MCP server compressed its answer though poppy-tui asked for none"
                )
            response.stream = _CheckedStream(
                response.stream,
                "event-stream" in kind,
                lambda reason: self._on_malformed(method, reason),
            )
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _method_of(request: httpx2.Request) -> str | None:
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return message.get("method") if isinstance(message, dict) else None
