"""Where the agent may connect, enforced at the socket: resolve a name once, check every
address it resolved to (protocol/addresses.py's rules), then connect to one of those very
addresses. No second DNS resolution happens between the check and the connect, so a name
that answers a public address to the check and 127.0.0.1 to the connect (DNS rebinding)
gets nowhere.

It is an httpcore2 network backend under an httpx2 transport (both from the libraries' public
API), so the URL, the Host header and the TLS SNI stay the name the Company was addressed by
(an IDN as its IDNA 2008 A-label, as httpx2 encodes it); only the TCP connect goes to the checked
IP. The one transport serves every client the agent makes, all httpx2 (discovery, API calls,
approvals, conversations, outcome probes, the MCP SDK's client, sign-in): each is built with
`guarded_client_options`. The transport also refuses answers whose framing is ambiguous and
never lets bytes left after an answer be read as the next one (docs/reliability.md).

Through a proxy the proxy resolves the name, not us: there the name is checked on what it
resolves to here, before the request, which is the best a client behind a proxy can do
(docs/safety.md).
"""

from __future__ import annotations

import contextvars
import select
import socket
import ssl
import urllib.request
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import anyio
import h11
import httpcore2
import httpx2

from poppy_tui.protocol.addresses import (
    address_problem,
    is_loopback_host,
    literal_problem,
    parse_address,
)

__all__ = [
    "AnswerFollower",
    "AnswerStream",
    "DestinationRefused",
    "GuardedBackend",
    "GuardedStream",
    "GuardedTransport",
    "address_problem",
    "addresses_to_connect",
    "check_destination",
    "guarded_client_options",
    "guarded_transport",
    "pool_limits",
    "request_guard",
    "resolve_checked",
    "socket_readable",
]


class DestinationRefused(Exception):
    pass


