"""Which network addresses poppy-tui may connect to (anti-SSRF, core spec 0.2 section 3).

The one place these rules live. Pure: no resolution, no sockets. `agent/net/netguard.py` applies
them to the addresses a name actually resolves to, right before it connects to one of them;
`protocol/discovery.py` applies them early to URLs written with an IP literal.

Which addresses are reachable on the internet is read from the IANA Special-Purpose Address
Registries, written down in protocol/special_addresses.py (its source and date there), never from
the interpreter's `ipaddress` tables (`is_global`, `is_private`, `is_loopback`), which differ
between Python releases: the same address is decided alike on every Python. `ipaddress` only
parses here. Never allowed: every registry block that is not globally reachable (private,
shared, link-local, documentation, benchmarking, reserved, the unspecified address, IPv4-mapped
`::ffff:0:0/96`, the local-use NAT64 prefix 64:ff9b:1::/48, ...), multicast, the deprecated
site-local range fec0::/10 (RFC 3879: routers that still honour it keep it inside a site, like a
private range), Teredo (2001::/32, whose reach depends on a tunnel server), and the IPv6 forms
that carry an IPv4 address which is refused: NAT64 (64:ff9b::/96, globally reachable in the
registry, embeds one in its last 32 bits), 6to4 (2002::/16, whose reach the registry leaves to
the IPv4 address it embeds), IPv4-translated (::ffff:0:0:0/96, RFC 2765 SIIT) and
IPv4-compatible (::/96). Loopback only when the caller allows it (the demo and tests) and only by
a loopback name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from poppy_tui.protocol.special_addresses import (
    IPV4_MULTICAST,
    IPV6_MULTICAST,
    IPV6_SITE_LOCAL,
    special_block,
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# RFC 2765 (SIIT) "IPv4-translated" addresses carry an IPv4 address in their last 32 bits.
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
SITE_LOCAL = IPV6_SITE_LOCAL
# The registries' two Loopback rows (RFC 1122, RFC 4291). Python 3.13's `is_loopback` also counts
# ::ffff:127.0.0.1, 3.11's does not; here it is the rows, on every Python.
LOOPBACK_V4 = ipaddress.ip_network("127.0.0.0/8")
LOOPBACK_V6 = ipaddress.ip_address("::1")


def is_loopback(ip: IPAddress) -> bool:
    """One of the registries' Loopback addresses (127.0.0.0/8, ::1)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in LOOPBACK_V4
    return ip == LOOPBACK_V6


def is_loopback_host(host: str) -> bool:
    """A loopback name: `localhost`, or a loopback IP literal (brackets allowed)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return is_loopback(ipaddress.ip_address(host))
    except ValueError:
        return False


def parse_address(text: str) -> IPAddress | None:
    """An IP literal (brackets and an IPv6 zone allowed), or None for a name."""
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and would reach, where it carries one."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64_WELL_KNOWN or ip in IPV4_TRANSLATED or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(ip: IPAddress, allow_loopback: bool) -> str | None:
    """Why `ip` may not be connected to ("a private ... address"), or None. `allow_loopback`
    already includes the rule that the host was named as loopback."""
    if is_loopback(ip):
        return None if allow_loopback else "a loopback address, allowed only for local Companies"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in SITE_LOCAL:
            return "a site-local address (fec0::/10), private to a site"
        if ip in NAT64_LOCAL_USE:
            return "a local-use NAT64 address (64:ff9b:1::/48), which may reach any private IPv4 address"
        inner = embedded_ipv4(ip)
        if inner is not None and address_refusal(inner, False) is not None:
            return f"an IPv6 address that reaches the private, loopback or reserved IPv4 address {inner}"
        if ip.teredo is not None:
            return "a Teredo tunnel address"
    if ip in (IPV4_MULTICAST if isinstance(ip, ipaddress.IPv4Address) else IPV6_MULTICAST):
        return "a multicast address"
    block = special_block(ip)
    # "N/A" (6to4, Teredo): reachable as far as the embedded IPv4 address is, checked above.
    if block is None or block.globally_reachable is not False:
        return None
    return (
        f"a private or special-purpose address ({block.name}, {block.network}, {block.rfc}), "
        "not reachable on the internet"
    )


def address_problem(host: str, addresses: Iterable[str], allow_loopback: bool) -> str | None:
    """Why connecting to `host`, which resolved to `addresses`, is refused; None when every one
    of them is allowed (one bad answer refuses them all: DNS rebinding mixes them)."""
    loopback_ok = allow_loopback and is_loopback_host(host)
    for text in addresses:
        ip = parse_address(text)
        if ip is None:
            return f"{host} resolved to {text!r}, which is not an IP address"
        reason = address_refusal(ip, loopback_ok)
        if reason:
            return (
                f"{host} resolves to {ip}, {reason}"
                if parse_address(host) is None
                else f"{ip} is {reason}"
            )
    return None


def literal_problem(host: str, allow_loopback: bool) -> str | None:
    """For a host written as an IP literal: why it is refused, or None (names pass here; they are
    checked on what they resolve to, at connect time)."""
    ip = parse_address(host)
    if ip is None:
        return None
    reason = address_refusal(ip, allow_loopback)
    return f"{ip} is {reason}" if reason else None
