"""One rule for "is this host loopback" (protocol/addresses.py is_loopback_host), used by
discovery, the client_id checks, netguard and sign-in alike: `localhost` or a loopback IP literal,
brackets only around an IPv6 literal, as a URL writes it (RFC 3986 3.2.2)."""

from __future__ import annotations

import pytest

from poppy_tui.protocol import client_metadata, discovery
from poppy_tui.protocol.addresses import is_loopback_host


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST", "127.0.0.1", "127.255.255.254", "::1", "[::1]", "[0:0:0:0:0:0:0:1]"],
)
def test_loopback_names_and_literals(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "[localhost]",  # brackets hold an IP literal, never a name: no host at all
        "[127.0.0.1]",  # nor an IPv4 address
        "[::1",  # unbalanced
        "::1]",
        "localhost.evil.test",
        "evil.localhost.test",
        "128.0.0.1",
        "::2",
        "[::2]",
        "10.0.0.1",
        "0.0.0.0",
        "",
        None,
    ],
)
def test_everything_else_is_not(host):
    assert not is_loopback_host(host)


def test_the_client_id_checks_and_discovery_use_the_same_rule():
    assert client_metadata.is_loopback_host is is_loopback_host
    assert discovery.is_loopback_host is is_loopback_host
    # A client_id written with a bracketed name is not a loopback one, so http is refused.
    with pytest.raises(client_metadata.IdentityError):
        client_metadata.check_client_id("http://[localhost]/agent.json", allow_loopback=True)
    assert client_metadata.check_client_id("http://[::1]:8400/agent.json", allow_loopback=True)
    # Neither is a client_id that no URL parser reads: a clear refusal, not a ValueError.
    for unreadable in ("http://[localhost]/agent.json", "https://shop.test:99999/agent.json"):
        with pytest.raises(client_metadata.IdentityError, match="not a URL"):
            client_metadata.check_client_id(unreadable, allow_loopback=True)
