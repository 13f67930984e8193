"""What every HTTP request to `poppy-tui mcp --http` passes before the MCP SDK sees it.

In this order, each refusal a short JSON-RPC error body (what MCP clients show) and a log line
that never holds the token:

1. `Host` must name this server: its listen address, `localhost` when it listens on loopback, or
   a name given with --allow-host. Otherwise **421 Misdirected Request** (RFC 9110 section
   15.5.20: the request was meant for another server; also what the MCP SDK answers). A
   DNS-rebinding page reaches a loopback server under its own domain name, so this refuses it
   even from a browser that sends no Origin. The name is what matters; the port may differ (as
   the SDK's own `localhost:*` default allows), because a port forward (`ssh -R 9000:...`,
   `docker -p`) hands on the port the client used.
2. `Origin`, when present, must be this server's own origin (scheme, name and port), else **403** (MCP transport
   specification, streamable HTTP, security warning: servers MUST validate Origin and answer 403
   for an invalid one). Agents send no Origin; a web page always does.
3. `Authorization: Bearer <token>` with an agent's token (agent/gate/credentials.py, compared in
   constant time), else **401** with `WWW-Authenticate: Bearer` (RFC 6750 section 3).
4. The agent's own caps (AgentLimits): connections, sessions and requests in flight, else **429**
   with `Retry-After`, so one agent can never lock the others out; and all agents together at
   most MAX_IN_FLIGHT requests in flight, else **503** with `Retry-After`.

Every refusal closes its connection (`connection: close`): a process without a token holds a
connection only while it sends a request head (http_connections.py times that out). A request
that passes goes on with the agent in its ASGI scope as the MCP SDK's AuthenticatedUser: the SDK
then binds each session to the token that opened it (another agent's session ID is 404), and the
tools read who is calling (callers.py). When an agent's token is revoked, `revoke_gone()` ends
its sessions (as a DELETE from the agent would), its calls in flight and its connections.

Bodies over the limit (413) and sessions past the server's limit (503) are the SDK's own checks,
configured by http_gate; this adds `Retry-After` to a 503 that lacks one.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Awaitable, Callable, Iterable

from poppy_tui.agent.gate.credentials import Credentials, GateAgent
from poppy_tui.agent.listen import Served, origin_parts, split_host
from poppy_tui.mcp_server.callers import scope_user
from poppy_tui.mcp_server.http_connections import ConnectionPool

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

RETRY_AFTER_SECONDS = "5"
# All agents together: requests in flight (a waiting tool call is one, so is an open GET stream).
MAX_IN_FLIGHT = 512
SESSION_ID = b"mcp-session-id"
PROTOCOL_VERSION = b"mcp-protocol-version"
# At most one log line per kind of refusal in this many seconds (a flood must not flood stderr).
LOG_EVERY_SECONDS = 10.0
UNAUTHORIZED_CODE = -32001  # a JSON-RPC server error code (the -32000..-32099 range)


def _json_error(status: int, message: str, code: int) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()
    return body, [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]


@dataclass(frozen=True)
class AgentLimits:
    """Each agent's own caps (docs/mcp.md, "Limits")."""

    connections: int = 64
    sessions: int = 16
    in_flight: int = 32
    session_idle_seconds: float = 30 * 60.0


@dataclass
class _Session:
    in_flight: int = 0
    last_active: float = field(default_factory=time.monotonic)
    protocol_version: bytes | None = None


@dataclass
class _Load:
    """One agent's sessions, requests in flight and the scopes to cancel them by."""

    agent: GateAgent
    sessions: dict[str, _Session] = field(default_factory=dict)
    in_flight: int = 0
    calls: set[Any] = field(default_factory=set)

    def open_sessions(self, idle_seconds: float) -> int:
        """Sessions still open: the SDK closes one that had no request in flight for
        `idle_seconds` (its session_idle_timeout, the same figure), so those are gone."""
        now = time.monotonic()
        for sid in [
            sid
            for sid, seen in self.sessions.items()
            if not seen.in_flight and now - seen.last_active >= idle_seconds
        ]:
            del self.sessions[sid]
        return len(self.sessions)


def _modern(version: str | None) -> bool:
    """A request of a protocol version without sessions (2026-07-28 and later)."""
    if version is None:
        return False
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    return version not in HANDSHAKE_PROTOCOL_VERSIONS


Refusal = tuple[int, str, list[tuple[bytes, bytes]]]


