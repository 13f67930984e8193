"""The address rules decided from the IANA Special-Purpose Address Registries
(protocol/special_addresses.py), the same on every Python: every registry row is exercised by an
address whose verdict is written here by hand from the registry (not computed from the rows, and
not from `ipaddress.is_global`, which differs between 3.11.2, 3.11.7 and 3.13), with neighbours
just outside the blocks that are refused."""

from __future__ import annotations

import ast
import ipaddress
from pathlib import Path

import poppy_tui

import pytest

from poppy_tui.protocol.addresses import address_refusal, is_loopback_host, parse_address
from poppy_tui.protocol.special_addresses import IPV4_SPECIAL, IPV6_SPECIAL, special_block

# (address, refused): loopback is refused here (allow_loopback=False).
SAMPLES = [
    # IPv4 rows
    ("0.0.0.0", True),
    ("0.1.2.3", True),
    ("10.0.0.0", True),
    ("10.255.255.255", True),
    ("11.0.0.0", False),
    ("100.64.0.0", True),
    ("100.127.255.255", True),
    ("100.128.0.0", False),
    ("127.0.0.1", True),
    ("127.255.255.254", True),
    ("169.254.169.254", True),
    ("169.255.0.1", False),
    ("172.16.0.1", True),
    ("172.31.255.255", True),
    ("172.32.0.0", False),
    ("192.0.0.200", True),  # 192.0.0.0/24, IETF Protocol Assignments
    ("192.0.0.7", True),  # 192.0.0.0/29, Service Continuity
    ("192.0.0.8", True),
    ("192.0.0.9", False),  # PCP anycast: globally reachable inside a refused /24
    ("192.0.0.10", False),  # TURN anycast
    ("192.0.0.170", True),
    ("192.0.0.171", True),
    ("192.0.1.0", False),
    ("192.0.2.1", True),
    ("192.31.196.1", False),
    ("192.52.193.1", False),
    ("192.88.99.1", True),
    ("192.88.99.2", True),
    ("192.168.0.1", True),
    ("192.169.0.1", False),
    ("192.175.48.1", False),
    ("198.18.0.0", True),
    ("198.19.255.255", True),
    ("198.20.0.0", False),
    ("198.51.100.1", True),
    ("203.0.113.255", True),
    ("203.0.114.0", False),
    ("240.0.0.1", True),
    ("255.255.255.254", True),
    ("255.255.255.255", True),
    ("224.0.0.1", True),  # multicast (its own registry)
    ("239.255.255.255", True),
    ("8.8.8.8", False),
    ("93.184.216.34", False),
    # IPv6 rows
    ("::1", True),
    ("::", True),
    ("::ffff:8.8.8.8", True),  # IPv4-mapped: not globally reachable as an IPv6 destination
    ("::ffff:10.0.0.1", True),
    ("64:ff9b::808:808", False),  # NAT64 well-known prefix: as reachable as the IPv4 inside
    ("64:ff9b::a00:1", True),
    ("64:ff9b:1::808:808", True),
    ("100::1", True),
    ("100:0:0:1::1", True),  # RFC 9780 (2025), unknown to every Python's tables
    ("100:0:0:2::1", False),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", True),  # Teredo
    ("2001:1::1", False),
    ("2001:1::2", False),
    ("2001:1::3", False),
    ("2001:1::4", True),  # the rest of 2001::/23
    ("2001:2::1", True),
    ("2001:3::1", False),
    ("2001:4:112::1", False),
    ("2001:10::1", True),
    ("2001:20::1", False),
    ("2001:30::1", False),
    ("2001:200::1", False),  # past 2001::/23
    ("2001:db8::1", True),
    ("2001:db9::1", False),
    ("2002:808:808::1", False),  # 6to4 of 8.8.8.8
    ("2002:a00:1::1", True),  # 6to4 of 10.0.0.1
    ("2002:7f00:1::1", True),  # 6to4 of 127.0.0.1
    ("2620:4f:8000::1", False),
    ("3fff::1", True),  # RFC 9637 documentation (2024)
    ("3fff:fff:ffff::1", True),
    ("3fff:1000::1", False),
    ("5f00::1", True),  # RFC 9602 SRv6 SIDs (2024)
    ("5f01::1", False),
    ("fc00::1", True),
    ("fdff:ffff::1", True),
    ("fe80::1", True),
    ("febf:ffff::1", True),
    ("fec0::1", True),  # deprecated site-local (RFC 3879), not in the registry
    ("ff02::1", True),  # multicast
    ("2606:4700::1111", False),
    ("2a00:1450::1", False),
]


@pytest.mark.parametrize(("address", "refused"), SAMPLES)
def test_each_address_is_decided_from_the_registry(address, refused):
    ip = ipaddress.ip_address(address)
    assert (address_refusal(ip, allow_loopback=False) is not None) is refused


def test_every_registry_row_has_a_sample():
    covered = {special_block(ipaddress.ip_address(address)) for address, _ in SAMPLES}
    missing = [row.network for row in (*IPV4_SPECIAL, *IPV6_SPECIAL) if row not in covered]
    # The deprecated 192.88.99.0/24 and 2001:10::/28 included: each row, not only the open ones.
    assert not missing, f"registry rows without a sample here: {missing}"


def test_a_refusal_names_the_registry_row():
    reason = address_refusal(ipaddress.ip_address("198.51.100.7"), allow_loopback=False)
    assert reason is not None and "Documentation (TEST-NET-2)" in reason and "RFC 5737" in reason
    assert "private" in reason  # what callers and people look for


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("[::1]", True),
        ("::1", True),
        # Python 3.13's is_loopback says yes to this one, 3.11's no: the registry's rows say no.
        ("::ffff:127.0.0.1", False),
        ("128.0.0.1", False),
        ("example.com", False),
    ],
)
def test_loopback_names_are_the_registry_rows(host, loopback):
    assert is_loopback_host(host) is loopback


def test_loopback_is_allowed_only_when_asked():
    for text in ("127.0.0.1", "::1"):
        ip = parse_address(text)
        assert ip is not None
        assert address_refusal(ip, allow_loopback=True) is None
        assert "loopback" in (address_refusal(ip, allow_loopback=False) or "")


# The interpreter's classification tables, which changed between Python releases.
_TABLES = {
    "is_global",
    "is_private",
    "is_reserved",
    "is_link_local",
    "is_site_local",
    "is_loopback",
}


@pytest.mark.parametrize(
    "path", ["protocol/addresses.py", "protocol/special_addresses.py", "agent/net/netguard.py"]
)
def test_the_rules_read_no_interpreter_table(path):
    # The package under test (the installed one in CI's other-Python runs, not the checkout).
    source = Path(poppy_tui.__file__).parent / path
    read = {
        node.attr
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in _TABLES
    }
    assert not read, f"{path} reads ipaddress's {sorted(read)}"
