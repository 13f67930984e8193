"""The agent's connections (httpx2 over netguard's transport and GuardedStream), against a plain
HTTP/1.1 server on loopback written here from RFC 9112 alone. A connection the Company closed
while idle is never handed another request, connections are kept for the next requests, and a
request's head and body leave in one send() (a large body in bounded pieces), whole."""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore2
import pytest

from poppy_tui.agent.net import netguard
from poppy_tui.agent.net.http import HttpAnswer, make_client, request


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """One request's head and body (Content-Length or chunked), or None once the client is gone."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length, chunked = 0, False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        if name.strip().lower() == b"transfer-encoding":
            chunked = value.strip().lower() == b"chunked"
    if not chunked:
        return head, await reader.readexactly(length)
    body = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        body += await reader.readexactly(size + 2)
        if size == 0:
            return head, body[:-2]
        body = body[:-2]


class LoopbackServer:
    """An HTTP/1.1 server on 127.0.0.1 that reads each request whole and lets `answer` reply:
    counts connections, keeps every request's bytes, and closes a connection when `answer`
    returns False (or the client goes)."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[bytes] = []
        self.closed = asyncio.Event()  # set each time a connection has been closed
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def answer(self, body: bytes, writer: asyncio.StreamWriter) -> bool:
        raise NotImplementedError

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                received = await read_request(reader)
                if received is None:
                    return
                self.requests.append(b"".join(received))
                if not await self.answer(received[1], writer):
                    return
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except ConnectionError:
                pass
            self.closed.set()


class RawHttpServer(LoopbackServer):
    """Answers every request with a small JSON body, then closes the connection when
    `close_after_answer` is set, without saying so (no `Connection: close`): only the socket
    tells the client."""

    def __init__(self, close_after_answer: bool = False, answer_headers: bytes = b"") -> None:
        super().__init__()
        self.close_after_answer = close_after_answer
        self.answer_headers = answer_headers  # extra header lines, each ending in CRLF
        self.status_line = b"HTTP/1.1 200 OK"
        self.hold_until = 0  # answer nothing until this many requests have arrived in all
        self._arrived = asyncio.Condition()

    async def answer(self, body: bytes, writer: asyncio.StreamWriter) -> bool:
        async with self._arrived:
            self._arrived.notify_all()
            await self._arrived.wait_for(lambda: len(self.requests) >= self.hold_until)
        answer = b'{"n": %d, "body_bytes": %d}' % (len(self.requests), len(body))
        writer.write(
            b"%s\r\nContent-Type: application/json\r\n%s"
            b"Content-Length: %d\r\n\r\n%s"
            % (self.status_line, self.answer_headers, len(answer), answer)
        )
        await writer.drain()
        return not self.close_after_answer


async def test_an_idle_connection_the_company_closed_is_not_given_the_next_request():
    async with RawHttpServer(close_after_answer=True) as server:
        async with make_client(5.0) as client:
            first = await request(client, "POST", f"{server.base_url}/a", content=b"{}")
            await server.closed.wait()  # the Company has closed the kept-alive connection
            second = await request(client, "POST", f"{server.base_url}/b", content=b"{}")
    assert isinstance(first, HttpAnswer) and first.body["n"] == 1
    # Sent on the closed connection, the second request would have come back Unknown ("the
    # server disconnected"); the pool saw the socket readable and opened a new one instead.
    assert isinstance(second, HttpAnswer) and second.body["n"] == 2, second
    assert server.connections == 2


async def test_every_connection_of_a_round_of_concurrent_sends_is_kept_for_the_next():
    wave = 12  # more than httpcore keeps alive by default (10), fewer than the pool's 20
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            for round_ in (1, 2):
                server.hold_until = wave * round_  # all of a round in flight at once
                answers = await asyncio.gather(
                    *(
                        request(client, "POST", f"{server.base_url}/{n}", content=b"{}")
                        for n in range(wave)
                    )
                )
                assert all(isinstance(a, HttpAnswer) and a.status == 200 for a in answers)
    # The second round reused the first round's connections instead of opening (for https:
    # handshaking) new ones, as it did when idle connections beyond ten were closed.
    assert server.connections == wave


async def test_a_connection_the_company_keeps_open_carries_the_next_requests():
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            answers = [await request(client, "GET", f"{server.base_url}/{n}") for n in range(3)]
    assert [a.body["n"] for a in answers] == [1, 2, 3]
    assert server.connections == 1


class _CountingStream(httpcore2.AsyncNetworkStream):
    """Around the real socket stream the guarded backend connected: counts what GuardedStream
    hands to it, one entry per write (each one send() on the socket)."""

    def __init__(self, inner: Any, writes: list[int]) -> None:
        self._inner = inner
        self._writes = writes

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._writes.append(len(buffer))
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the writes the agent's connections make (one entry per send()), counted
    around httpcore's own socket streams, under netguard's GuardedStream."""
    counted: list[int] = []
    connect_tcp = httpcore2.AnyIOBackend.connect_tcp

    async def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _CountingStream(await connect_tcp(self, *args, **kwargs), counted)

    monkeypatch.setattr(httpcore2.AnyIOBackend, "connect_tcp", counting)
    return counted


async def test_a_request_head_and_its_body_leave_in_one_write(writes):
    body = b'{"note": "' + b"x" * 3000 + b'"}'
    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            answers = [
                await request(
                    client,
                    "POST",
                    f"{server.base_url}/{n}",
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                for n in range(2)
            ]
    assert [a.body for a in answers] == [
        {"n": 1, "body_bytes": len(body)},
        {"n": 2, "body_bytes": len(body)},
    ]
    assert all(r.endswith(body) for r in server.requests)
    # h11 hands the head and the body over separately: two writes per request without coalescing.
    assert len(writes) == 2 and all(size > len(body) for size in writes), writes


async def test_a_streamed_body_leaves_whole_in_pieces_of_bounded_size(writes):
    piece = b"y" * 16_384
    pieces = 13  # more than three times what GuardedStream holds back

    async def body():
        for _ in range(pieces):
            yield piece

    async with RawHttpServer() as server:
        async with make_client(5.0) as client:
            async with client.stream("PUT", f"{server.base_url}/big", content=body()) as response:
                await response.aread()
    assert response.json() == {"n": 1, "body_bytes": len(piece) * pieces}
    assert server.requests[0].endswith(piece * pieces)  # whole
    # Nothing more than the bound plus one piece is ever held back before it is sent.
    assert len(writes) >= 3, writes
    assert all(
        netguard.COALESCE_BYTES <= size < netguard.COALESCE_BYTES + len(piece) + 64
        for size in writes[:-1]
    ), writes
