"""What every HTTP request to `poppy-tui web` passes before a page sees it, and what every answer
carries.

Before (in this order; each refusal a short plain-text page, and a log line that holds no secret):
1. `Host` names this server (its listen address, `localhost` on loopback, an --allow-host name),
   else **421** (DNS rebinding: a page of another site whose name resolves to 127.0.0.1 reaches
   this server under its own name; agent/listen.py). The port may differ (a port forward).
2. A request that may change anything (every method but GET and HEAD) carries an `Origin` that
   is this server's own origin, else **403**: a form on another site posts with its own Origin
   (or, in a privacy mode, "null"), and a browser always sends one with a POST. `Sec-Fetch-Site`,
   where the browser sends it, must say same-origin too. OPTIONS (a CORS preflight) gets 405
   with no CORS header at all: no other site may read or send anything here.
3. A body over MAX_BODY_BYTES gets **413**, by its Content-Length or once that many bytes came.

After, on every answer: `Cache-Control: no-store` (a review or a credential never sits in a
cache), a strict Content-Security-Policy (scripts and styles only from this server's own files,
nothing inline, no framing: `frame-ancestors 'none'`, with X-Frame-Options for older browsers),
no MIME sniffing, no Referer to another site (a pairing link's code never leaves in one; "same-origin", as "no-referrer" makes browsers send `Origin: null` with the page's own form posts).
"""

from __future__ import annotations

import logging
import time
from typing import Any
from collections.abc import Awaitable, Callable

from poppy_tui.agent.listen import Served, origin_parts, split_host

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BODY_BYTES = 64 * 1024
LOG_EVERY_SECONDS = 10.0
SAFE_METHODS = ("GET", "HEAD")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"cache-control", b"no-store"),
    (b"pragma", b"no-cache"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


class BodyTooLarge(Exception):
    """Raised from receive() once a body passes the limit (the page answers 413)."""


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == name]


class WebGuard:
    """ASGI middleware in front of the Starlette app (see the module docstring)."""

    def __init__(self, app: Any, served: Served, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.served = served
        self.max_body_bytes = max_body_bytes
        # Origins browsers use besides the served one: --public-url's, behind a tunnel.
        self.extra_origins: set[tuple[str, str, int]] = set()
        self._logged: dict[int, float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            status, message = refusal
            self._log(status, scope, message)
            await _plain(send, status, message)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                ours = {name for name, _ in SECURITY_HEADERS}
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in ours and not k.lower().startswith(b"access-control-")
                ]
                message = {**message, "headers": headers + SECURITY_HEADERS}
            await send(message)

        received = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge
            return message

        await self.app(scope, limited_receive, send_with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        hosts = _headers(scope, b"host")
        parsed = split_host(hosts[0]) if len(hosts) == 1 else None
        if parsed is None or parsed[0] not in self.served.names:
            return (
                421,
                "poppy-tui: this page does not answer for that Host; it answers for "
                + ", ".join(self.served.shown_names())
                + " (the person can add a name with --allow-host NAME)",
            )
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            return 405, "poppy-tui: this page answers no cross-origin requests"
        if method not in SAFE_METHODS:
            origins = _headers(scope, b"origin")
            if len(origins) != 1 or not self.own_origin(origins[0]):
                return (
                    403,
                    "poppy-tui: refused a request from a web page of another site (its Origin "
                    "header), or from a browser that sent none",
                )
            site = _headers(scope, b"sec-fetch-site")
            if site and site[0].strip().lower() not in ("same-origin", "none"):
                return 403, "poppy-tui: refused a request another site made (Sec-Fetch-Site)"
            lengths = _headers(scope, b"content-length")
            if lengths:
                try:
                    too_long = int(lengths[0]) > self.max_body_bytes
                except ValueError:
                    return 400, "poppy-tui: a Content-Length that is not a number"
                if too_long:
                    return 413, "poppy-tui: that request is too large for this page"
        return None

    def own_origin(self, origin: str) -> bool:
        parts = origin_parts(origin)
        if parts is None:
            return False
        scheme, name, port = parts
        default = 443 if scheme == "https" else 80
        if (scheme, name, port if port is not None else default) in self.extra_origins:
            return True
        return self.served.is_own_origin(scheme, name, port)

    def _log(self, status: int, scope: Scope, message: str) -> None:
        now = time.monotonic()
        if now - self._logged.get(status, -LOG_EVERY_SECONDS) < LOG_EVERY_SECONDS:
            return
        self._logged[status] = now
        client = scope.get("client") or ("?", 0)
        log.warning(
            "refused a request from %s with %d: %s",
            client[0],
            status,
            message.removeprefix("poppy-tui: "),
        )


async def _plain(send: Send, status: int, message: str) -> None:
    body = (message + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
