"""Connections to private or loopback addresses are refused before any byte is sent."""

import httpx
import pytest

from poppy_tui.agent.http import make_client, request
from poppy_tui.agent.netguard import DestinationRefused, address_problem, check_destination
from poppy_tui.demo.testing import company
from poppy_tui.protocol.outcomes import NotSent


@pytest.mark.parametrize(
    "host,addresses,allow,refused",
    [
        ("api.example.com", ["93.184.216.34"], False, False),
        ("api.example.com", ["10.0.0.5"], True, True),
        ("api.example.com", ["93.184.216.34", "192.168.0.2"], True, True),
        ("api.example.com", ["127.0.0.1"], True, True),  # a public name resolving to loopback
        ("localhost", ["127.0.0.1", "::1"], True, False),
        ("localhost", ["127.0.0.1"], False, True),
        ("127.0.0.1", ["127.0.0.1"], True, False),
        ("metadata", ["169.254.169.254"], True, True),
        ("v6", ["fe80::1%eth0"], True, True),
        ("cgnat", ["100.64.0.1"], True, True),
    ],
)
def test_address_rules(host, addresses, allow, refused):
    assert (address_problem(host, addresses, allow) is not None) is refused


async def test_literal_private_address_is_refused_without_resolving():
    with pytest.raises(DestinationRefused, match="private"):
        await check_destination("10.1.2.3", 443, True)


async def test_the_client_refuses_before_connecting_and_reports_not_sent():
    # Nothing listens at 10.255.255.1 for us; the guard must stop the request before any packet.
    async with make_client(5.0, allow_loopback=True) as client:
        answer = await request(client, "GET", "https://10.255.255.1/x")
    assert isinstance(answer, NotSent) and "refused to connect" in answer.detail


async def test_loopback_is_reachable_only_when_allowed():
    with company() as running:
        async with make_client(5.0, allow_loopback=True) as client:
            answer = await request(client, "GET", running.discovery_url)
            assert answer.status == 200
        async with make_client(5.0, allow_loopback=False) as client:
            refused = await request(client, "GET", running.discovery_url)
            assert isinstance(refused, NotSent) and "loopback" in refused.detail
            with pytest.raises(httpx.ConnectError):
                await client.get(running.discovery_url)


async def test_the_mcp_client_is_guarded_the_same_way():
    import httpx2

    from poppy_tui.agent.netguard import request_guard

    with company() as running:
        guard = request_guard(httpx2.ConnectError, allow_loopback=False)
        async with httpx2.AsyncClient(event_hooks={"request": [guard]}) as client:
            with pytest.raises(httpx2.ConnectError, match="loopback"):
                await client.post(running.base_url + "/mcp", json={})
