"""http.request over httpx and netguard's transport, against a server written here that answers
each request with bytes given by the test (RFC 9112 framing by hand), so what a Company may send
(compressed, chunked, 1xx first, Connection: close, bytes after the answer, both Content-Length and
Transfer-Encoding, a reset, nothing) is sent exactly. What matters is what http.request makes of
it: an answer, an answer whose body can't be used, NotSent (nothing of the request left) or
Unknown (it may have been delivered)."""

from __future__ import annotations

import asyncio
import gzip
import socket
import struct
import zlib
from collections.abc import Callable

import httpx2
import pytest

from poppy_tui.agent.net.http import HttpAnswer, make_client, request
from poppy_tui.protocol.outcomes import NotSent, Unknown
from tests.netguard.test_guarded_stream import LoopbackServer
from tests.waiting import wait_until


def answer(body: bytes, *headers: bytes, status: bytes = b"200 OK") -> bytes:
    lines = b"".join(h + b"\r\n" for h in headers)
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s" % (
        status,
        lines,
        len(body),
        body,
    )


class ScriptedServer(LoopbackServer):
    """Each request gets `respond(n)` (n counts requests from 1): bytes to write (a list: written
    part by part, 50 ms apart), or None to reset the connection (RST) without answering. The
    connection stays open unless `close`."""

    def __init__(
        self,
        respond: Callable[[int], bytes | list[bytes] | None],
        close: bool = False,
        hold_first: asyncio.Event | None = None,
    ) -> None:
        super().__init__()
        self.respond = respond
        self.close = close
        self.hold_first = hold_first  # the first answer waits for this

    async def answer(self, body: bytes, writer: asyncio.StreamWriter) -> bool:
        if len(self.requests) == 1 and self.hold_first is not None:
            await self.hold_first.wait()
        data = self.respond(len(self.requests))
        if data is None:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()  # RST: the request arrived, no answer will
            return False
        for part in data if isinstance(data, list) else [data]:
            writer.write(part)
            await writer.drain()
            if isinstance(data, list):
                await asyncio.sleep(0.05)
        return not self.close


async def _ask(server: ScriptedServer, times: int = 1, limit: int | None = None) -> list:
    async with make_client(5.0) as client:
        kwargs = {} if limit is None else {"limit": limit}
        return [
            await request(client, "POST", f"{server.base_url}/x", content=b"{}", **kwargs)
            for _ in range(times)
        ]


async def test_gzip_and_deflate_bodies_are_decoded():
    bodies = {
        1: gzip.compress(b'{"n": 1}'),
        2: zlib.compress(b'{"n": 2}'),
        3: zlib.compress(b'{"n": 3}')[2:-4],
    }
    codings = {1: b"gzip", 2: b"deflate", 3: b"deflate"}  # 3: raw deflate, which some servers send
    async with ScriptedServer(
        lambda n: answer(bodies[n], b"Content-Encoding: " + codings[n])
    ) as server:
        got = await _ask(server, 3)
    assert [a.body for a in got] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert all(b"accept-encoding: gzip, deflate" in r.lower() for r in server.requests)


async def test_a_decompression_bomb_is_refused_at_the_limit():
    bomb = gzip.compress(b" " * 50_000_000)  # about 50 KB on the wire
    async with ScriptedServer(lambda n: answer(bomb, b"Content-Encoding: gzip")) as server:
        [got] = await _ask(server, limit=1_000_000)
    assert isinstance(got, HttpAnswer) and got.status == 200
    assert got.body is None and "more than the 1000000 bytes allowed" in got.error


@pytest.mark.parametrize("coding", [b"br", b"x-unheard-of", b"gzip"])
async def test_a_body_its_encoding_cant_undo_is_an_unreadable_answer_not_a_crash(coding):
    async with ScriptedServer(
        lambda n: answer(b"\x00\x01", b"Content-Encoding: " + coding)
    ) as server:
        [got] = await _ask(server)
    assert isinstance(got, HttpAnswer) and got.status == 200 and got.body is None and got.error, got


