"""Which network addresses poppy-tui may connect to (anti-SSRF, core spec 0.2 section 3).

The one place these rules live. Pure: no resolution, no sockets. `agent/net/netguard.py` applies
them to the addresses a name actually resolves to, right before it connects to one of them;
`protocol/discovery.py` applies them early to URLs written with an IP literal.

Never allowed: private, link-local, reserved, multicast, unspecified addresses, and IPv6 forms
that carry such an IPv4 address inside them: IPv4-mapped (::ffff:0:0/96), IPv4-translated
(::ffff:0:0:0/96, RFC 2765 SIIT), IPv4-compatible (::/96), NAT64 (64:ff9b::/96 embeds one in its last 32 bits; the local-use 64:ff9b:1::/48 is
refused whole, as where it embeds one depends on the network), 6to4 (2002::/16) and Teredo.
The deprecated site-local range fec0::/10 (RFC 3879) is refused too: Python's `is_global`
counts it as global, but routers that still honour it keep it inside a site, like a private range.
Loopback only when the caller allows it (the demo and tests) and only by a loopback name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# RFC 2765 (SIIT) "IPv4-translated" addresses carry an IPv4 address in their last 32 bits.
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
SITE_LOCAL = ipaddress.ip_network("fec0::/10")


def is_loopback_host(host: str) -> bool:
    """A loopback name: `localhost`, or a loopback IP literal (brackets allowed)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
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
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address, allowed only for local Companies"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in SITE_LOCAL:
            return "a site-local address (fec0::/10), private to a site"
        if ip in NAT64_LOCAL_USE:
            return "a local-use NAT64 address (64:ff9b:1::/48), which may reach any private IPv4 address"
        inner = embedded_ipv4(ip)
        if inner is not None and (inner.is_loopback or not inner.is_global):
            return f"an IPv6 address that reaches the private, loopback or reserved IPv4 address {inner}"
        if ip.teredo is not None:
            return "a Teredo tunnel address"
    if not ip.is_global or ip.is_multicast:
        return "a private, link-local or reserved address"
    return None


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