class HttpGuard:
    """ASGI middleware in front of the SDK's streamable-HTTP app (see the module docstring)."""

    def __init__(
        self,
        app: Any,
        credentials: Credentials,
        served: Served,
        *,
        connections: ConnectionPool | None = None,
        limits: AgentLimits | None = None,
        path: str = "/mcp",
    ) -> None:
        self.app = app
        self.credentials = credentials
        self.served = served
        self.connections = connections or ConnectionPool()
        self.limits = limits or AgentLimits()
        self.path = path
        self.loads: dict[str, _Load] = {}
        self.in_flight = 0
        self._logged: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan: the SDK's session manager starts there
            return
        found = self._refusal(scope)
        if not isinstance(found, GateAgent):
            await self._refuse(scope, send, found)
            return
        load = self.loads.get(found.principal)
        if load is None:
            load = self.loads[found.principal] = _Load(found)
        refused = self._over_limits(scope, load)
        if refused is not None:
            await self._refuse(scope, send, refused)
            return
        await self._serve(scope, receive, send, load)

    async def _refuse(self, scope: Scope, send: Send, refusal: Refusal) -> None:
        status, message, extra = refusal
        self._log(status, scope, message)
        body, headers = _json_error(status, message, UNAUTHORIZED_CODE if status == 401 else -32600)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                # Closed after the answer: a refused connection holds no slot.
                "headers": headers + extra + [(b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _over_limits(self, scope: Scope, load: _Load) -> Refusal | None:
        retry = [(b"retry-after", RETRY_AFTER_SECONDS.encode())]
        name = load.agent.name
        if self.connections.authenticated(scope.get("client"), load.agent.principal) > (
            self.limits.connections
        ):
            return (
                429,
                f"poppy-tui: the agent '{name}' has {self.limits.connections} connections open "
                "already; reuse them (Retry-After)",
                retry,
            )
        if load.in_flight >= self.limits.in_flight:
            return (
                429,
                f"poppy-tui: the agent '{name}' has {self.limits.in_flight} requests in flight "
                "already; wait for one to end (Retry-After)",
                retry,
            )
        headers = dict(_header_pairs(scope["headers"], (SESSION_ID, PROTOCOL_VERSION)))
        opens_session = (
            scope["method"] == "POST"
            and SESSION_ID not in headers
            and not _modern(headers.get(PROTOCOL_VERSION))
        )
        if opens_session and load.open_sessions(self.limits.session_idle_seconds) >= (
            self.limits.sessions
        ):
            return (
                429,
                f"poppy-tui: the agent '{name}' has {self.limits.sessions} MCP sessions open "
                "already; end one (DELETE) or reuse it (Retry-After)",
                retry,
            )
        if self.in_flight >= MAX_IN_FLIGHT:
            return (
                503,
                f"poppy-tui: {MAX_IN_FLIGHT} requests are in flight already (Retry-After)",
                retry,
            )
        return None

    async def _serve(self, scope: Scope, receive: Receive, send: Send, load: _Load) -> None:
        import anyio

        headers = dict(_header_pairs(scope["headers"], (SESSION_ID, PROTOCOL_VERSION)))
        asked_for = headers.get(SESSION_ID)
        session = load.sessions.get(asked_for) if asked_for else None
        if session is not None:
            session.in_flight += 1
            version = headers.get(PROTOCOL_VERSION)
            if version:
                session.protocol_version = version.encode("latin-1")
        started = completed = False

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal started, completed
            if message["type"] == "http.response.start":
                started = True
                message = self._noted_response(message, scope, load, asked_for, headers)
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                completed = True
            await send(message)

        load.in_flight += 1
        self.in_flight += 1
        cancel = anyio.CancelScope()
        load.calls.add(cancel)
        try:
            with cancel:
                await self.app({**scope, "user": scope_user(load.agent)}, receive, watched_send)
        finally:
            load.calls.discard(cancel)
            load.in_flight -= 1
            self.in_flight -= 1
            if session is not None:
                session.in_flight -= 1
                session.last_active = time.monotonic()
        if cancel.cancel_called:  # revoked mid-request: end the answer cleanly
            if not started:
                await self._refuse(scope, send, _revoked(load.agent.name))
            elif not completed:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _noted_response(
        self,
        message: dict[str, Any],
        scope: Scope,
        load: _Load,
        asked_for: str | None,
        headers: dict[bytes, str],
    ) -> dict[str, Any]:
        """Note what the SDK's answer says of sessions; a 503 gets Retry-After."""
        status = message["status"]
        given = dict(_header_pairs(message.get("headers", []), (SESSION_ID,))).get(SESSION_ID)
        if asked_for is None and given and status < 400:
            load.sessions[given] = _Session(
                protocol_version=(headers.get(PROTOCOL_VERSION) or "").encode() or None
            )
        elif asked_for is not None and (
            status == 404 or (scope["method"] == "DELETE" and status < 300)
        ):
            load.sessions.pop(asked_for, None)
        if status == 503:
            extra = list(message.get("headers", []))
            if not any(name.lower() == b"retry-after" for name, _ in extra):
                message = {
                    **message,
                    "headers": extra + [(b"retry-after", RETRY_AFTER_SECONDS.encode())],
                }
            self._log(
                503, scope, "too many open sessions; a new one was refused (Retry-After sent)"
            )
        return message

    async def revoke_gone(self) -> list[str]:
        """End everything of the agents whose token is no longer accepted: their sessions (each
        closed as the agent's own DELETE would), the calls still in flight, their connections.
        Returns their names."""
        accepted = self.credentials.principals()
        gone = [load for principal, load in self.loads.items() if principal not in accepted]
        for load in gone:
            del self.loads[load.agent.principal]
            for sid, seen in list(load.sessions.items()):
                await self._end_session(load.agent, sid, seen.protocol_version)
            for cancel in list(load.calls):
                cancel.cancel()
            self.connections.close_agent(load.agent.principal)
            log.warning(
                "the agent '%s' was revoked: its sessions and calls are closed", load.agent.name
            )
        return [load.agent.name for load in gone]

    async def _end_session(self, agent: GateAgent, sid: str, version: bytes | None) -> None:
        headers = [(b"host", b"localhost"), (SESSION_ID, sid.encode("latin-1"))]
        if version:
            headers.append((PROTOCOL_VERSION, version))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": self.served.scheme,
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": None,
            "server": None,
            "state": {},
            "user": scope_user(agent),
        }
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}

        async def discard(message: dict[str, Any]) -> None:
            pass

        try:
            await self.app(scope, receive, discard)
        # One session that won't end must not keep the others open (logged with its traceback).
        except Exception:
            log.warning("could not end a session of a revoked agent", exc_info=True)

    def _refusal(self, scope: Scope) -> Refusal | GateAgent:
        hosts, origins, authorizations = _headers(
            scope["headers"], (b"host", b"origin", b"authorization")
        )
        parsed = split_host(hosts[0]) if len(hosts) == 1 else None
        if parsed is None or parsed[0] not in self.served.names:
            return (
                421,
                (
                    "poppy-tui: this MCP server does not answer for that Host; it answers for "
                    + ", ".join(self.served.shown_names())
                    + " (the person can add a name with --allow-host NAME)"
                ),
                [],
            )
        if origins and not all(self._own_origin(origin) for origin in origins):
            return (
                403,
                "poppy-tui: refused a request from a web page of another site (its Origin header)",
                [],
            )
        if len(authorizations) != 1:
            return (
                401,
                (
                    "poppy-tui: this MCP server needs the header 'Authorization: Bearer <token>'; "
                    "the person makes an agent's token with 'poppy-tui mcp token --agent NAME'"
                ),
                [(b"www-authenticate", b'Bearer realm="poppy-tui"')],
            )
        scheme, _, presented = authorizations[0].strip().partition(" ")
        agent = (
            self.credentials.identify(presented.strip().encode("latin-1"))
            if scheme.lower() == "bearer"
            else None
        )
        if agent is None:
            return (
                401,
                (
                    "poppy-tui: that bearer token is not one of an agent's (it may have been rotated "
                    "or revoked); the person makes one with 'poppy-tui mcp token --agent NAME'"
                ),
                [(b"www-authenticate", b'Bearer realm="poppy-tui", error="invalid_token"')],
            )
        return agent

    def _own_origin(self, origin: str) -> bool:
        parts = origin_parts(origin)
        return parts is not None and self.served.is_own_origin(*parts)

    def _log(self, status: int, scope: Scope, message: str) -> None:
        kind = str(status)
        now = time.monotonic()
        if now - self._logged.get(kind, -LOG_EVERY_SECONDS) < LOG_EVERY_SECONDS:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return
        more = self._suppressed.pop(kind, 0)
        self._logged[kind] = now
        client = scope.get("client") or ("?", 0)
        # The message is ours (never a header's value, never the token).
        log.warning(
            "refused a request from %s with %d: %s%s",
            client[0],
            status,
            message.removeprefix("poppy-tui: "),
            f" ({more} more like it since the last note)" if more else "",
        )


def _revoked(name: str) -> Refusal:
    return (
        401,
        f"poppy-tui: the agent '{name}' was revoked; the person makes a new token with "
        f"'poppy-tui mcp token --agent NAME'",
        [(b"www-authenticate", b'Bearer realm="poppy-tui", error="invalid_token"')],
    )


def _header_pairs(
    raw: Iterable[tuple[bytes, bytes]], wanted: tuple[bytes, ...]
) -> Iterable[tuple[bytes, str]]:
    """(name, value) of the `wanted` headers, the last of each kind winning."""
    for name, value in raw:
        lowered = name.lower()
        if lowered in wanted:
            yield lowered, value.decode("latin-1")


def _headers(raw: Iterable[tuple[bytes, bytes]], wanted: tuple[bytes, ...]) -> list[list[str]]:
    found: list[list[str]] = [[] for _ in wanted]
    for name, value in raw:
        lowered = name.lower()
        if lowered in wanted:
            found[wanted.index(lowered)].append(value.decode("latin-1"))
    return found
