"""Serving the page: uvicorn on the socket agent/listen.py bound, the guard in front of the app,
the agent's dispatcher beside it (so an approval made here is sent even with no TUI open; the
store's lease decides which process sends), and the address announced in the data folder for
`poppy-tui web pair` and the TUI's Devices screen.

Limits: uvicorn refuses connections past MAX_CONNECTIONS with 503; a request's headers must come
within uvicorn's h11 timeouts and a form within app.FORM_SECONDS; bodies past guard.MAX_BODY_BYTES
get 413; live streams are counted in app.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from poppy_tui.agent.listen import (
    Listen,
    ListenError,
    Served,
    bind,
    host_key,
    served_names,
    stop_on_signals,
)

log = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:0"
MAX_CONNECTIONS = 64
SHUTDOWN_GRACE_SECONDS = 2
SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "poppy_tui.web")


@dataclass(frozen=True)
class PublicAddress:
    """Where browsers reach the page: the listen address, `localhost` on loopback when a passkey
    is required (a relying party can't be an IP address), or --public-url behind a tunnel."""

    url: str  # scheme://host[:port], no path
    scheme: str
    host: str
    port: int | None


def public_address(
    listen: Listen, port: int, tls: bool, public_url: str | None, passkey: bool
) -> PublicAddress:
    if public_url:
        parts = urlsplit(public_url.strip())
        try:
            public_port = parts.port
        except ValueError:
            public_port = -1
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or public_port == -1
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise ListenError(
                f"--public-url wants an origin such as https://poppy.example.net (no path), "
                f"got {public_url[:100]!r}"
            )
        host = host_key(parts.hostname)
        shown = f"[{host}]" if ":" in host else host
        url = f"{parts.scheme}://{shown}" + (f":{public_port}" if public_port else "")
        return PublicAddress(url, parts.scheme, host, public_port)
    scheme = "https" if tls else "http"
    if listen.loopback and passkey:
        host = "localhost"
    elif listen.host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    else:
        host = host_key(listen.host)
    shown = f"[{host}]" if ":" in host else host
    return PublicAddress(f"{scheme}://{shown}:{port}", scheme, host, port)


def relying_party(address: PublicAddress) -> tuple[str, str]:
    """(rp id, origin) for WebAuthn; ListenError for an IP address, which can't be one."""
    import ipaddress

    try:
        ipaddress.ip_address(address.host)
    except ValueError:
        return address.host, address.url
    raise ListenError(
        "--require-passkey needs the page served under a name, not an IP address (a WebAuthn "
        "relying party can't be one): on loopback it is served as localhost; elsewhere --listen "
        "a name with --tls-cert for it, or give --public-url"
    )


def build_guarded(
    agent: Any,
    devices: Any,
    served: Served,
    address: PublicAddress,
    *,
    require_passkey: bool,
    **settings: Any,
) -> tuple[Any, Any]:
    """(the WebApp, the ASGI app with the guard in front)."""
    from poppy_tui.web.app import Settings, build
    from poppy_tui.web.guard import WebGuard

    rp = relying_party(address) if require_passkey else None
    web, app = build(
        agent,
        devices,
        Settings(
            arm_delay_seconds=agent.config.arm_delay_seconds,
            grace_seconds=agent.config.grace_seconds,
            require_passkey=require_passkey,
            relying_party=rp,
            **settings,
        ),
    )
    guard = WebGuard(app, served)
    if address.url != f"{served.scheme}://{address.host}:{served.port}":
        guard.extra_origins.add(
            (
                address.scheme,
                address.host,
                address.port or (443 if address.scheme == "https" else 80),
            )
        )
    return web, guard


def quiet_server_logs() -> None:
    """Warnings and errors of the serving side on stderr, one line each; no access log."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("poppy-tui web: %(message)s"))
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True


async def serve(
    agent: Any,
    listen: Listen,
    *,
    allowed_hosts: list[str],
    tls: ssl.SSLContext | None,
    require_passkey: bool = False,
    public_url: str | None = None,
    started: Callable[[str, str], None],
    stopping: asyncio.Event | None = None,
    dispatch: bool = True,
) -> None:
    """Serve until SIGINT/SIGTERM (or `stopping` is set); `started(url, local)` once it accepts
    requests: the address browsers use, and where it listens (the same but behind a tunnel)."""
    import uvicorn

    from poppy_tui.agent.paired_devices import DeviceBook, announce_server, forget_server

    sock = bind(listen)
    port = sock.getsockname()[1]
    try:
        address = public_address(listen, port, tls is not None, public_url, require_passkey)
        names = set(served_names(listen, allowed_hosts)) | {address.host}
        served = Served("https" if tls else "http", port, frozenset(names))
        data_dir = agent.paths.ensure().data_dir
        devices = DeviceBook.open(data_dir)
        web, app = build_guarded(agent, devices, served, address, require_passkey=require_passkey)
    except BaseException:
        sock.close()
        raise
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="off",
        http="h11",
        ws="none",
        loop="asyncio",
        limit_concurrency=MAX_CONNECTIONS,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        timeout_keep_alive=20,
        h11_max_incomplete_event_size=16 * 1024,
        server_header=False,
        date_header=False,
        ssl_context_factory=None if tls is None else (lambda _config, _default: tls),
    )

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            def stop() -> None:
                if self.should_exit:
                    self.force_exit = True
                self.should_exit = True
                web.stopping.set()

            with stop_on_signals(stop):
                yield

    server = Server(config)
    stop_dispatcher = asyncio.Event()

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        announce_server(data_dir, address.url, require_passkey)
        shown = f"[{listen.address}]" if ":" in listen.address else listen.address
        started(address.url, f"{'https' if tls else 'http'}://{shown}:{port}")
        if stopping is not None:
            await stopping.wait()
            web.stopping.set()
            server.should_exit = True

    announcing = asyncio.ensure_future(announce())
    dispatcher = asyncio.ensure_future(agent.run_dispatcher(stop_dispatcher)) if dispatch else None
    try:
        await server.serve(sockets=[sock])
    finally:
        web.stopping.set()
        announcing.cancel()
        stop_dispatcher.set()
        if dispatcher is not None:
            try:
                await asyncio.wait_for(dispatcher, 10)
            except (TimeoutError, asyncio.CancelledError):
                dispatcher.cancel()
            except Exception:
                log.warning("the dispatcher stopped with an error", exc_info=True)
        forget_server(data_dir)
        devices.close()
        sock.close()
