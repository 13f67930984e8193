"""Listening on a socket for a browser or an agent, the same way everywhere poppy-tui serves
(`poppy-tui mcp --http`, `poppy-tui web`): where to listen (`--listen HOST:PORT`, loopback unless
the person says otherwise), the TLS context from PEM files, and the Host names a request may name
(DNS rebinding: a page of another site that resolves its own name to 127.0.0.1 reaches a
loopback server under that name, so the name in `Host` is checked against the names served).

Standard library only: the servers' commands check their options before anything heavy loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import socket
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path


def host_key(name: str) -> str:
    """A host name or address as compared here: lower case, no brackets, no trailing dot;
    an IPv6 address in its compressed form."""
    name = name.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.ip_address(name).compressed
    except ValueError:
        return name


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name`, `name:port`, `[v6]` or `[v6]:port` as (host_key, port); None if malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address needs brackets in Host
    else:
        name, port_text = value, None
    if not name:
        return None
    if port_text is None:
        return host_key(name), None
    if not port_text.isdigit() or len(port_text) > 5:
        return None
    return host_key(name), int(port_text)


@dataclass(frozen=True)
class Served:
    """Where this server answers: its scheme, port and the host names it is known by."""

    scheme: str  # "http" or "https"
    port: int
    names: frozenset[str]  # host_key()s

    @property
    def default_port(self) -> int:
        return 443 if self.scheme == "https" else 80

    def is_own_origin(self, scheme: str, name: str, port: int | None) -> bool:
        return (
            scheme == self.scheme
            and name in self.names
            and (port if port is not None else self.default_port) == self.port
        )

    def shown_names(self) -> list[str]:
        return [f"[{name}]" if ":" in name else name for name in sorted(self.names)]


class ListenError(ValueError):
    """A --listen, --allow-host or TLS setting that can't be used (a usage error)."""


@dataclass(frozen=True)
class Listen:
    host: str  # as given, e.g. "127.0.0.1", "::1", "localhost", "0.0.0.0"
    address: str  # the address to bind
    port: int
    loopback: bool

    @property
    def every_address(self) -> bool:
        return ipaddress.ip_address(self.address).is_unspecified

    @property
    def family(self) -> int:
        return socket.AF_INET6 if ":" in self.address else socket.AF_INET


def parse_listen(text: str) -> Listen:
    """`HOST:PORT` (`[v6]:PORT` for an IPv6 address); port 0 picks a free one."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else None
    else:
        host, colon, port_text = text.rpartition(":")
        if not colon or ":" in host:
            port_text = None
    if host and port_text is not None and port_text.isdigit() and int(port_text) > 65535:
        # Said as what it is, as `companies add` says it of a URL's port (walk K13).
        raise ListenError(
            f"--listen: the port must be a number from 0 to 65535 (0 picks a free one), "
            f"got {port_text[:20]!r} in {text[:100]!r}"
        )
    if not host or port_text is None or not port_text.isdigit():
        raise ListenError(
            f"--listen wants HOST:PORT (e.g. 127.0.0.1:8765, [::1]:8765; port 0 picks a free one), "
            f"got {text[:100]!r}"
        )
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise ListenError(f"--listen: can't resolve {host[:100]!r}: {exc.strerror}") from None
        address = ipaddress.ip_address(found[0][4][0])
        # A name that resolves to loopback here may resolve elsewhere tomorrow: all of its
        # addresses must be loopback to count as loopback.
        loopback = all(ipaddress.ip_address(entry[4][0]).is_loopback for entry in found)
    else:
        loopback = address.is_loopback
    return Listen(host=host, address=address.compressed, port=int(port_text), loopback=loopback)


def served_names(listen: Listen, allowed_hosts: list[str]) -> frozenset[str]:
    """The Host names requests may use: the listen host and address, the loopback names when it
    listens on loopback (or on every address, loopback included), and every --allow-host."""
    names = {host_key(listen.host), host_key(listen.address)}
    if listen.loopback or listen.every_address:
        names |= {"localhost", "127.0.0.1", "::1"}
    for name in allowed_hosts:
        key = host_key(name)
        if not key or any(ch in key for ch in "/@ ?#[]") or (":" in key and not _is_ip(key)):
            raise ListenError(
                f"--allow-host wants a host name or address without a port, got {name[:100]!r}"
            )
        names.add(key)
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(names)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def tls_context(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    """The server's TLS context from PEM files (checked now, so a bad file is one clear line)."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ListenError("--tls-cert and --tls-key go together")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise ListenError(f"can't use --tls-cert {cert} with --tls-key {key}: {exc}") from None
    return context


def bind(listen: Listen) -> socket.socket:
    sock = socket.socket(listen.family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if listen.family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((listen.address, listen.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ListenError(
            f"can't listen on {listen.address}:{listen.port}: {exc.strerror or exc}"
        ) from None
    sock.setblocking(False)
    return sock


def origin_parts(origin: str) -> tuple[str, str, int | None] | None:
    """An `Origin` header as (scheme, host key, port or None), or None when it is not a bare
    origin (a path, a query or user info in it, no host, a port that is not one): what the MCP
    gate and the web page compare with the address they serve."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.path or parts.query or parts.username is not None:
        return None
    return parts.scheme, host_key(parts.hostname), port


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """SIGINT and SIGTERM stop a server of ours gracefully (uvicorn's own handling raises them
    again after its shutdown, which would end the process before the Agent is closed). Where the
    loop can't take signal handlers (not the main thread, Windows), nothing is installed."""
    loop = asyncio.get_running_loop()
    installed = []
    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(number, stop)
            installed.append(number)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)
