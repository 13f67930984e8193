"""Connections to private or loopback addresses are refused before any byte is sent."""

import httpx2
import pytest

from poppy_tui.agent.net.http import make_client, request
from poppy_tui.agent.net.netguard import DestinationRefused, address_problem, check_destination
from poppy_tui.protocol.outcomes import NotSent


@pytest.mark.parametrize(
    ("host", "addresses", "allow", "refused"),
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
        # IPv6 forms that carry a private, loopback or link-local IPv4 address (docs/safety.md,
        # "Where the agent connects"; conformance row X10).
        ("nat64", ["64:ff9b::a00:1"], True, True),  # 10.0.0.1 through the well-known NAT64 prefix
        ("nat64", ["64:ff9b::7f00:1"], True, True),  # 127.0.0.1
        ("nat64", ["64:ff9b::a9fe:a9fe"], True, True),  # 169.254.169.254
        ("nat64", ["64:ff9b::808:808"], False, False),  # 8.8.8.8: a public IPv4 address, allowed
        ("nat64-local", ["64:ff9b:1::808:808"], False, True),  # local-use prefix: refused whole
        ("6to4", ["2002:c0a8:1::1"], True, True),  # 192.168.0.1
        ("6to4", ["2002:7f00:1::1"], True, True),  # 127.0.0.1
        ("6to4", ["2002:808:808::1"], False, False),  # 8.8.8.8
        ("mapped", ["::ffff:10.0.0.1"], True, True),
        ("mapped", ["::ffff:127.0.0.1"], True, True),  # loopback by a non-loopback name
        ("compatible", ["::10.0.0.1"], True, True),
        ("compatible", ["::a9fe:a9fe"], True, True),
        ("teredo", ["2001:0:4136:e378:8000:63bf:3fff:fdd2"], True, True),
        ("v6", ["2606:4700::1111"], False, False),
        # Deprecated site-local (RFC 3879), which Python's ipaddress counts as global.
        ("site-local", ["fec0::1"], True, True),
        ("site-local", ["feff:ffff::1"], True, True),  # the range's top end (fec0::/10)
        ("site-local", ["fec0::1"], False, True),
        ("not-site-local", ["ff00::1"], True, True),  # multicast, refused for its own reason
        # RFC 2765 IPv4-translated form (::ffff:0:0:0/96) of private IPv4 addresses.
        ("translated", ["::ffff:0:a00:1"], True, True),  # 10.0.0.1
        ("translated", ["::ffff:0:7f00:1"], True, True),  # 127.0.0.1
        ("translated", ["::ffff:0:a9fe:a9fe"], True, True),  # 169.254.169.254
        ("translated", ["::ffff:0:808:808"], False, False),  # 8.8.8.8: public, as for NAT64
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


async def test_loopback_is_reachable_only_when_allowed(company):
    async with make_client(5.0, allow_loopback=True) as client:
        answer = await request(client, "GET", company.discovery_url)
        assert answer.status == 200
    async with make_client(5.0, allow_loopback=False) as client:
        refused = await request(client, "GET", company.discovery_url)
        assert isinstance(refused, NotSent) and "loopback" in refused.detail
        with pytest.raises(httpx2.ConnectError):
            await client.get(company.discovery_url)


async def test_the_mcp_client_is_guarded_the_same_way(company):
    import httpx2

    from poppy_tui.agent.net.netguard import guarded_client_options

    async with httpx2.AsyncClient(**guarded_client_options(allow_loopback=False)) as client:
        with pytest.raises(httpx2.ConnectError, match="loopback"):
            await client.post(company.base_url + "/mcp", json={})
    async with httpx2.AsyncClient(**guarded_client_options(allow_loopback=True)) as client:
        assert (await client.get(company.discovery_url)).status_code == 200


@pytest.mark.parametrize(
    "literal",
    [
        "[64:ff9b::a00:1]",
        "[2002:c0a8:1::1]",
        "[::ffff:10.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[::ffff:0:a00:1]",
    ],
)
async def test_ipv6_forms_of_private_ipv4_are_refused_before_any_packet(literal):
    async with make_client(5.0, allow_loopback=True) as client:
        answer = await request(client, "GET", f"https://{literal}/x")
    assert (
        isinstance(answer, NotSent)
        and "refused to connect" in answer.detail
        and "IPv4" in answer.detail
    )


@pytest.mark.parametrize("literal", ["[fec0::1]", "[fed0::2:1]", "[feff::1]"])
async def test_site_local_ipv6_is_refused_before_any_packet(literal):
    async with make_client(5.0, allow_loopback=True) as client:
        answer = await request(client, "GET", f"https://{literal}/x")
    assert (
        isinstance(answer, NotSent)
        and "refused to connect" in answer.detail
        and "site-local" in answer.detail
    )


def _host_echo_server(address: str):
    """A real HTTP server on `address` that answers with the Host header it received."""
    import socketserver
    import threading
    from http.server import BaseHTTPRequestHandler

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self):
            body = (self.headers.get("Host") or "").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = socketserver.ThreadingTCPServer((address, 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def test_the_connection_goes_to_the_checked_address_with_the_host_kept(monkeypatch):
    """One resolution, then a connect to exactly the address it gave. The stand-in resolver
    (the only thing not real here: a test can't run the system's DNS) says `localhost` is
    127.0.0.2 and then, on any later lookup, 10.0.0.1 (a rebinding attack). The server listens
    only on 127.0.0.2, which the system resolver would never give for localhost: the request
    gets through only by connecting to the checked address, and a second lookup would be refused."""
    import anyio

    from poppy_tui.agent.net import netguard

    lookups: list[str] = []

    async def rebinding_resolver(host, port, **kwargs):
        lookups.append(host)
        address = "127.0.0.2" if len(lookups) == 1 else "10.0.0.1"
        return [(2, 1, 6, "", (address, port))]

    server = _host_echo_server("127.0.0.2")
    port = server.server_address[1]
    monkeypatch.setattr(netguard.anyio, "getaddrinfo", rebinding_resolver)
    try:
        async with make_client(5.0, allow_loopback=True) as client:
            answer = await request(client, "GET", f"http://localhost:{port}/")
            assert answer.status == 200 and answer.raw == f"localhost:{port}".encode()
            assert lookups == ["localhost"]
            # A new connection resolves again, and the rebound answer is refused, not followed.
            await client.aclose()
        async with make_client(5.0, allow_loopback=True) as client:
            refused = await request(client, "GET", f"http://localhost:{port}/")
        assert isinstance(refused, NotSent) and "10.0.0.1" in refused.detail
    finally:
        monkeypatch.setattr(netguard.anyio, "getaddrinfo", anyio.getaddrinfo)
        server.shutdown()
        server.server_close()


async def test_tls_to_the_checked_address_keeps_sni_and_the_certificate_check(
    tmp_path, monkeypatch
):
    """The same stand-in resolver: `localhost` is 127.0.0.2, where alone the TLS server listens.
    The handshake names `localhost` (SNI) and the certificate is checked for `localhost`."""
    import anyio

    from poppy_tui.agent.net import netguard
    from tests.netguard.spec_company import SpecCompany
    from tests.netguard.tls import make_certificates

    async def resolver(host, port, **kwargs):
        return [(2, 1, 6, "", ("127.0.0.2", port))]

    certificates = make_certificates(tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca_file))
    server_names: list = []
    with SpecCompany(tls=certificates.server_context(server_names), host="127.0.0.2") as running:
        monkeypatch.setattr(netguard.anyio, "getaddrinfo", resolver)
        try:
            async with make_client(5.0, allow_loopback=True) as client:
                answer = await request(client, "GET", running.base_url + "/.well-known/poppy.json")
        finally:
            monkeypatch.setattr(netguard.anyio, "getaddrinfo", anyio.getaddrinfo)
    assert (
        answer.status == 200
        and answer.body["organization"]["domain"] == f"localhost:{running.port}"
    )
    assert server_names == ["localhost"]


@pytest.mark.parametrize(
    "url",
    [
        "https://[64:ff9b::a00:1]/mcp",
        "https://[2002:c0a8:1::1]/api",
        "https://[::ffff:169.254.169.254]/",
        "https://[::ffff:0:a00:1]/api",
    ],
)
def test_a_poppy_json_pointing_at_ipv6_forms_of_private_ipv4_is_refused(url):
    from poppy_tui.protocol.discovery import parse_poppy_json
    from poppy_tui.protocol.errors import InvalidDiscovery

    document = {
        "protocol_version": "0.4",
        "organization": {"name": "Example", "domain": "shop.example"},
        "apis": [{"type": "mcp", "url": url}],
    }
    with pytest.raises(InvalidDiscovery, match="IPv4 address"):
        parse_poppy_json(document, "shop.example")


def test_a_poppy_json_pointing_at_a_site_local_address_is_refused():
    from poppy_tui.protocol.discovery import parse_poppy_json
    from poppy_tui.protocol.errors import InvalidDiscovery

    document = {
        "protocol_version": "0.4",
        "organization": {"name": "Example", "domain": "shop.example"},
        "apis": [{"type": "mcp", "url": "https://[fec0::1]/mcp"}],
    }
    with pytest.raises(InvalidDiscovery, match="site-local"):
        parse_poppy_json(document, "shop.example")
