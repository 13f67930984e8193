"""The agent's own HTTP/1.1 connections for make_client's requests: h11 (the protocol itself:
framing, chunked bodies, keep-alive rules, malformed input) over an asyncio protocol, connected
only to the addresses netguard checked.

Why not httpx's pool for these: measured on loopback (issue #15), one small request through
httpx costs about 440 µs of CPU in the agent (all of http.request, JSON included) and through
this module about 180 µs; most of the difference is httpcore's pool, its locks and anyio's
cancel scopes around each read and write.
An approval round trip makes two requests and each approval sent makes one, so that is most of
what the agent added to a round trip, and most of the CPU a batch of sends took.

httpx stays for everything that needs its client layers: proxies from the environment (their
name check is a request hook), event hooks, auth flows, streamed uploads, and the MCP SDK's
client. http.request() uses this module only when make_client's client has none of those.

Failures are raised as httpx's own exception classes, so "did the Company get it?" is answered
in one place (http.py): ConnectError / ConnectTimeout when no byte of the request was written
(nothing resolved, refused by the address check, no TCP connection, no TLS handshake), and
WriteError, WriteTimeout, ReadError, ReadTimeout or RemoteProtocolError once it may have been.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from typing import Any, AsyncIterator, Callable, Iterator

import h11
import httpx

from poppy_tui.agent.net.netguard import addresses_to_connect, socket_readable

# As httpx: an idle connection is closed after this long (servers close theirs after about as
# long; uvicorn after 5 s), so a request is never written on one the Company is closing.
KEEPALIVE_SECONDS = 5.0
# Idle connections kept per origin (as netguard.MAX_CONNECTIONS keeps in httpx's pool).
MAX_IDLE_PER_ORIGIN = 20
# Reading stops (TCP pushes back) while this much is buffered and not yet taken.
READ_HIGH_WATER = 256 * 1024
# What the body decoders support, and so all this client asks for.
ACCEPT_ENCODING = b"gzip, deflate"
# The most of an answer's head (status line and headers) read before giving up on it, as httpcore.
MAX_HEAD_BYTES = 100 * 1024


class _Protocol(asyncio.Protocol):
    """Bytes in, with the connection's state; nothing parsed here (h11 does that)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.closed = False
        self.error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused_writing = False
        self._drained: asyncio.Future[None] | None = None
        self._paused_reading = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH_WATER and self.transport is not None and not self._paused_reading:
            self._paused_reading = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    @property
    def writing_paused(self) -> bool:
        return self._paused_writing

    def pause_writing(self) -> None:
        self._paused_writing = True

    def resume_writing(self) -> None:
        self._paused_writing = False
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def take(self) -> bytes:
        data = bytes(self.buffer)
        self.buffer.clear()
        if self._paused_reading and self.transport is not None and not self.closed:
            self._paused_reading = False
            self.transport.resume_reading()
        return data

    async def wait_readable(self) -> None:
        if self.buffer or self.eof or self.closed:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def drain(self) -> None:
        if self._paused_writing and not self.closed:
            self._drained = asyncio.get_running_loop().create_future()
            try:
                await self._drained
            finally:
                self._drained = None


class _Connection:
    def __init__(self, key: tuple[str, str, int], transport: asyncio.Transport, protocol: _Protocol) -> None:
        self.key = key
        self.transport = transport
        self.protocol = protocol
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.idle_since = time.monotonic()

    def usable_again(self, now: float) -> bool:
        """Whether an idle connection may carry another request: still open, nothing unasked for
        arrived on it (a close, or bytes no request asked for), and not idle for too long. The
        socket itself is asked too: a close the loop has not read yet already makes it readable."""
        p = self.protocol
        if p.closed or p.eof or p.buffer or self.transport.is_closing() or now - self.idle_since >= KEEPALIVE_SECONDS:
            return False
        return not socket_readable(self.transport.get_extra_info("socket"))

    def close(self) -> None:
        self.transport.close()


def _seconds(value: float | None) -> float | None:
    return None if value is None else max(0.0, value)