async def resolve_checked(host: str, port: int, allow_loopback: bool) -> list[str]:
    """The addresses `host` resolves to, in the resolver's order, once every one is allowed.
    Raises DestinationRefused with the reason otherwise."""
    bare = host.strip("[]")
    if parse_address(bare) is not None:
        problem = literal_problem(bare, allow_loopback and is_loopback_host(bare))
        if problem:
            raise DestinationRefused(problem)
        return [bare.split("%", 1)[0]]
    try:
        infos = await anyio.getaddrinfo(bare, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, OSError) as exc:
        raise DestinationRefused(
            f"{host} can't be resolved ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise DestinationRefused(f"{host} resolves to no address")
    problem = address_problem(bare, addresses, allow_loopback)
    if problem:
        raise DestinationRefused(problem)
    return addresses


async def check_destination(host: str, port: int, allow_loopback: bool) -> None:
    await resolve_checked(host, port, allow_loopback)


async def addresses_to_connect(
    host: str,
    port: int,
    allow_loopback: bool,
    timeout: float | None,
    connect_error: type[Exception],
    connect_timeout: type[Exception],
) -> list[str]:
    """resolve_checked within a connect's timeout (httpcore's backend below): a refused destination
    or a slow resolver is raised as that library's own connect failure, so it counts as "not sent"."""
    try:
        with anyio.fail_after(timeout):
            return await resolve_checked(host, port, allow_loopback)
    except DestinationRefused as exc:
        raise connect_error(f"refused to connect: {exc}") from None
    except TimeoutError:
        raise connect_timeout(f"resolving {host} took longer than {timeout:g} s") from None


# Writes gathered before one send() at most (GuardedStream); a request head and a JSON body fit.
COALESCE_BYTES = 64 * 1024
# The most of an answer's head read before giving up on it: what httpcore allows its own h11.
MAX_HEAD_BYTES = 100 * 1024


def socket_readable(sock: socket.socket | None) -> bool:
    """Whether a read would return at once: on an idle keep-alive connection that means the
    Company closed it (or sent bytes nobody asked for), so it must not carry another request."""
    fileno = -1 if sock is None else sock.fileno()
    if fileno < 0:
        return True  # gone: as good as closed
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return bool(poller.poll(0))


class _Exchange:
    """Whether any byte of the request being sent has left, for the transport to tell a local
    protocol error (nothing sent) from one raised after part of a request was written."""

    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = False


# Set by GuardedTransport around each request; httpcore sends it in the caller's own task.
_CURRENT_EXCHANGE: contextvars.ContextVar[_Exchange | None] = contextvars.ContextVar(
    "poppy_exchange", default=None
)


class AnswerFollower:
    """Follows each answer on one connection with h11, from the same bytes httpcore's own h11
    reads, to learn what httpcore's parser keeps to itself: whether bytes came after a complete
    answer. httpcore keeps such bytes and, if the connection carries another request, reads them
    as that request's answer (a stale "200" taken for an approval's outcome). The pool asks a
    connection's stream whether it is readable before giving it a request (has_expired); a
    stream that saw bytes after an answer says yes, and the pool closes the connection instead.
    A second parser can only make a connection close early, never make an answer differ."""

    __slots__ = ("machine", "spoilt")

    def __init__(self) -> None:
        self.machine: h11.Connection | None = None
        self.spoilt = False

    def request_begins(self, data: bytes) -> None:
        if self.machine is not None or self.spoilt:
            return  # more of the same request (its body), or a connection already given up
        method = data[: data.find(b" ")] if b" " in data[:32] else b""
        machine = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        try:
            machine.send(h11.Request(method=method, target=b"/", headers=[(b"Host", b"x")]))
        except Exception:  # noqa: BLE001 - not a request h11 can follow: the connection won't be reused
            self.spoilt = True
            return
        self.machine = machine

    def received(self, data: bytes) -> None:
        machine = self.machine
        if machine is None:
            if data:
                self.spoilt = True  # bytes while no request was waiting for an answer
            return
        try:
            machine.receive_data(data)
            while True:
                event = machine.next_event()
                if event is h11.NEED_DATA:
                    return
                if isinstance(event, h11.EndOfMessage):
                    # The answer is whole: anything after it answers no request of ours.
                    self.spoilt = bool(machine.trailing_data[0])
                    self.machine = None
                    return
                if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                    self.spoilt = True
                    self.machine = None
                    return
        except Exception:  # noqa: BLE001 - httpcore's h11 raises the same on the same bytes; never ours to raise
            self.spoilt = True
            self.machine = None


class GuardedStream(httpcore2.AsyncNetworkStream):
    """httpcore2's network stream interface, implemented over the backend's own stream.

    Why the socket is kept: before every request, and again when each answer is closed,
    httpcore's pool asks every pooled connection whether its socket is readable (has_expired).
    The anyio stream answers by building its whole dict of extra attributes (a getpeername() and
    a dozen lambdas) to pick the raw socket out of it: about a third of the pool's cost per
    request with eight connections open. The socket never changes, so it is looked up once here;
    the check itself (a zero-timeout poll) is the same.

    Why writes wait for the next read: h11 hands over a request's head and its body as separate
    writes, which made two send() calls, and woke the Company twice, for every request. An
    HTTP/1.1 client reads after it has written all of a request, so what was written is sent, as
    one send(), when the answer is first read (or once COALESCE_BYTES have gathered, so a large
    body is not held in memory).

    `while_waiting` runs right after a request has been sent, before its answer is awaited: the
    client would only wait there, so short work done then (the agent signs the next Session JWT,
    sessions.py) costs the next request nothing. It must not raise or block."""

    def __init__(
        self, stream: httpcore2.AsyncNetworkStream, while_waiting: Callable[[], None] | None
    ) -> None:
        self.inner = stream
        self.raw_socket: socket.socket | None = stream.get_extra_info("socket")
        self.unsent: list[bytes] = []
        self.unsent_bytes = 0
        self.write_timeout: float | None = None
        self.while_waiting = while_waiting
        self.follower = AnswerFollower()

    async def send_unsent(self) -> None:
        data = b"".join(self.unsent) if len(self.unsent) > 1 else self.unsent[0]
        self.unsent.clear()
        self.unsent_bytes = 0
        exchange = _CURRENT_EXCHANGE.get()
        if exchange is not None:
            exchange.sent = True  # from here on, part of the request may have left
        await self.inner.write(data, self.write_timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.unsent:
            try:
                await self.send_unsent()
            except httpcore2.WriteError:
                # As httpcore does with a write error while it sends a request: read on,
                # a Company may have answered (say, 413) before closing its end.
                pass
            else:
                if self.while_waiting is not None:
                    self.while_waiting()
        data = await self.inner.read(max_bytes, timeout)
        self.follower.received(data)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self.follower.request_begins(buffer)
        self.unsent.append(buffer)
        self.unsent_bytes += len(buffer)
        self.write_timeout = timeout
        if self.unsent_bytes >= COALESCE_BYTES:
            await self.send_unsent()

    async def aclose(self) -> None:
        # Whatever is unsent belonged to a request abandoned before its answer was read; it
        # never leaves (the caller already counts such a request as possibly delivered).
        self.unsent.clear()
        self.unsent_bytes = 0
        await self.inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> GuardedStream:
        if self.unsent:
            await self.send_unsent()
        return GuardedStream(
            await self.inner.start_tls(ssl_context, server_hostname, timeout),
            self.while_waiting,
        )

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return self.follower.spoilt or socket_readable(self.raw_socket)
        if info == "socket":
            return self.raw_socket
        return self.inner.get_extra_info(info)


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """An httpcore2 network backend that connects only to addresses it has checked."""

    def __init__(
        self, allow_loopback: bool, while_waiting: Callable[[], None] | None = None
    ) -> None:
        self.inner = httpcore2.AnyIOBackend()
        self.allow_loopback = allow_loopback
        self.while_waiting = while_waiting

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> GuardedStream:
        # `host` is the URL's host as httpx encoded it (an IDN as its IDNA 2008 A-label):
        # the name resolved here is the name TLS sends (SNI) and checks the certificate for.
        addresses = await addresses_to_connect(
            host,
            port,
            self.allow_loopback,
            timeout,
            httpcore2.ConnectError,
            httpcore2.ConnectTimeout,
        )
        failure: Exception | None = None
        for address in addresses:  # the checked addresses, and only those
            try:
                stream = await self.inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
                continue
            return GuardedStream(stream, self.while_waiting)
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("poppy-tui connects to Companies over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# httpcore2's exceptions and the httpx2 ones they become, most specific first: what http.py reads
# to say whether a request may have reached the Company. httpx2's own transport keeps the same
# table to itself; a transport of our own needs one too.
_MAPPED_ERRORS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    # httpcore lets h11's own error out when h11 refuses a piece of a request's body.
    (h11.LocalProtocolError, httpx2.LocalProtocolError),
)


def translated(exc: Exception, request: httpx2.Request, exchange: _Exchange) -> Exception:
    """httpcore2's (or h11's) failure as the httpx2 exception http.py reads; others unchanged."""
    for core_error, client_error in _MAPPED_ERRORS:
        if isinstance(exc, core_error):
            if client_error is httpx2.LocalProtocolError and exchange.sent:
                # Refused while writing a body whose first part had left: maybe delivered.
                return httpx2.WriteError(
                    f"the request could not be finished ({exc})", request=request
                )
            return client_error(str(exc), request=request)
    return exc


# Reading an answer's body happens after every byte of the request left.
_SENT = _Exchange()
_SENT.sent = True


class AnswerStream(httpx2.AsyncByteStream):
    """httpcore's response body as httpx reads it, its failures as httpx's exceptions."""

    def __init__(self, inner: AsyncIterable[bytes], request: httpx2.Request) -> None:
        self.inner = inner
        self.request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self.inner:
                yield part
        except Exception as exc:
            mapped = translated(exc, self.request, _SENT)
            if mapped is exc:
                raise
            raise mapped from None

    async def aclose(self) -> None:
        closer: Callable[[], Awaitable[None]] | None = getattr(self.inner, "aclose", None)
        if closer is not None:
            try:
                await closer()
            except Exception as exc:
                mapped = translated(exc, self.request, _SENT)
                if mapped is exc:
                    raise
                raise mapped from None


class GuardedTransport(httpx2.AsyncBaseTransport):
    """httpx's transport interface over httpcore connection pools whose connections go through
    the guarded backend, built from both libraries' public API (as httpx's own
    AsyncHTTPTransport is, which offers no way to choose the network backend). Without a proxy:
    proxies get their own mounts. Two pools, by scheme, so the TLS context (loading the CA bundle
    costs more than a whole request to a loopback Company, which never needs it) is made when the
    first https request goes out; httpcore offers it ALPN (http/1.1), SNI and the certificate
    check for the URL's host as httpx encoded it."""

    def __init__(self, backend: GuardedBackend, limits: httpx2.Limits) -> None:
        self.backend = backend
        self.limits = limits
        self.plain = self.new_pool(None)
        self.tls: httpcore2.AsyncConnectionPool | None = None

    def new_pool(self, ssl_context: ssl.SSLContext | None) -> httpcore2.AsyncConnectionPool:
        return httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=self.limits.max_connections,
            max_keepalive_connections=self.limits.max_keepalive_connections,
            keepalive_expiry=self.limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=self.backend,
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme == "https":
            if self.tls is None:
                self.tls = self.new_pool(httpx2.create_ssl_context(trust_env=True))
            pool = self.tls
        elif url.scheme == "http":
            pool = self.plain
        else:
            raise httpx2.UnsupportedProtocol(
                f"poppy-tui speaks http and https, not {url.scheme!r}", request=request
            )
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        exchange = _Exchange()
        token = _CURRENT_EXCHANGE.set(exchange)
        try:
            answer = await pool.handle_async_request(core_request)
        except Exception as exc:
            mapped = translated(exc, request, exchange)
            if mapped is exc:
                raise
            raise mapped from None
        finally:
            _CURRENT_EXCHANGE.reset(token)
        names = {name.lower() for name, _ in answer.headers}
        if b"transfer-encoding" in names and b"content-length" in names:
            # RFC 9112 6.3: such an answer "ought to be handled as an error" (it is how
            # responses are split and smuggled); what its body is depends on who reads it.
            await answer.aclose()
            raise httpx2.RemoteProtocolError(
                "the answer has both Content-Length and Transfer-Encoding", request=request
            )
        # An async pool's answer streams asynchronously (as httpx2's own transport asserts).
        assert isinstance(answer.stream, AsyncIterable)
        return httpx2.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=AnswerStream(answer.stream, request),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self.plain.aclose()
        if self.tls is not None:
            await self.tls.aclose()


def guarded_transport(
    allow_loopback: bool,
    limits: httpx2.Limits,
    while_waiting: Callable[[], None] | None = None,
) -> GuardedTransport:
    """A transport for httpx2.AsyncClient that connects only to checked addresses."""
    return GuardedTransport(GuardedBackend(allow_loopback, while_waiting), limits)


def request_guard(allow_loopback: bool) -> Callable[[httpx2.Request], Awaitable[None]]:
    """An async `request` event hook: checks what the URL's host resolves to here, and raises the
    client's own ConnectError, so a refused destination counts as "not sent". Needed only where a
    proxy will do the connecting (the backend above can't see the Company's name there)."""

    async def guard(request: httpx2.Request) -> None:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            await check_destination(url.host, port, allow_loopback)
        except DestinationRefused as exc:
            raise httpx2.ConnectError(f"refused to connect: {exc}", request=request) from None

    return guard


# Connections open at once, across Companies, in each of a transport's two pools (plain http and
# https): the dispatcher sends at most 8 of one Company's approvals at a time
# (agent/dispatcher.py), so two Companies' sends and the person's own requests fit. Past it, a
# request waits for a connection (httpx's pool timeout: "not sent").
MAX_CONNECTIONS = 20


def pool_limits() -> httpx2.Limits:
    """httpx2.Limits: every connection the pool may open is kept alive too. httpcore closes an
    idle connection whenever more than `max_keepalive_connections` are open, so a smaller number
    made every round of concurrent sends reopen (for https, handshake again) the ones it closed."""
    return httpx2.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS)


def _proxies_configured() -> bool:
    return any(scheme in urllib.request.getproxies() for scheme in ("http", "https", "all"))


def guarded_client_options(
    allow_loopback: bool,
    limits: httpx2.Limits | None = None,
    while_waiting: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `httpx2.AsyncClient`: the guarded transport, plus the name check
    before each request when a proxy may be used.
    `while_waiting`: called each time a request has been sent and its answer is awaited."""
    hooks = [request_guard(allow_loopback)] if _proxies_configured() else []
    return {
        "transport": guarded_transport(allow_loopback, limits or pool_limits(), while_waiting),
        "event_hooks": {"request": hooks},
    }