async def test_a_chunked_answer_after_a_1xx_is_read_whole():
    chunked = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5\r\n{"n":\r\n3\r\n 7}\r\n0\r\n\r\n'
    )
    async with ScriptedServer(lambda n: chunked) as server:
        got = await _ask(server, 2)
    assert [a.body for a in got] == [{"n": 7}, {"n": 7}]
    assert server.connections == 1  # kept alive across both


async def test_connection_close_in_an_answer_is_honoured():
    async with ScriptedServer(
        lambda n: answer(b'{"n": %d}' % n, b"Connection: close"), close=True
    ) as server:
        got = await _ask(server, 2)
    assert [a.body for a in got] == [{"n": 1}, {"n": 2}]
    assert server.connections == 2


async def test_a_reset_after_the_request_arrived_is_unknown_and_a_refused_connect_is_not_sent():
    async with ScriptedServer(lambda n: None) as server:
        [reset] = await _ask(server)
    assert isinstance(reset, Unknown), reset  # it reached the Company: it may have acted
    assert len(server.requests) == 1
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, never listening: the connect is refused
        async with make_client(5.0) as client:
            refused = await request(client, "POST", f"http://127.0.0.1:{port}/x", content=b"{}")
    assert isinstance(refused, NotSent), refused


async def test_a_cut_off_body_keeps_the_status_and_the_connection_is_not_reused():
    cut = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"n":'
    async with ScriptedServer(
        lambda n: cut if n == 1 else answer(b'{"n": 2}'), close=True
    ) as server:
        first, second = await _ask(server, 2)
    assert isinstance(first, HttpAnswer) and first.status == 200 and first.cut_off
    assert isinstance(second, HttpAnswer) and second.body == {"n": 2}
    assert server.connections == 2


async def test_a_request_cancelled_while_it_waits_leaves_no_connection_to_reuse():
    gate = asyncio.Event()

    async with ScriptedServer(lambda n: answer(b'{"n": %d}' % n), hold_first=gate) as server:
        async with make_client(5.0) as client:
            pending = asyncio.ensure_future(
                request(client, "POST", f"{server.base_url}/slow", content=b"{}")
            )
            await wait_until(lambda: server.requests, step=0.01, describe="the request received")
            pending.cancel()  # as a lost lease stops a send: its answer not read yet
            with pytest.raises(asyncio.CancelledError):
                await pending
            gate.set()  # the first answer is written now, to a connection the client has closed
            again = await request(client, "POST", f"{server.base_url}/next", content=b"{}")
    # The cancelled exchange's connection, which would carry its late answer, was closed: the
    # next request got its own answer on a new connection, not the one left behind.
    assert isinstance(again, HttpAnswer) and again.body == {"n": 2}
    assert server.connections == 2


async def test_a_long_head_is_read_whole():
    # 50 KiB of headers: more than h11's own 16 KiB default, within the 100 KiB httpcore allows.
    long_header = b"X-Padding: " + b"p" * 50_000
    whole = answer(b'{"n": 1}', long_header)
    # In two parts, so the client holds an incomplete head of 40 KB for a moment.
    async with ScriptedServer(lambda n: [whole[:40_000], whole[40_000:]]) as server:
        [got] = await _ask(server)
    assert (
        isinstance(got, HttpAnswer)
        and got.body == {"n": 1}
        and len(got.headers["x-padding"]) == 50_000
    )


STALE = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"stale": "200!"}'