class LeanPool:
    """Connections per origin (scheme, host, port), one request at a time on each."""

    def __init__(self, allow_loopback: bool, while_waiting: Callable[[], None] | None = None) -> None:
        self._allow_loopback = allow_loopback
        self._while_waiting = while_waiting
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._ssl_context: ssl.SSLContext | None = None
        self._closed = False

    # ---- connections ---------------------------------------------------------------------------

    async def _connection(self, url: httpx.URL, connect_timeout: float | None) -> _Connection:
        """An idle connection to the origin that is still usable, else a new one to a checked address."""
        scheme = url.scheme
        host = url.host
        port = url.port or (443 if scheme == "https" else 80)
        key = (scheme, host, port)
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable_again(now):
                return connection
            connection.close()
        return await self._connect(key, connect_timeout)

    async def _connect(self, key: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = key
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"poppy-tui speaks http and https, not {scheme!r}")
        loop = asyncio.get_running_loop()
        addresses = await addresses_to_connect(
            host, port, self._allow_loopback, timeout, httpx.ConnectError, httpx.ConnectTimeout
        )
        context = None
        if scheme == "https":
            if self._ssl_context is None:
                # Made on the first https request, as netguard's transport does: a loopback
                # Company never needs the CA bundle, which costs more than a whole request.
                self._ssl_context = httpx.create_ssl_context(trust_env=True)
            context = self._ssl_context
        failure: Exception | None = None
        for address in addresses:  # the checked addresses, and only those
            try:
                async with asyncio.timeout(timeout):
                    transport, protocol = await loop.create_connection(
                        _Protocol, address, port, ssl=context, server_hostname=host if context else None,
                    )
            except TimeoutError:
                failure = httpx.ConnectTimeout(f"connecting to {host} ({address}) took longer than {timeout:g} s")
                continue
            except (OSError, ssl.SSLError) as exc:  # refused, unreachable, or no TLS handshake
                failure = httpx.ConnectError(f"{type(exc).__name__}: {exc}")
                continue
            return _Connection(key, transport, protocol)
        assert failure is not None
        raise failure

    def _keep(self, connection: _Connection) -> None:
        idle = self._idle.setdefault(connection.key, [])
        if self._closed or len(idle) >= MAX_IDLE_PER_ORIGIN:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    # ---- one exchange ----------------------------------------------------------------------------

    async def send(
        self, method: str, url: httpx.URL, headers: httpx.Headers, content: bytes | None, timeout: httpx.Timeout,
    ) -> "LeanResponse":
        """Write the request, read up to the end of the response's head. The body is read from the
        LeanResponse, which must be closed (it gives the connection back, or closes it)."""
        connection = await self._connection(url, _seconds(timeout.connect))
        try:
            head = self._head(method, url, headers, content)
            data = connection.h11.send(head)
            if content:
                data += connection.h11.send(h11.Data(data=content))
            data += connection.h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:  # a header the caller gave can't be written: nothing left
            connection.close()
            raise httpx.LocalProtocolError(str(exc)) from None
        try:
            # One write for the head and the body: one send() on the socket, one wakeup at the Company.
            if connection.protocol.closed or connection.transport.is_closing():
                raise httpx.WriteError("the connection closed before the request could be written")
            connection.transport.write(data)
            if connection.protocol.writing_paused:  # more than the transport buffers: wait for it to drain
                await _within(connection.protocol.drain(), _seconds(timeout.write), httpx.WriteTimeout, "writing the request")
            if connection.protocol.closed and connection.protocol.error is not None:
                raise httpx.WriteError(str(connection.protocol.error))
            if self._while_waiting is not None:
                self._while_waiting()  # the answer is awaited from here: see netguard.py
            response = await _read_head(connection, _seconds(timeout.read))
        except BaseException:
            connection.close()
            raise
        return LeanResponse(self, connection, response, str(url), _seconds(timeout.read))

    @staticmethod
    def _head(method: str, url: httpx.URL, headers: httpx.Headers, content: bytes | None) -> h11.Request:
        items: list[tuple[bytes, bytes]] = [(b"Host", url.netloc)]
        for name, value in headers.raw:
            lowered = name.lower()
            if lowered in (b"host", b"content-length", b"transfer-encoding"):
                continue  # framing is this module's to write, from the content it sends
            if lowered == b"accept-encoding":
                value = ACCEPT_ENCODING  # only what _Decoder can undo
            items.append((name, value))
        if content or method.upper() in ("POST", "PUT", "PATCH"):
            items.append((b"Content-Length", str(len(content or b"")).encode("ascii")))
        return h11.Request(method=method.encode("ascii"), target=url.raw_path, headers=items)


async def _within(waiting: Any, seconds: float | None, error: type[httpx.TransportError], doing: str) -> Any:
    try:
        async with asyncio.timeout(seconds):
            return await waiting
    except TimeoutError:
        raise error(f"{doing} took longer than {seconds:g} s") from None


