"""The connections of `poppy-tui mcp --http`: what uvicorn has no setting for, kept small.

uvicorn's `timeout_keep_alive` only runs between requests, and its `limit_concurrency` counts
every open connection alike, so any local process could open connections that send half a
request head and hold them for ever: once they fill the limit, every agent gets 503. Here:

- **A request head must arrive whole within HEAD_SECONDS** of its first byte (of the connection,
  for the first request): else the connection gets `408 Request Timeout` and is closed.
- **Connections that have not yet carried a valid token are ANONYMOUS**, and at most
  MAX_ANONYMOUS are kept: one more closes the oldest of them (with `503` and `Retry-After` if it
  hadn't been answered). A flood can only push out the flood: a real agent's connection sends its
  head at once and, with a valid token, leaves the anonymous ones before it could be the oldest.
- Connections that carried an agent's valid token are counted by agent (the HTTP guard refuses an
  agent's request past its cap with `429`).

The protocol is uvicorn's own h11 one (`H11Protocol`, a public class), extended at three of its
asyncio callbacks; the state read is h11's public `Connection.their_state` and `trailing_data`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEAD_SECONDS = 5.0
MAX_ANONYMOUS = 128
RETRY_AFTER_SECONDS = 5
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
_PUSHED_OUT = (
    b"HTTP/1.1 503 Service Unavailable\r\nretry-after: %d\r\nconnection: close\r\n"
    b"content-length: 0\r\n\r\n" % RETRY_AFTER_SECONDS
)

Key = tuple[Any, ...]


class ConnectionPool:
    """Every open connection of one server, by the peer address uvicorn puts in each request's
    scope (`client`): anonymous ones oldest first, the others by the agent whose token they carried."""

    def __init__(self, head_seconds: float = HEAD_SECONDS, max_anonymous: int = MAX_ANONYMOUS):
        self.head_seconds = head_seconds
        self.max_anonymous = max_anonymous
        self.anonymous: OrderedDict[Key, GateProtocol] = OrderedDict()
        self.by_key: dict[Key, GateProtocol] = {}
        self.agent_of: dict[Key, str] = {}
        self.counts: dict[str, int] = {}
        # What happened, for the logs and the tests: heads timed out, anonymous pushed out.
        self.timed_out = 0
        self.pushed_out = 0

    def opened(self, connection: GateProtocol) -> None:
        key = connection.key
        self.by_key[key] = connection
        self.anonymous[key] = connection
        connection.arm_head_deadline()
        while len(self.anonymous) > self.max_anonymous:
            _, oldest = self.anonymous.popitem(last=False)
            self.pushed_out += 1
            oldest.push_out()

    def closed(self, connection: GateProtocol) -> None:
        key = connection.key
        if self.by_key.get(key) is connection:
            del self.by_key[key]
            self.anonymous.pop(key, None)
            agent = self.agent_of.pop(key, None)
            if agent is not None:
                self.counts[agent] -= 1
                if not self.counts[agent]:
                    del self.counts[agent]

    def authenticated(self, client: Any, principal: str) -> int:
        """The connection `client` carried `principal`'s valid token: no longer anonymous. Returns
        how many open connections carried that principal's token (this one included)."""
        key = tuple(client) if client else ()
        if key not in self.by_key:
            return self.counts.get(principal, 0)  # not one of ours (an app served without it)
        self.anonymous.pop(key, None)
        before = self.agent_of.get(key)
        if before != principal:
            if before is not None:
                self.counts[before] -= 1
                if not self.counts[before]:
                    del self.counts[before]
            self.agent_of[key] = principal
            self.counts[principal] = self.counts.get(principal, 0) + 1
        return self.counts[principal]

    def close_agent(self, principal: str) -> int:
        """Close every connection that carried `principal`'s token (it was revoked)."""
        keys = [k for k, p in self.agent_of.items() if p == principal]
        for key in keys:
            self.by_key[key].transport.close()
        return len(keys)

    def protocol_class(self) -> type[GateProtocol]:
        pool = self

        class BoundGateProtocol(GateProtocol):
            connections_of = pool

        return BoundGateProtocol


class GateProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request head and a place in the pool."""

    connections_of: ConnectionPool

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.head_deadline: asyncio.TimerHandle | None = None
        self.key: Key = tuple(self.client) if self.client else (id(self),)
        self.connections_of.opened(self)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self.arm_head_deadline()  # a head has begun: it has HEAD_SECONDS from its first byte
        else:
            self.disarm_head_deadline()  # complete (or nothing pending: keep-alive's to time)

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm_head_deadline()
        self.connections_of.closed(self)
        super().connection_lost(exc)

    def arm_head_deadline(self) -> None:
        if self.head_deadline is None:
            self.head_deadline = self.loop.call_later(
                self.connections_of.head_seconds, self.head_timed_out
            )

    def disarm_head_deadline(self) -> None:
        if getattr(self, "head_deadline", None) is not None:
            self.head_deadline.cancel()  # type: ignore[union-attr]
            self.head_deadline = None

    def head_timed_out(self) -> None:
        self.head_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self.connections_of.timed_out += 1
        if self.conn.our_state is h11.IDLE:
            self.transport.write(_TIMED_OUT)
        self.transport.close()

    def push_out(self) -> None:
        self.disarm_head_deadline()
        if self.transport.is_closing():
            return
        if self.conn.our_state is h11.IDLE and self.conn.their_state is h11.IDLE:
            self.transport.write(_PUSHED_OUT)
        self.transport.close()