@pytest.mark.parametrize(
    "extra", [STALE, STALE[:30], b"\r\n", b"junk"], ids=["an answer", "half a head", "CRLF", "junk"]
)
@pytest.mark.parametrize("when", ["with the answer", "after it"])
async def test_bytes_after_a_complete_answer_are_never_read_as_the_next_answer(extra, when):
    """An approval sent on a connection still holding bytes would read them as its outcome (a
    stale "200" recorded as performed). Whether they came in the answer's last packet or after
    it, before the next request leaves, the connection is closed and a new one carries it."""
    written = asyncio.Event()

    class Extra(ScriptedServer):
        async def answer(self, body: bytes, writer: asyncio.StreamWriter) -> bool:
            n = len(self.requests)
            first = answer(b'{"n": %d}' % n)
            if n == 1 and when == "with the answer":
                writer.write(first + extra)
            elif n == 1:
                writer.write(first)
                await writer.drain()
                await asyncio.sleep(0)
                writer.write(extra)
            else:
                writer.write(first)
            await writer.drain()
            if n == 1:
                written.set()
            return True

    async with Extra(lambda n: None) as server:
        async with make_client(5.0) as client:
            first = await request(client, "POST", f"{server.base_url}/a", content=b"{}")
            await written.wait()
            await asyncio.sleep(0.01)  # loopback delivers at once; the socket is readable by now
            second = await request(client, "POST", f"{server.base_url}/b", content=b"{}")
    assert isinstance(first, HttpAnswer) and first.body == {"n": 1}, first
    assert isinstance(second, HttpAnswer) and second.body == {"n": 2}, second
    assert server.connections == 2


async def test_an_answer_with_both_content_length_and_transfer_encoding_is_refused_as_unknown():
    # RFC 9112 6.3: such a message is how responses are split; which body it has depends on
    # who reads it. The request was sent, so whether it took effect is unknown.
    both = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\n"
        b'Transfer-Encoding: chunked\r\n\r\n9\r\n{"n": 1}\r\n0\r\n\r\n'
    )
    async with ScriptedServer(lambda n: both if n == 1 else answer(b'{"n": 2}')) as server:
        first, second = await _ask(server, 2)
    assert (
        isinstance(first, Unknown) and "both Content-Length and Transfer-Encoding" in first.detail
    ), first
    assert isinstance(second, HttpAnswer) and second.body == {"n": 2}
    assert server.connections == 2  # the connection that carried it was closed


class ByteCounter:
    """A TCP server on 127.0.0.1 that never answers and counts every byte it receives."""

    def __init__(self) -> None:
        self.received = 0
        self.connections = 0
        self.gone = asyncio.Event()

    async def __aenter__(self) -> ByteCounter:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            while data := await reader.read(65536):
                self.received += len(data)
            writer.close()
            self.gone.set()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Note": "caf\u00e9"},
        {"X-Note": "a\r\nInjected: yes"},
        {"X-Note": "nul\x00"},
        {"Bad Name": "x"},
    ],
    ids=["not ASCII", "CRLF", "NUL", "space in a name"],
)
async def test_a_request_that_cant_be_written_is_not_sent(headers):
    async with ByteCounter() as server:
        async with make_client(5.0) as client:
            got = await request(
                client, "POST", f"{server.base_url}/x", content=b"{}", headers=headers
            )
        if server.connections:
            await server.gone.wait()
    assert isinstance(got, NotSent), got
    assert server.received == 0  # not a byte of it left


async def test_a_body_refused_after_part_of_the_request_left_is_not_called_not_sent():
    # A declared length the body overruns: h11 refuses the second piece, after the first
    # (with the head) went out. Not "not sent": the Company got part of a request.
    async def body():
        yield b"x" * 70_000
        yield b"y" * 70_000

    async with ByteCounter() as server:
        async with make_client(5.0) as client:
            with pytest.raises(httpx2.WriteError, match="could not be finished"):
                async with client.stream(
                    "PUT",
                    f"{server.base_url}/x",
                    content=body(),
                    headers={"Content-Length": "100000"},
                ):
                    pass
        await server.gone.wait()
    assert server.received > 70_000


async def test_answers_to_head_requests_keep_their_connection():
    # A HEAD answer announces a length and carries no body: nothing follows it, so the
    # connection that carried it carries the next request (no needless reconnects).
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    async with ScriptedServer(lambda n: head) as server:
        async with make_client(5.0) as client:
            got = [await request(client, "HEAD", f"{server.base_url}/x") for _ in range(3)]
    assert all(isinstance(a, HttpAnswer) and a.status == 200 for a in got), got
    assert server.connections == 1
