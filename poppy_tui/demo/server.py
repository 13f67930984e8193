"""Run the demo Company on 127.0.0.1: in a background thread (`start_company`) or
in the current event loop (`serve_company`). Nothing is logged to the terminal."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from typing import Any
from collections.abc import AsyncIterator, Callable

import uvicorn

from poppy_tui.demo.accounts.service import Accounts, AccountsOptions
from poppy_tui.demo.app import build_app
from poppy_tui.demo.context import CompanyContext
from poppy_tui.demo.faults import Faults
from poppy_tui.demo.operations import OperationDesk
from poppy_tui.demo.shop import Shop
from poppy_tui.protocol import conventions as c

HOST = "127.0.0.1"
STARTUP_TIMEOUT_SECONDS = 15.0

# Loggers of the server side only: the TUI shares the terminal, and the
# drop_after_perform fault makes uvicorn log an error on purpose.
# authlib logs issued tokens at DEBUG ("Issue token %r"); in --demo it shares the agent's
# process and log, so its records never propagate there.
_SERVER_LOGGERS = ("uvicorn", "mcp.server", "sse_starlette", "authlib")


def quiet_logging() -> None:
    """Keep the server side's loggers off the terminal (idempotent)."""
    for name in _SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


_quiet_logging = quiet_logging  # the name other test helpers already import


class _Server(uvicorn.Server):
    def capture_signals(self):  # the host program (the TUI, pytest) owns signals
        return contextlib.nullcontext()


class RunningCompany:
    """A demo Company being served. Use as a context manager, or call stop()."""

    def __init__(
        self, ctx: CompanyContext, server: uvicorn.Server, thread: threading.Thread | None = None
    ) -> None:
        self.context = ctx
        self._server = server
        self._thread = thread

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT"""
        return self.context.base_url

    @property
    def domain(self) -> str:
        """127.0.0.1:PORT, as organization.domain says."""
        return self.context.domain

    @property
    def port(self) -> int:
        return int(self.domain.rsplit(":", 1)[1])

    @property
    def issuer(self) -> str:
        """auth.issuer, the audience of Session JWTs."""
        return self.context.issuer

    @property
    def accounts(self) -> Accounts | None:
        """The authorization server, when the Company has accounts."""
        return self.context.accounts

    @property
    def state(self) -> Shop:
        """The shop, to inspect: orders, subscriptions, bookings, `performed(operation_id)`."""
        return self.context.shop

    @property
    def desk(self) -> OperationDesk:
        return self.context.desk

    @property
    def faults(self) -> Faults:
        return self.context.faults

    @property
    def discovery_url(self) -> str:
        return self.base_url + c.WELL_KNOWN_PATH

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if (
            self.context.desk.ledger is not None
            and self._thread is not None
            and not self._thread.is_alive()
        ):
            self.context.desk.ledger.close()

    def __enter__(self) -> RunningCompany:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _prepare(
    faults: Faults | None,
    port: int,
    expiry_seconds: float,
    extension_version: str | None,
    wrap: Callable[[Any], Any] | None = None,
    accounts: AccountsOptions | None = None,
    ledger_path: str | os.PathLike[str] | None = None,
) -> tuple[socket.socket, CompanyContext, _Server]:
    quiet_logging()
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only then; without it every
    # response on a kept-alive connection waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    bound_port = sock.getsockname()[1]
    ctx = CompanyContext(
        base_url=f"http://{HOST}:{bound_port}",
        faults=faults or Faults(),
        expiry_seconds=expiry_seconds,
        extension_version=extension_version,
        accounts_options=accounts,
        ledger_path=ledger_path,
    )
    app = build_app(ctx)
    config = uvicorn.Config(
        wrap(app) if wrap is not None else app,
        log_config=None,
        log_level="critical",
        access_log=False,
        lifespan="on",
        http="h11",
        loop="asyncio",
        ws="none",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=30,
    )
    return sock, ctx, _Server(config)


def start_company(
    faults: Faults | None = None,
    port: int = 0,
    expiry_seconds: int = 900,
    extension_version: str | None = c.EXTENSION_VERSION,
    wrap: Callable[[Any], Any] | None = None,
    accounts: AccountsOptions | None = None,
    ledger_path: str | os.PathLike[str] | None = None,
) -> RunningCompany:
    """Serve a fresh demo Company on 127.0.0.1:`port` (0 = any free port) in a
    background thread with its own event loop; returns once it accepts requests.

    `extension_version`: what poppy.json lists under `extensions.operations`
    ("2"; another major such as "3"; or None for no extension at all).
    `wrap`: ASGI middleware put in front of the app (tests record or script requests with it).
    `accounts`: give the Company accounts and an authorization server (off by default:
    every Session is then signed out and nothing needs sign-in).
    `ledger_path`: an SQLite file recording performed operations, so a Company started
    again on the same file (and port) still performs each operation at most once.
    """
    sock, ctx, server = _prepare(
        faults, port, expiry_seconds, extension_version, wrap, accounts, ledger_path
    )
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread below
            failure.append(exc)
        finally:
            sock.close()

    thread = threading.Thread(target=run, name=f"demo-company-{ctx.domain}", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while not server.started:
        if failure or not thread.is_alive():
            raise RuntimeError(
                f"the demo Company failed to start: {failure[0] if failure else 'server exited'}"
            )
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the demo Company did not start in time")
        time.sleep(0.01)
    return RunningCompany(ctx, server, thread)


@contextlib.asynccontextmanager
async def serve_company(
    faults: Faults | None = None,
    port: int = 0,
    expiry_seconds: int = 900,
    extension_version: str | None = c.EXTENSION_VERSION,
    accounts: AccountsOptions | None = None,
    ledger_path: str | os.PathLike[str] | None = None,
) -> AsyncIterator[RunningCompany]:
    """Like start_company, but served by the running event loop:
    `async with serve_company() as company: ...`."""
    sock, ctx, server = _prepare(
        faults, port, expiry_seconds, extension_version, None, accounts, ledger_path
    )
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the demo Company exited during startup")
            if time.monotonic() > deadline:
                raise RuntimeError("the demo Company did not start in time")
            await asyncio.sleep(0.01)
        yield RunningCompany(ctx, server)
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
        sock.close()
        if ctx.desk.ledger is not None:
            ctx.desk.ledger.close()
