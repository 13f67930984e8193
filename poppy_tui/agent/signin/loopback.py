"""The loopback listener that receives Direct Sign-In's redirect (RFC 8252 7.3).

It listens on 127.0.0.1 on a port the system picks, answers GET /callback, and hands over the
first redirect that carries our `state`: anything else gets 400 and is ignored, so another
program on this machine can't end the sign-in with a forged redirect. The page it returns says
only where to look next; it never repeats what the redirect carried.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

from poppy_tui.protocol.conventions import DIRECT_SIGNIN_CALLBACK_PATH, DIRECT_SIGNIN_LOOPBACK_HOST

MAX_REQUEST_HEAD = 16 * 1024
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>poppy-tui</title>"
    "<p>{text}</p><p>You can close this tab and go back to poppy-tui.</p>"
)


class LoopbackReceiver:
    def __init__(self, expected_state: str) -> None:
        self._state = expected_state
        self._server: asyncio.AbstractServer | None = None
        self._received: asyncio.Future[str] | None = None
        self.port: int | None = None

    @property
    def redirect_uri(self) -> str:
        assert self.port is not None, "start() first"
        return f"http://{DIRECT_SIGNIN_LOOPBACK_HOST}:{self.port}{DIRECT_SIGNIN_CALLBACK_PATH}"

    async def start(self) -> str:
        self._received = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, DIRECT_SIGNIN_LOOPBACK_HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.redirect_uri

    async def received(self) -> str:
        """The full redirect URL, once one with our state arrived."""
        assert self._received is not None, "start() first"
        return await asyncio.shield(self._received)

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            except (TimeoutError, RuntimeError):
                pass
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        status, text = 400, "This is not the sign-in poppy-tui is waiting for."
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10.0)
            if len(head) <= MAX_REQUEST_HEAD:
                request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
                method, _, rest = request_line.partition(" ")
                target = rest.rpartition(" ")[0]
                parts = urlsplit(target)
                state = parse_qs(parts.query).get("state", [None])[0]
                if (
                    method == "GET"
                    and parts.path == DIRECT_SIGNIN_CALLBACK_PATH
                    and state == self._state
                ):
                    if self._received is not None and not self._received.done():
                        self._received.set_result(
                            f"http://{DIRECT_SIGNIN_LOOPBACK_HOST}:{self.port}{target}"
                        )
                        status, text = 200, "poppy-tui received the sign-in."
                    else:
                        status, text = 409, "poppy-tui already received this sign-in."
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        body = _PAGE.format(text=text).encode()
        reason = {200: "OK", 400: "Bad Request", 409: "Conflict"}[status]
        try:
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
