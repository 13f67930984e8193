"""TLS on the agent's one HTTP path (httpx2 over netguard's transport), against real TLS servers on
127.0.0.1 with throwaway certificate authorities (tests/netguard/tls.py) trusted through
SSL_CERT_FILE. A certificate the agent must not trust ends the exchange in the handshake, before
a byte of the request leaves: "not sent", and the server never sees a request.

Names are resolved by a stand-in resolver (the only thing not real here: a test can't run the
system's DNS) that answers 127.0.0.1 for names under TEST_DOMAIN and records what it was asked;
netguard's rule that a public name must not resolve to loopback is lifted for those names only.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx2
import pytest

from poppy_tui.agent.net import netguard
from poppy_tui.agent.net.http import HttpAnswer, make_client, request
from poppy_tui.protocol.outcomes import NotSent

from tests.netguard.test_guarded_stream import RawHttpServer
from tests.netguard import tls
from tests.netguard.tls import issue, make_ca

TEST_DOMAIN = "poppy.test"
# "faß" has a deviation character: IDNA 2008 keeps ß (xn--fa-hia), IDNA 2003 maps it to "ss".
IDN_HOST = f"faß.{TEST_DOMAIN}"
A_LABEL = f"xn--fa-hia.{TEST_DOMAIN}"
IDNA_2003_SPELLING = f"fass.{TEST_DOMAIN}"


class TlsServer(RawHttpServer):
    """RawHttpServer over TLS: records the server names clients asked for (SNI), the ALPN
    protocol agreed, and every request that arrived."""

    def __init__(self, certificates: tls.TestCertificates, host: str = "localhost") -> None:
        super().__init__()
        self.host = host
        self.server_names: list[str | None] = []
        self.alpn: list[str | None] = []
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificates.cert_file, certificates.key_file)
        context.set_alpn_protocols(["http/1.1"])
        context.sni_callback = lambda sock, name, ctx: self.server_names.append(name)  # type: ignore[assignment,misc]
        self.context = context

    async def __aenter__(self) -> TlsServer:
        self._server = await asyncio.start_server(self._serve_tls, "127.0.0.1", 0, ssl=self.context)
        self.port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"https://{self.host}:{self.port}"
        return self

    async def _serve_tls(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.alpn.append(writer.get_extra_info("ssl_object").selected_alpn_protocol())
        await self._serve(reader, writer)


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ca = make_ca(tmp_path / "trusted")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_file))
    return ca


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names under TEST_DOMAIN resolve to 127.0.0.1 (netguard's loopback rule lifted for them
    alone); `localhost` and literals as usual. The names looked up, in order."""
    import anyio

    asked: list[str] = []
    real_getaddrinfo = anyio.getaddrinfo
    real_problem = netguard.address_problem

    async def resolver(host, port, **kwargs):
        asked.append(host)
        if host.endswith("." + TEST_DOMAIN):
            return [(2, 1, 6, "", ("127.0.0.1", port))]
        return await real_getaddrinfo(host, port, **kwargs)

    def problem(host, addresses, allow_loopback):
        if host.endswith("." + TEST_DOMAIN):
            return None
        return real_problem(host, addresses, allow_loopback)

    monkeypatch.setattr(netguard.anyio, "getaddrinfo", resolver)
    monkeypatch.setattr(netguard, "address_problem", problem)
    return asked


async def _get(url: str) -> object:
    async with make_client(5.0) as client:
        return await request(client, "POST", url, content=b"{}")


async def test_a_certificate_from_a_trusted_ca_for_the_name_is_accepted_with_sni_and_alpn(
    tmp_path, trusted_ca
):
    async with TlsServer(issue(trusted_ca, tmp_path / "good", ["localhost"])) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, HttpAnswer) and answer.status == 200, answer
    assert server.server_names == ["localhost"] and server.alpn == ["http/1.1"]


async def test_a_certificate_from_an_untrusted_ca_is_refused_and_nothing_is_sent(
    tmp_path, trusted_ca
):
    stranger = make_ca(tmp_path / "stranger", "someone else's CA")
    async with TlsServer(issue(stranger, tmp_path / "bad", ["localhost"])) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, NotSent) and "CERTIFICATE_VERIFY_FAILED" in answer.detail, answer
    assert server.requests == []


async def test_a_certificate_for_another_name_is_refused_and_nothing_is_sent(tmp_path, trusted_ca):
    async with TlsServer(
        issue(trusted_ca, tmp_path / "other", ["shop.example"], ip=None)
    ) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, NotSent) and "localhost" in answer.detail, answer
    assert server.requests == []


async def test_an_expired_certificate_is_refused_and_nothing_is_sent(tmp_path, trusted_ca):
    async with TlsServer(
        issue(trusted_ca, tmp_path / "old", ["localhost"], expired=True)
    ) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, NotSent) and "expired" in answer.detail, answer
    assert server.requests == []


async def test_an_idn_host_is_resolved_named_and_checked_as_its_idna_2008_a_label(
    tmp_path, trusted_ca, resolved
):
    async with TlsServer(
        issue(trusted_ca, tmp_path / "idn", [A_LABEL], ip=None), host=IDN_HOST
    ) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, HttpAnswer) and answer.status == 200, answer
    assert resolved == [A_LABEL]  # not "fass." (IDNA 2003), not the Unicode name
    assert server.server_names == [A_LABEL]  # SNI
    assert f"\r\nHost: {A_LABEL}:{server.port}\r\n".encode() in server.requests[0]


async def test_a_certificate_for_the_idna_2003_spelling_of_an_idn_host_is_refused(
    tmp_path, trusted_ca, resolved
):
    # fass.<domain> may be another registrant's: its certificate says nothing about faß.<domain>.
    certificates = issue(trusted_ca, tmp_path / "idna2003", [IDNA_2003_SPELLING], ip=None)
    async with TlsServer(certificates, host=IDN_HOST) as server:
        answer = await _get(f"{server.base_url}/x")
    assert isinstance(answer, NotSent) and A_LABEL in answer.detail, answer
    assert server.requests == [] and resolved == [A_LABEL]


async def test_the_mcp_and_sign_in_client_checks_certificates_the_same_way(tmp_path, trusted_ca):
    async with TlsServer(
        issue(trusted_ca, tmp_path / "other", ["shop.example"], ip=None)
    ) as server:
        async with httpx2.AsyncClient(
            **netguard.guarded_client_options(allow_loopback=True)
        ) as client:
            with pytest.raises(httpx2.ConnectError, match="localhost"):
                await client.get(f"{server.base_url}/x")
    assert server.requests == []
