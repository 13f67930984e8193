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
3. `Authorization: Bearer <token>` with the current token (http_token.TokenFile, compared in
   constant time), else **401** with `WWW-Authenticate: Bearer` (RFC 6750 section 3).

Bodies over the limit (413) and sessions past the limit (503) are the SDK's own checks,
configured by http_gate; this adds `Retry-After` to a 503 that lacks one.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from poppy_tui.agent.listen import Served, host_key, split_host
from poppy_tui.mcp_server.http_token import TokenFile

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

RETRY_AFTER_SECONDS = "5"
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


class HttpGuard:
    """ASGI middleware in front of the SDK's streamable-HTTP app (see the module docstring)."""

    def __init__(self, app: Any, tokens: TokenFile, served: Served) -> None:
        self.app = app
        self.tokens = tokens
        self.served = served
        self._logged: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan: the SDK's session manager starts there
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            status, message, extra = refusal
            self._log(status, scope, message)
            body, headers = _json_error(
                status, message, UNAUTHORIZED_CODE if status == 401 else -32600
            )
            await send(
                {"type": "http.response.start", "status": status, "headers": headers + extra}
            )
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_retry_after(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 503:
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"retry-after" for name, _ in headers):
                    message = {
                        **message,
                        "headers": headers + [(b"retry-after", RETRY_AFTER_SECONDS.encode())],
                    }
                self._log(
                    503, scope, "too many open sessions; a new one was refused (Retry-After sent)"
                )
            await send(message)

        await self.app(scope, receive, send_with_retry_after)

    def _refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
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
                    "the person prints the token with 'poppy-tui mcp token'"
                ),
                [(b"www-authenticate", b'Bearer realm="poppy-tui"')],
            )
        scheme, _, presented = authorizations[0].strip().partition(" ")
        if scheme.lower() != "bearer" or not self.tokens.accepts(
            presented.strip().encode("latin-1")
        ):
            return (
                401,
                (
                    "poppy-tui: that bearer token is not the current one (it may have been rotated); "
                    "the person prints the current one with 'poppy-tui mcp token'"
                ),
                [(b"www-authenticate", b'Bearer realm="poppy-tui", error="invalid_token"')],
            )
        return None

    def _own_origin(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin.strip())
            port = parts.port
        except ValueError:
            return False
        if not parts.hostname or parts.path or parts.query or parts.username is not None:
            return False
        return self.served.is_own_origin(parts.scheme, host_key(parts.hostname), port)

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


def _headers(raw: Iterable[tuple[bytes, bytes]], wanted: tuple[bytes, ...]) -> list[list[str]]:
    found: list[list[str]] = [[] for _ in wanted]
    for name, value in raw:
        lowered = name.lower()
        if lowered in wanted:
            found[wanted.index(lowered)].append(value.decode("latin-1"))
    return found
