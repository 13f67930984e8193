"""Where the agent may connect: never to private, link-local or reserved addresses, and to
loopback only when the user allows it (the demo and tests) and only by a loopback name.

The check runs on the addresses the host name resolves to, just before each request, so a
public name that resolves to 10.0.0.5 or 127.0.0.1 (DNS rebinding) is refused as well.
One event hook serves httpx (API, discovery, conversations) and httpx2 (the MCP SDK).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any, Callable, Iterable

from poppy_tui.protocol.discovery import is_loopback_host


class DestinationRefused(Exception):
    pass


def address_problem(host: str, addresses: Iterable[str], allow_loopback: bool) -> str | None:
    """Why connecting to `host` (resolved to `addresses`) is refused, or None when it is allowed."""
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if ip.is_loopback:
            if not (allow_loopback and is_loopback_host(host)):
                return f"{host} resolves to the loopback address {ip}, allowed only for local Companies"
        elif not ip.is_global:
            return f"{host} resolves to {ip}, a private, link-local or reserved address"
    return None


async def check_destination(host: str, port: int, allow_loopback: bool) -> None:
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare)
        addresses: list[str] = [bare]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(bare, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise DestinationRefused(f"{host} can't be resolved ({exc.strerror or exc})") from None
        addresses = sorted({info[4][0] for info in infos})
    problem = address_problem(bare, addresses, allow_loopback)
    if problem:
        raise DestinationRefused(problem)


def request_guard(connect_error: type[Exception], allow_loopback: bool) -> Callable[[Any], Any]:
    """An async `request` event hook for an httpx-style client. It raises the client's own
    ConnectError, so a refused destination counts as "not sent", never as "maybe performed"."""

    async def guard(request: Any) -> None:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            await check_destination(url.host, port, allow_loopback)
        except DestinationRefused as exc:
            raise connect_error(f"refused to connect: {exc}", request=request) from None

    return guard