async def _next_event(connection: _Connection, read_timeout: float | None) -> Any:
    """The next h11 event from the Company, reading as needed."""
    machine = connection.h11
    protocol = connection.protocol
    while True:
        try:
            event = machine.next_event()
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from None
        if event is not h11.NEED_DATA:
            return event
        if not (protocol.buffer or protocol.eof or protocol.closed):
            await _within(protocol.wait_readable(), read_timeout, httpx.ReadTimeout, "waiting for the Company's answer")
        if protocol.buffer:
            data = protocol.take()
        elif protocol.closed and protocol.error is not None:
            raise httpx.ReadError(f"{type(protocol.error).__name__}: {protocol.error}")
        else:
            data = b""  # the Company closed its end: h11 decides whether the message was complete
        try:
            machine.receive_data(data)
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from None


async def _read_head(connection: _Connection, read_timeout: float | None) -> h11.Response:
    while True:
        event = await _next_event(connection, read_timeout)
        if isinstance(event, h11.Response):
            return event
        if isinstance(event, h11.InformationalResponse):
            continue  # 1xx: the answer is still to come
        if isinstance(event, h11.ConnectionClosed):
            raise httpx.RemoteProtocolError("the Company closed the connection without sending an answer")
        raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} before the answer")


# Decoded bodies come out in pieces no larger than this, so http.read_bounded can stop a
# decompression bomb after the limit instead of after inflating it whole.
DECODED_PIECE = 64 * 1024


class _Decoder:
    """gzip or deflate, undone as the body arrives; http.read_bounded counts what comes out."""

    def __init__(self, coding: str) -> None:
        if coding == "gzip":
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self._inflate = zlib.decompressobj()
        else:
            raise httpx.DecodingError(f"the body is encoded as {coding!r}, which poppy-tui did not ask for")
        self._coding = coding
        self._started = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._inflate.decompress(data, DECODED_PIECE)
            except zlib.error as exc:
                if self._coding == "deflate" and not self._started:
                    # Some servers send raw deflate (no zlib header); httpx accepts it too.
                    self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._started = True
                    continue
                raise httpx.DecodingError(f"the {self._coding} body can't be decoded ({exc})") from None
            self._started = True
            if out:
                yield out
            data = self._inflate.unconsumed_tail

    def flush(self) -> bytes:
        try:
            return self._inflate.flush()
        except zlib.error as exc:
            raise httpx.DecodingError(f"the {self._coding} body can't be decoded ({exc})") from None


def _decoded(decoders: list[_Decoder], data: bytes) -> Iterator[bytes]:
    """`data` through every decoder in turn (the last coding applied is undone first)."""
    if not decoders:
        if data:
            yield data
        return
    first, rest = decoders[0], decoders[1:]
    for piece in first.pieces(data):
        yield from _decoded(rest, piece)


def _flushed(decoders: list[_Decoder]) -> Iterator[bytes]:
    for index, decoder in enumerate(decoders):
        yield from _decoded(decoders[index + 1:], decoder.flush())


class LeanResponse:
    """What http.request reads: status_code, headers (httpx.Headers), url, aiter_bytes(),
    aclose(). The connection goes back to the pool only when the whole answer was read and both
    sides may go on (no `Connection: close`); otherwise it is closed."""

    def __init__(self, pool: LeanPool, connection: _Connection, head: h11.Response, url: str,
                 read_timeout: float | None) -> None:
        self._pool = pool
        self._connection: _Connection | None = connection
        self._read_timeout = read_timeout
        self.status_code = head.status_code
        # httpx's own Headers: decoded and, read by items(), merged as on httpx's path.
        self.headers = httpx.Headers(list(head.headers))
        self.url = url
        self._complete = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        codings = [c.strip().lower() for c in self.headers.get("content-encoding", "").split(",") if c.strip()]
        decoders = [_Decoder(c) for c in reversed(codings) if c != "identity"]
        while True:
            event = await _next_event(connection, self._read_timeout)
            if isinstance(event, h11.Data):
                for piece in _decoded(decoders, bytes(event.data)):
                    yield piece
            elif isinstance(event, h11.EndOfMessage):
                for piece in _flushed(decoders):
                    yield piece
                self._complete = True
                return
            else:
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} in the answer's body")

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        machine = connection.h11
        if self._complete and machine.our_state is h11.DONE and machine.their_state is h11.DONE:
            try:
                machine.start_next_cycle()
            except h11.LocalProtocolError:
                connection.close()
                return
            self._pool._keep(connection)
            return
        connection.close()
