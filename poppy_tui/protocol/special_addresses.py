"""The IANA Special-Purpose Address Registries (RFC 6890, as updated by RFC 8190), written down
once as data: which address blocks a datagram may be sent to beyond one administrative domain
(the registries' "Globally Reachable" column). protocol/addresses.py decides from these rows, not
from the interpreter's `ipaddress` tables (`is_global`, `is_private`), which changed between
Python releases (3.11.2 counts 2002::/16 as private, 3.11.7 as global; neither knows 3fff::/20,
5f00::/16 or 100:0:0:1::/64) and so made the same address allowed on one Python and refused on
another.

Sources (the registries' CSV files, the "Globally Reachable" column):
- IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/
- IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/
Read 2026-12-07; the newest rows are 100:0:0:1::/64 (RFC 9780, 2025-04) and 3fff::/20 (RFC 9637,
2024-07). Multicast (224.0.0.0/4, RFC 5771; ff00::/8, RFC 4291) is in neither registry (it has its
own) and is listed apart.

To update: compare both CSV files with the rows below, add or change rows (block, name, RFC,
globally reachable), update the date above; tests/protocol/test_special_addresses.py checks every
row, so add the new row's expectation there too.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# "N/A" in the registry: reachability is the embedded address's (6to4: RFC 3056) or the tunnel's
# (Teredo: RFC 4380), which the row can't say; addresses.py decides those itself.
Reachable = Literal[True, False, "N/A"]


@dataclass(frozen=True)
class SpecialBlock:
    network: Network
    name: str
    rfc: str
    globally_reachable: Reachable


def _rows(rows: tuple[tuple[str, str, str, Reachable], ...]) -> tuple[SpecialBlock, ...]:
    return tuple(
        SpecialBlock(ipaddress.ip_network(block), name, rfc, reachable)
        for block, name, rfc, reachable in rows
    )


# Deprecated rows with a termination date and no values (192.88.99.0/24, the former 6to4 relay
# anycast; 2001:10::/28, the former ORCHID) are kept as not reachable: nothing legitimate is there.
IPV4_SPECIAL = _rows(
    (
        ("0.0.0.0/8", '"This network"', "RFC 791", False),
        ("0.0.0.0/32", '"This host on this network"', "RFC 1122", False),
        ("10.0.0.0/8", "Private-Use", "RFC 1918", False),
        ("100.64.0.0/10", "Shared Address Space", "RFC 6598", False),
        ("127.0.0.0/8", "Loopback", "RFC 1122", False),
        ("169.254.0.0/16", "Link Local", "RFC 3927", False),
        ("172.16.0.0/12", "Private-Use", "RFC 1918", False),
        ("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", False),
        ("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False),
        ("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False),
        ("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True),
        ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
        ("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", False),
        ("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", False),
        ("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False),
        ("192.31.196.0/24", "AS112-v4", "RFC 7535", True),
        ("192.52.193.0/24", "AMT", "RFC 7450", True),
        ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", False),
        ("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", False),
        ("192.168.0.0/16", "Private-Use", "RFC 1918", False),
        ("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True),
        ("198.18.0.0/15", "Benchmarking", "RFC 2544", False),
        ("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False),
        ("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False),
        ("240.0.0.0/4", "Reserved", "RFC 1112", False),
        ("255.255.255.255/32", "Limited Broadcast", "RFC 919", False),
    )
)

IPV6_SPECIAL = _rows(
    (
        ("::1/128", "Loopback Address", "RFC 4291", False),
        ("::/128", "Unspecified Address", "RFC 4291", False),
        ("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False),
        ("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True),
        ("64:ff9b:1::/48", "IPv4-IPv6 Translat. (local use)", "RFC 8215", False),
        ("100::/64", "Discard-Only Address Block", "RFC 6666", False),
        ("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False),
        ("2001::/23", "IETF Protocol Assignments", "RFC 2928", False),
        ("2001::/32", "TEREDO", "RFC 4380", "N/A"),
        ("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True),
        ("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
        ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True),
        ("2001:2::/48", "Benchmarking", "RFC 5180", False),
        ("2001:3::/32", "AMT", "RFC 7450", True),
        ("2001:4:112::/48", "AS112-v6", "RFC 7535", True),
        ("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", False),
        ("2001:20::/28", "ORCHIDv2", "RFC 7343", True),
        ("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True),
        ("2001:db8::/32", "Documentation", "RFC 3849", False),
        ("2002::/16", "6to4", "RFC 3056", "N/A"),
        ("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True),
        ("3fff::/20", "Documentation", "RFC 9637", False),
        ("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False),
        ("fc00::/7", "Unique-Local", "RFC 4193", False),
        ("fe80::/10", "Link-Local Unicast", "RFC 4291", False),
    )
)

# Not special-purpose rows, but never a Company: multicast (its own registries), and the IPv6
# site-local range RFC 3879 deprecated, which routers that still honour it keep inside a site.
IPV4_MULTICAST = ipaddress.ip_network("224.0.0.0/4")
IPV6_MULTICAST = ipaddress.ip_network("ff00::/8")
IPV6_SITE_LOCAL = ipaddress.ip_network("fec0::/10")


def special_block(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> SpecialBlock | None:
    """The most specific registry row `ip` falls in (192.0.0.9 is in 192.0.0.0/24, which is not
    reachable, and in its own /32, which is), or None for an address no row lists."""
    rows = IPV4_SPECIAL if isinstance(ip, ipaddress.IPv4Address) else IPV6_SPECIAL
    found: SpecialBlock | None = None
    for row in rows:
        if ip in row.network and (found is None or row.network.prefixlen > found.network.prefixlen):
            found = row
    return found
