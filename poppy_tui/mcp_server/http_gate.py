"""`poppy-tui mcp --http`: the same tools as the stdio server (server.build_server), over MCP
streamable HTTP: the MCP SDK's session manager and app, served by uvicorn, behind HttpGuard
(Host, Origin, the agent's bearer token, the agent's caps). One process, one event loop, one
Agent: every request shares the store and the queue with the TUI, the CLI and `poppy-tui send
--watch`.

Limits (docs/mcp.md, "Limits"), the libraries' own where they have one: the SDK refuses a request
body over MAX_BODY_BYTES with 413 before it is read further, a new session past MAX_SESSIONS with
503 (open ones go on; nothing recorded is touched), and closes a session with no request in
flight for SESSION_IDLE_SECONDS (its client starts a new one); uvicorn closes a connection idle
between requests after KEEP_ALIVE_SECONDS and refuses a request head over MAX_HEAD_BYTES (h11).
What neither has (a deadline on the request head; connections without a token kept apart from
the agents'; each agent's own caps) is http_connections.py and http_guard.py. uvicorn's
`limit_concurrency` is not used: it counts a connection without a token like an agent's, which is
how a flood of half-sent heads locked every agent out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import Any
from collections.abc import Callable, Iterator

# Where to listen, TLS and the Host names served: shared with `poppy-tui web` (agent/listen.py).
from poppy_tui.agent.listen import (  # noqa: F401 (imported from here by the CLI and tests)
    Listen,
    ListenError,
    Served,
    bind,
    host_key,
    parse_listen,
    served_names,
    stop_on_signals,
    tls_context,
)
from poppy_tui.agent.gate.credentials import Credentials
from poppy_tui.mcp_server.http_connections import ConnectionPool
from poppy_tui.mcp_server.http_guard import AgentLimits, HttpGuard

log = logging.getLogger(__name__)

PATH = "/mcp"
DEFAULT_LISTEN = "127.0.0.1:8765"
MAX_BODY_BYTES = 1024 * 1024
MAX_SESSIONS = 256
SESSION_IDLE_SECONDS = 30 * 60.0
KEEP_ALIVE_SECONDS = 30
MAX_HEAD_BYTES = 16 * 1024
# How often the server looks for revoked agents (one stat() of each token file), so that their
# sessions close at once, not at their next request.
REVOCATION_CHECK_SECONDS = 0.25
# How long a stop waits for requests in flight (a waiting tool call may wait for an hour; its
# operation stays in the queue either way).
SHUTDOWN_GRACE_SECONDS = 3
# The loggers of the serving side: warnings and errors reach stderr; uvicorn's access log is off
# (it would print every request line; none holds the token, but nothing needs them).
SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "mcp", "poppy_tui.mcp_server", "poppy_tui.agent.gate")


def endpoint_url(listen: Listen, port: int, tls: bool) -> str:
    shown = listen.host if listen.host not in ("0.0.0.0", "::") else "127.0.0.1"
    if ":" in shown:
        shown = f"[{shown}]"
    return f"{'https' if tls else 'http'}://{shown}:{port}{PATH}"


def build_app(
    agent: Any,
    credentials: Credentials,
    served: Served,
    *,
    max_sessions: int = MAX_SESSIONS,
    session_idle_seconds: float = SESSION_IDLE_SECONDS,
    max_body_bytes: int = MAX_BODY_BYTES,
    connections: ConnectionPool | None = None,
    agent_limits: AgentLimits | None = None,
) -> HttpGuard:
    """The ASGI app: HttpGuard in front of the SDK's streamable-HTTP app for the stdio server's tools."""
    from mcp.server.transport_security import TransportSecuritySettings

    from poppy_tui.mcp_server.server import build_server

    server = build_server(agent)
    # HttpGuard checks Host and Origin (as RFC 9110 compares host names: case-insensitively); the
    # SDK's own check compares exact strings, so it would refuse `Host: LOCALHOST:8765`.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        max_request_body_size=max_body_bytes,
        session_idle_timeout=session_idle_seconds,
        max_sessions=max_sessions,
        transport_security=security,
    )
    limits = agent_limits or AgentLimits(session_idle_seconds=session_idle_seconds)
    return HttpGuard(app, credentials, served, connections=connections, limits=limits, path=PATH)


class _ShutdownNoise(logging.Filter):
    """Drops what uvicorn logs when a stop cancels calls still waiting for the person (a
    traceback per call, and a count): expected, and the CLI says the queue keeps them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            return False
        return "timeout graceful shutdown exceeded" not in record.getMessage()


def quiet_server_logs() -> None:
    """Warnings and errors of the serving side on stderr, one line each; nothing below."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("poppy-tui mcp: %(message)s"))
    handler.addFilter(_ShutdownNoise())
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True


async def serve_http(
    agent: Any,
    listen: Listen,
    credentials: Credentials,
    *,
    allowed_hosts: list[str],
    tls: ssl.SSLContext | None,
    started: Callable[[str], None],
    stopping: asyncio.Event | None = None,
    **limits: Any,
) -> None:
    """Serve until SIGINT/SIGTERM (or `stopping` is set); `started(url)` once it accepts requests.
    `limits`: build_app's (tests make them small), and `head_seconds`, `max_anonymous` for the
    connection pool."""
    import uvicorn

    sock = bind(listen)
    port = sock.getsockname()[1]
    served = Served("https" if tls else "http", port, served_names(listen, allowed_hosts))
    pool = ConnectionPool(
        **{k: limits.pop(k) for k in ("head_seconds", "max_anonymous") if k in limits}
    )
    app = build_app(agent, credentials, served, connections=pool, **limits)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=pool.protocol_class(),
        ws="none",
        loop="asyncio",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        server_header=False,
        # uvicorn serves with the context tls_context() built and checked, as given.
        ssl_context_factory=None if tls is None else (lambda _config, _default: tls),
    )

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            def stop() -> None:
                if self.should_exit:
                    self.force_exit = True  # a second Ctrl-C: don't wait for requests in flight
                self.should_exit = True

            with stop_on_signals(stop):
                yield

    server = Server(config)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        started(endpoint_url(listen, port, tls is not None))
        if stopping is not None:
            await stopping.wait()
            server.should_exit = True

    async def watch_revocations() -> None:
        while not server.should_exit:
            await asyncio.sleep(REVOCATION_CHECK_SECONDS)
            try:
                await app.revoke_gone()
            # The watch goes on; the guard refuses them anyway (logged with its traceback).
            except Exception:
                log.warning("could not close a revoked agent's sessions", exc_info=True)

    announcing = asyncio.ensure_future(announce())
    watching = asyncio.ensure_future(watch_revocations())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcing.cancel()
        watching.cancel()
        sock.close()
