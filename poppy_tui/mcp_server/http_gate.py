"""`poppy-tui mcp --http`: the same tools as the stdio server (server.build_server), over MCP
streamable HTTP: the MCP SDK's session manager and app, served by uvicorn, behind HttpGuard
(Host, Origin, bearer token). One process, one event loop, one Agent: every request shares the
store and the queue with the TUI, the CLI and `poppy-tui send --watch`.

Limits, all the SDK's own checks: a request body over MAX_BODY_BYTES gets 413 before it is read
further; past MAX_SESSIONS open sessions a new one gets 503 (open ones go on; nothing recorded is
touched) and a session with no request in flight for SESSION_IDLE_SECONDS is closed (its client
starts a new one). uvicorn refuses connections past MAX_CONNECTIONS with 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
from typing import Any
from collections.abc import Callable, Iterator

# Where to listen, TLS and the Host names served: shared with `poppy-tui web` (agent/listen.py).
from poppy_tui.agent.listen import (  # noqa: F401 (imported from here by the CLI and tests)
    Listen,
    ListenError,
    Served,
    bind,
    parse_listen,
    served_names,
    tls_context,
)
from poppy_tui.mcp_server.http_guard import HttpGuard
from poppy_tui.mcp_server.http_token import TokenFile

log = logging.getLogger(__name__)

PATH = "/mcp"
DEFAULT_LISTEN = "127.0.0.1:8765"
MAX_BODY_BYTES = 1024 * 1024
MAX_SESSIONS = 64
SESSION_IDLE_SECONDS = 30 * 60.0
MAX_CONNECTIONS = 256
# How long a stop waits for requests in flight (a waiting tool call may wait for an hour; its
# operation stays in the queue either way).
SHUTDOWN_GRACE_SECONDS = 3
# The loggers of the serving side: warnings and errors reach stderr; uvicorn's access log is off
# (it would print every request line; none holds the token, but nothing needs them).
SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "mcp", "poppy_tui.mcp_server")


def endpoint_url(listen: Listen, port: int, tls: bool) -> str:
    shown = listen.host if listen.host not in ("0.0.0.0", "::") else "127.0.0.1"
    if ":" in shown:
        shown = f"[{shown}]"
    return f"{'https' if tls else 'http'}://{shown}:{port}{PATH}"


def build_app(
    agent: Any,
    tokens: TokenFile,
    served: Served,
    *,
    max_sessions: int = MAX_SESSIONS,
    session_idle_seconds: float = SESSION_IDLE_SECONDS,
    max_body_bytes: int = MAX_BODY_BYTES,
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
    return HttpGuard(app, tokens, served)


@contextlib.contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """SIGINT and SIGTERM stop the server gracefully (uvicorn's own handling raises them again
    after its shutdown, which would end the process before the Agent is closed)."""
    loop = asyncio.get_running_loop()
    installed = []
    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(number, stop)
            installed.append(number)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


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
    tokens: TokenFile,
    *,
    allowed_hosts: list[str],
    tls: ssl.SSLContext | None,
    started: Callable[[str], None],
    stopping: asyncio.Event | None = None,
    **limits: Any,
) -> None:
    """Serve until SIGINT/SIGTERM (or `stopping` is set); `started(url)` once it accepts requests."""
    import uvicorn

    sock = bind(listen)
    port = sock.getsockname()[1]
    served = Served("https" if tls else "http", port, served_names(listen, allowed_hosts))
    app = build_app(agent, tokens, served, **limits)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        http="h11",
        ws="none",
        loop="asyncio",
        limit_concurrency=MAX_CONNECTIONS,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        timeout_keep_alive=30,
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

            with _stop_on_signals(stop):
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

    announcing = asyncio.ensure_future(announce())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcing.cancel()
        sock.close()
