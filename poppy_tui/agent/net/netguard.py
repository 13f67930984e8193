"""Where the agent may connect, enforced at the socket: resolve a name once, check every
address it resolved to (protocol/addresses.py's rules), then connect to one of those very
addresses. No second DNS resolution happens between the check and the connect, so a name
that answers a public address to the check and 127.0.0.1 to the connect (DNS rebinding)
gets nowhere.

It is an httpcore network backend, so the URL, the Host header and the TLS SNI stay the
name the Company was addressed by; only the TCP connect goes to the checked IP. One backend
serves httpx (API, discovery, conversations) and httpx2 (the MCP SDK's client): both clients
are built here (`guarded_client_options`).

Through a proxy the proxy resolves the name, not us: there the name is checked on what it
resolves to here, before the request, which is the best a client behind a proxy can do
(docs/safety.md).
"""

from __future__ import annotations

import select
import socket
import urllib.request
from types import ModuleType
from typing import Any, Callable, Iterable

import anyio

from poppy_tui.protocol.addresses import address_problem, is_loopback_host, literal_problem, parse_address

__all__ = [
    "DestinationRefused",
    "address_problem",
    "addresses_to_connect",
    "check_destination",
    "guarded_client_options",
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
        raise DestinationRefused(f"{host} can't be resolved ({getattr(exc, 'strerror', None) or exc})") from None
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
    host: str, port: int, allow_loopback: bool, timeout: float | None,
    connect_error: type[Exception], connect_timeout: type[Exception],
) -> list[str]:
    """resolve_checked within a connect's timeout, for the two ways poppy-tui connects (httpcore's
    backend below, agent/net/http11.py): a refused destination or a slow resolver is raised as that
    client's own connect failure, so it counts as "not sent"."""
    try:
        with anyio.fail_after(timeout):
            return await resolve_checked(host, port, allow_loopback)
    except DestinationRefused as exc:
        raise connect_error(f"refused to connect: {exc}") from None
    except TimeoutError:
        raise connect_timeout(f"resolving {host} took longer than {timeout:g} s") from None


# Writes gathered before one send() at most (GuardedStream); a request head and a JSON body fit.
COALESCE_BYTES = 64 * 1024


def socket_readable(sock: socket.socket | None) -> bool:
    """Whether a read would return at once: on an idle keep-alive connection that means the
    Company closed it (or sent bytes nobody asked for), so it must not carry another request."""
    fileno = -1 if sock is None else sock.fileno()
    if fileno < 0:
        return True  # gone: as good as closed
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return bool(poller.poll(0))


def _guarded_stream(httpcore: ModuleType, inner: Any, while_waiting: Callable[[], None] | None = None) -> Any:
    """An httpcore network stream over the backend's own, answering the pool's "is this idle
    connection still usable?" from the socket it keeps, instead of asking anyio each time."""

    class GuardedStream(httpcore.AsyncNetworkStream):  # type: ignore[name-defined]
        # Why the socket is kept: before every request, and again when each answer is closed,
        # httpcore's pool asks every pooled connection whether its socket is readable
        # (has_expired). The anyio stream answers by building its whole dict of extra attributes
        # (a getpeername() and a dozen lambdas) to pick the raw socket out of it: about a third of
        # the pool's cost per request with eight connections open. The socket never changes, so
        # it is looked up once here; the check itself (a zero-timeout poll) is the same.
        #
        # Why writes wait for the next read: h11 hands over a request's head and its body as
        # separate writes, which made two send() calls, and woke the Company twice, for every
        # request. An HTTP/1.1 client reads after it has written all of a request, so what was
        # written is sent, as one send(), when the answer is first read (or once
        # COALESCE_BYTES have gathered, so a large body is not held in memory).
        #
        # `while_waiting` runs right after a request has been sent, before its answer is awaited:
        # the client would only wait there, so short work done then (the agent signs the next
        # Session JWT, sessions.py) costs the next request nothing. It must not raise or block.
        def __init__(self, stream: Any) -> None:
            self._inner = stream
            self._socket = stream.get_extra_info("socket")
            self._unsent: list[bytes] = []
            self._unsent_bytes = 0
            self._write_timeout: float | None = None

        async def _send_unsent(self) -> None:
            data = b"".join(self._unsent) if len(self._unsent) > 1 else self._unsent[0]
            self._unsent.clear()
            self._unsent_bytes = 0
            await self._inner.write(data, self._write_timeout)

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            if self._unsent:
                try:
                    await self._send_unsent()
                except httpcore.WriteError:
                    # As httpcore does with a write error while it sends a request: read on,
                    # a Company may have answered (say, 413) before closing its end.
                    pass
                else:
                    if while_waiting is not None:
                        while_waiting()
            return await self._inner.read(max_bytes, timeout)

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            if not buffer:
                return
            self._unsent.append(buffer)
            self._unsent_bytes += len(buffer)
            self._write_timeout = timeout
            if self._unsent_bytes >= COALESCE_BYTES:
                await self._send_unsent()

        async def aclose(self) -> None:
            # Whatever is unsent belonged to a request abandoned before its answer was read; it
            # never leaves (the caller already counts such a request as possibly delivered).
            self._unsent.clear()
            self._unsent_bytes = 0
            await self._inner.aclose()

        async def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
            if self._unsent:
                await self._send_unsent()
            return _guarded_stream(
                httpcore, await self._inner.start_tls(ssl_context, server_hostname, timeout), while_waiting
            )

        def get_extra_info(self, info: str) -> Any:
            if info == "is_readable":
                return socket_readable(self._socket)
            if info == "socket":
                return self._socket
            return self._inner.get_extra_info(info)

    return GuardedStream(inner)


