"""Keep-alive connections in the guarded pool (agent/netguard.py's GuardedStream), against a
plain HTTP/1.1 server on loopback written here from RFC 9112 alone: a connection the Company
closed while idle is never handed another request."""

from __future__ import annotations

import asyncio

from poppy_tui.agent.http import HttpAnswer, make_client, request


class RawHttpServer:
    """Answers every request with a small JSON body, then closes the connection when
    `close_after_answer` is set, without saying so (no `Connection: close`): only the socket
    tells the client."""

    def __init__(self, close_after_answer: bool = False) -> None:
        self.close_after_answer = close_after_answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.closed = asyncio.Event()
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> "RawHttpServer":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                self.requests.append(head + body)
                answer = b'{"n": %d}' % len(self.requests)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer)
                )
                await writer.drain()
                if self.close_after_answer:
                    return
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except ConnectionError:
                pass
            self.closed.set()


async def test_an_idle_connection_the_company_closed_is_not_given_the_next_request():
    async with RawHttpServer(close_after_answer=True) as server:
        async with make_client(5.0) as client:
            first = await request(client, "POST", f"{server.base_url}/a", content=b"{}")
            await server.closed.wait()  # the Company has closed the kept-alive connection
            second = await request(client, "POST", f"{server.base_url}/b", content=b"{}")
    assert isinstance(first, HttpAnswer) and first.body == {"n": 1}
    # Sent on the closed connection, the second request would have come back Unknown ("the
    # server disconnected"); the pool saw the socket readable and opened a new one instead.
    assert isinstance(second, HttpAnswer) and second.body == {"n": 2}, second
    assert server.connections == 2


async def test_a_connection_the_company_keeps_open_carries_the_next_requests():
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            answers = [await request(client, "GET", f"{server.base_url}/{n}") for n in range(3)]
    assert [a.body for a in answers] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert server.connections == 1
