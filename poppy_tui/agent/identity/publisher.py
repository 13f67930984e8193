"""Serve a development identity's CIMD and JWKS on 127.0.0.1, so --demo and the tests run
offline: a Company fetches them exactly as it would from https://.

One small asyncio server per port and process (h11 reads the requests), on its own event loop in a
daemon thread, started on first use and kept for the life of the process:
- a connection costs no thread, and one that sends no complete request within
  `idle_timeout_seconds` (none at all, or a byte at a time) is closed; past `max_connections` the
  connection idle longest is closed to make room, so idle connections never lock a Company out;
- GET and HEAD of the published paths only, Connection: keep-alive honoured, nothing logged to
  the terminal (the TUI owns it).

If the port is already taken, whoever holds it is asked for this identity's documents (plain
HTTP to 127.0.0.1 with httpx2, no proxy, no redirect followed): only when it serves this home's very CIMD and
JWKS, i.e. this home's own public key (another poppy-tui process using the same home), is it used.
Anything else (another program, another key, a redirect, silence) is PortTaken, and the caller
moves the identity to another port and records it (identity/__init__.py).

Why not uvicorn and Starlette, which serve `poppy-tui mcp --http` and the demo: every command
that sends a request with a development identity (the default) serves it in its own process
before it signs, so the server's cost is each request's. Measured on 2026-12-07 (importing and
starting the publisher in a fresh interpreter that had already imported what a request imports,
median of 30, machine under load): 18 ms for this one, 63 ms for a two-route Starlette app on
uvicorn with the same watch on idle connections (uvicorn times a connection out only after an
answer, and answers 503 past its limit rather than closing an idle one, so that watch stays ours
either way): 45 ms more for every `poppy-tui call`, about 15% of it, where `call` is held to
httpie's time (docs/benchmarks.md). uvicorn's import brings click, Starlette's most of its
middleware. What is hand-written here is the connection handling; h11 parses every request.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import h11

from poppy_tui.protocol.client_metadata import IdentityError

IDLE_TIMEOUT_SECONDS = 10.0  # for a whole request to arrive on an open connection
MAX_CONNECTIONS = 64  # open at once; beyond it the longest-idle connection is closed
CHECK_TIMEOUT_SECONDS = 3.0  # asking whoever holds the port for our documents
MAX_REQUEST_HEAD_BYTES = 16 * 1024
MAX_CHECKED_DOCUMENT_BYTES = 1024 * 1024


class PortTaken(IdentityError):
    """The port is held by a program that does not serve this identity."""


class _Connection:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.idle_since: float | None = time.monotonic()  # None while a request is being answered


class PublishingServer:
    """`path -> JSON bytes` on 127.0.0.1:port."""

    def __init__(self, port: int, idle_timeout_seconds: float, max_connections: int) -> None:
        self.documents: dict[str, bytes] = {}
        self.idle_timeout_seconds = idle_timeout_seconds
        self.max_connections = max_connections
        self.connections: set[_Connection] = set()
        self.closed_idle = 0  # connections closed for idling (timeout or room for another)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if os.name == "posix":
            # As asyncio's servers do: without it, the port stays refused for a minute after a
            # connection we closed (TIME_WAIT), and a poppy-tui started again in that minute
            # read its own port as taken and moved its identity to another one. A port another
            # program listens on is refused all the same (Windows reads the option differently).
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("127.0.0.1", port))  # OSError (EADDRINUSE) when the port is taken
            listener.listen(128)
        except OSError:
            listener.close()
            raise
        self.port = listener.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"poppy-identity-{self.port}", daemon=True
        )
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, sock=listener, limit=MAX_REQUEST_HEAD_BYTES),
            self._loop,
        ).result()

    # ---- one connection --------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Connection(writer)
        self._make_room()
        self.connections.add(connection)
        http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES)
        try:
            while True:
                connection.idle_since = time.monotonic()
                try:
                    async with asyncio.timeout(self.idle_timeout_seconds):
                        request = await self._next_request(reader, http)
                except TimeoutError:
                    self.closed_idle += 1
                    return
                if request is None:
                    return
                connection.idle_since = None
                for data in self._answer(http, request):
                    writer.write(data)
                await writer.drain()
                if http.our_state is not h11.DONE or http.their_state is not h11.DONE:
                    return  # Connection: close, or the client went on sending
                http.start_next_cycle()
        except (h11.ProtocolError, ConnectionError):
            return
        finally:
            self.connections.discard(connection)
            writer.close()

    async def _next_request(
        self, reader: asyncio.StreamReader, http: h11.Connection
    ) -> h11.Request | None:
        """The next whole request (head and body read), or None when the client closed."""
        request: h11.Request | None = None
        while True:
            event = http.next_event()
            if event is h11.NEED_DATA:
                http.receive_data(await reader.read(8192))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.EndOfMessage):
                return request
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None

    def _answer(self, http: h11.Connection, request: h11.Request) -> list[bytes]:
        method = request.method.decode("ascii", "replace")
        path = urlsplit(request.target.decode("ascii", "replace")).path
        body = self.documents.get(path)
        if method not in ("GET", "HEAD"):
            status, headers, body = 405, [("Allow", "GET, HEAD")], b""
        elif body is None:
            status, headers, body = 404, [], b""
        else:
            status, headers = (
                200,
                [("Content-Type", "application/json"), ("Cache-Control", "max-age=60")],
            )
        headers = [*headers, ("Content-Length", str(len(body)))]
        out = [http.send(h11.Response(status_code=status, headers=headers)) or b""]
        if method != "HEAD" and body:
            out.append(http.send(h11.Data(data=body)) or b"")
        out.append(http.send(h11.EndOfMessage()) or b"")
        return out

    def _make_room(self) -> None:
        """At the limit, the connection idle longest is closed (one answering a request never is)."""
        while len(self.connections) >= self.max_connections:
            idle = [c for c in self.connections if c.idle_since is not None]
            if not idle:
                return
            oldest = min(idle, key=lambda c: c.idle_since or 0.0)
            self.connections.discard(oldest)
            self.closed_idle += 1
            oldest.writer.close()

    # ---- life -----------------------------------------------------------------------------------

    def close(self) -> None:
        async def stop() -> None:
            self._server.close()
            for connection in list(self.connections):
                connection.writer.close()
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


_servers: dict[int, PublishingServer] = {}
_lock = threading.Lock()


def _encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode("utf-8")


def serve(
    port: int,
    documents: dict[str, dict[str, Any]],
    *,
    idle_timeout_seconds: float = IDLE_TIMEOUT_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
) -> PublishingServer:
    """Serve `path -> JSON document` on 127.0.0.1:port from this process (OSError if the port is
    taken). The first call for a port sets its timeout and limit."""
    with _lock:
        server = _servers.get(port)
        if server is None:
            server = PublishingServer(port, idle_timeout_seconds, max_connections)
            _servers[port] = server
        for path, document in documents.items():
            server.documents[path] = _encode(document)
        return server


def _serves_exactly(port: int, path: str, expected: dict[str, Any]) -> bool:
    """Whether whoever holds 127.0.0.1:port answers GET `path` with 200 and exactly `expected`.
    httpx2 (the agent's one HTTP client) with no proxy from the environment, no redirect
    followed, a bounded read."""
    import httpx2

    body = b""
    try:
        with httpx2.Client(
            trust_env=False, follow_redirects=False, timeout=CHECK_TIMEOUT_SECONDS
        ) as client:
            with client.stream(
                "GET", f"http://127.0.0.1:{port}{path}", headers={"Accept": "application/json"}
            ) as answer:
                if answer.status_code != 200:
                    return False
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > MAX_CHECKED_DOCUMENT_BYTES:
                        return False
        return bool(json.loads(body) == expected)
    except (httpx2.HTTPError, ValueError):
        return False


def publish(settings: Any, metadata: dict[str, Any], jwks: dict[str, Any]) -> None:
    port = settings.loopback_port
    assert port is not None, "only a loopback identity is published here"
    cimd_path, jwks_path = urlsplit(settings.client_id).path, urlsplit(settings.jwks_uri).path
    try:
        serve(port, {cimd_path: metadata, jwks_path: jwks})
        return
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise IdentityError(
                f"can't serve the agent's identity on 127.0.0.1:{port} ({exc})"
            ) from None
    # Another poppy-tui with this home serves the very same documents, this home's public key
    # among them; any other holder of the port could answer Companies with a key of its own.
    if _serves_exactly(port, jwks_path, jwks) and _serves_exactly(port, cimd_path, metadata):
        return
    raise PortTaken(
        f"127.0.0.1:{port}, where this agent's development identity lives, is used by a program "
        "that does not serve this home's public key"
    )


def serving() -> frozenset[int]:
    """The ports this process serves on now."""
    with _lock:
        return frozenset(_servers)


def stop(port: int) -> None:
    """Stop serving on `port` (the documents go with it)."""
    with _lock:
        server = _servers.pop(port, None)
    if server is not None:
        server.close()


def stop_all() -> None:
    """For tests that must free their ports."""
    with _lock:
        for server in _servers.values():
            server.close()
        _servers.clear()