def _guarded_backend(
    httpcore: ModuleType, allow_loopback: bool, while_waiting: Callable[[], None] | None = None
) -> Any:
    """An httpcore(2) network backend that connects only to addresses it has checked."""

    class GuardedBackend(httpcore.AsyncNetworkBackend):  # type: ignore[name-defined]
        def __init__(self) -> None:
            self._inner = httpcore.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            addresses = await addresses_to_connect(
                host, port, allow_loopback, timeout, httpcore.ConnectError, httpcore.ConnectTimeout
            )
            failure: Exception | None = None
            for address in addresses:  # the checked addresses, and only those
                try:
                    stream = await self._inner.connect_tcp(
                        address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                    )
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    failure = exc
                    continue
                return _guarded_stream(httpcore, stream, while_waiting)
            assert failure is not None
            raise failure

        async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
            raise httpcore.ConnectError("poppy-tui connects to Companies over TCP only")

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return GuardedBackend()


def _guarded_transport(
    httpx: ModuleType, httpcore: ModuleType, allow_loopback: bool, limits: Any,
    while_waiting: Callable[[], None] | None = None,
) -> Any:
    """httpx's own transport (its error mapping, its streams) over a pool whose connections go
    through the guarded backend. Built without a proxy: proxies get their own mounts."""

    class GuardedTransport(httpx.AsyncHTTPTransport):  # type: ignore[name-defined]
        def __init__(self) -> None:  # not super().__init__: that would build a pool to throw away
            self.backend = _guarded_backend(httpcore, allow_loopback, while_waiting)
            self._pool = httpcore.AsyncConnectionPool(
                ssl_context=None,  # made before the first https request: handle_async_request
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry,
                http1=True,
                http2=False,
                network_backend=self.backend,
            )

        async def handle_async_request(self, request: Any) -> Any:
            # Loading the CA bundle costs more than the rest of a `call` to a loopback Company,
            # which never needs it: the context is made when the first https request goes out.
            # (Were it missing, httpcore would make its own default one: verifying, certifi's CAs.)
            if self._pool._ssl_context is None and request.url.scheme == "https":
                self._pool._ssl_context = httpx.create_ssl_context(trust_env=True)
            return await super().handle_async_request(request)

    return GuardedTransport()


def request_guard(connect_error: Callable[..., Exception], allow_loopback: bool) -> Callable[[Any], Any]:
    """An async `request` event hook: checks what the URL's host resolves to here, and raises the
    client's own ConnectError, so a refused destination counts as "not sent". Needed only where a
    proxy will do the connecting (the backend above can't see the Company's name there)."""

    async def guard(request: Any) -> None:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            await check_destination(url.host, port, allow_loopback)
        except DestinationRefused as exc:
            raise connect_error(f"refused to connect: {exc}", request=request) from None

    return guard


# Connections open at once, across Companies: the dispatcher sends at most 8 of one Company's
# approvals at a time (agent/dispatcher.py), so two Companies' sends and the person's own
# requests fit.
MAX_CONNECTIONS = 20


def pool_limits(module: Any) -> Any:
    """httpx(2).Limits: every connection the pool may open is kept alive too. httpcore closes an
    idle connection whenever more than `max_keepalive_connections` are open, so a smaller number
    made every round of concurrent sends reopen (for https, handshake again) the ones it closed."""
    return module.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS)


def _proxies_configured() -> bool:
    return any(scheme in urllib.request.getproxies() for scheme in ("http", "https", "all"))


def guarded_client_options(
    httpx: ModuleType, allow_loopback: bool, limits: Any = None, while_waiting: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Keyword arguments for `httpx.AsyncClient` or `httpx2.AsyncClient` (pass the module): the
    guarded transport, plus the name check before each request when a proxy may be used.
    `while_waiting`: called each time a request has been sent and its answer is awaited."""
    httpcore: ModuleType
    if httpx.__name__ == "httpx2":
        import httpcore2 as httpcore
    else:
        import httpcore
    limits = limits or pool_limits(httpx)
    hooks = [request_guard(httpx.ConnectError, allow_loopback)] if _proxies_configured() else []
    return {
        "transport": _guarded_transport(httpx, httpcore, allow_loopback, limits, while_waiting),
        "event_hooks": {"request": hooks},
    }

