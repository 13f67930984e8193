"""Serving a test Company's ASGI app with uvicorn on 127.0.0.1 in a background thread:
the start/stop both spec-written Companies here share (nothing from poppy_tui/demo/)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import Any
from collections.abc import Callable

import uvicorn

from tests.waiting import wait_until_blocking

HOST = "127.0.0.1"


GRACEFUL_SECONDS = 5
STOP_SECONDS = 60


class _Server(uvicorn.Server):
    def capture_signals(self):  # pytest owns signals
        return contextlib.nullcontext()


class LoopbackServer:
    """build_app(base_url) served on a free 127.0.0.1 port until stop(); `what` names it in errors.
    `lifespan="on"` for an app that starts something first (an MCP SDK session manager)."""

    def __init__(self, build_app: Callable[[str], Any], what: str, lifespan: str = "off") -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        self.base_url = f"http://{HOST}:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            build_app(self.base_url), log_level="critical", access_log=False, lifespan=lifespan
        )
        self._server = _Server(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
        self._thread.start()
        wait_until_blocking(
            lambda: self._server.started or not self._thread.is_alive(),
            timeout=15,
            step=0.01,
            describe=f"{what} starting",
        )
        if not self._server.started:
            raise RuntimeError(f"{what} did not start")

    def _serve(self, sock: socket.socket) -> None:
        with asyncio.Runner() as runner:
            self._loop = runner.get_loop()
            with contextlib.suppress(asyncio.CancelledError):
                runner.run(self._server.serve(sockets=[sock]))

    def _cancel_everything(self) -> None:
        """Cancel every task of the server's loop (run in it): what is left of a shutdown that
        waits on a stream an MCP session manager still holds open."""
        for task in asyncio.all_tasks():
            task.cancel()

    def stop(self) -> None:
        # Without waiting for open connections (uvicorn's graceful shutdown would): a read the
        # agent started on arrival may still be talking to us when the test's Company fixture,
        # set up after the agent's, is torn down before it.
        self._server.should_exit = True
        self._server.force_exit = True
        # uvicorn's loop looks at should_exit every 0.1 s. With the MCP SDK's session manager in
        # its lifespan, shutdown can wait on a stream a client left open (on Python 3.12 and 3.13
        # it did for good): after a few seconds every task of the server's loop is cancelled. A
        # minute in all is for a machine running four suites at once. Still an error after that:
        # a thread that never ends is a server left running.
        self._thread.join(GRACEFUL_SECONDS)
        if self._thread.is_alive() and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._cancel_everything)
        self._thread.join(STOP_SECONDS)
        if self._thread.is_alive():
            raise RuntimeError(
                f"the test Company at {self.base_url} did not stop within {STOP_SECONDS} s"
            )
