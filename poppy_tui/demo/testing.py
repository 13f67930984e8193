"""Test helpers any test folder can import: a demo Company, and a test Personal
Agent's Session that signs a fresh Session JWT for every request.

A test agent is a real one to the Company: its Client ID Metadata Document and JWKS are served
on 127.0.0.1 (one small server per test process, agent/identity/publisher.py), and the Company
fetches and checks them like any other agent's."""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Iterator

import httpx
import httpx2
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import RunningCompany, start_company
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, encode_approval_header
from poppy_tui.protocol.extensions import OPERATIONS_HEADER_VALUE
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.client_metadata import jwks_document, key_id
from poppy_tui.protocol.session_jwt import SessionIdentity, sign_session_jwt

_test_agents_port: int | None = None


def publish_test_agent(key: ec.EllipticCurvePrivateKey, name: str | None = None) -> str:
    """Serve a CIMD and JWKS for `key` on loopback; returns the client_id. One per key (or name)."""
    global _test_agents_port
    from poppy_tui.agent.identity.publisher import serve
    from poppy_tui.agent.identity.settings import free_loopback_port

    if _test_agents_port is None:
        _test_agents_port = free_loopback_port()
    origin = f"http://127.0.0.1:{_test_agents_port}"
    folder = f"/agents/{name or key_id(key.public_key())}"
    client_id = f"{origin}{folder}/agent.json"
    metadata = {
        "client_id": client_id,
        "client_name": "poppy-tui test agent",
        "jwks_uri": f"{origin}{folder}/jwks.json",
        "redirect_uris": [f"{origin}{folder}/signed-in"],
        "token_endpoint_auth_method": c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD,
    }
    serve(_test_agents_port, {f"{folder}/agent.json": metadata, f"{folder}/jwks.json": jwks_document([key.public_key()])})
    return client_id


@contextlib.contextmanager
def company(faults: Faults | str | None = None, **kwargs: Any) -> Iterator[RunningCompany]:
    """`with company("busy=2") as shop: ...`; kwargs go to start_company."""
    if isinstance(faults, str):
        faults = Faults.parse(faults)
    running = start_company(faults, **kwargs)
    try:
        yield running
    finally:
        running.stop()


class AgentSession:
    """One Session of a test Personal Agent with one Company (signed out)."""

    def __init__(
        self,
        audience: str,
        *,
        key: ec.EllipticCurvePrivateKey | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        client_id: str | None = None,
    ) -> None:
        """Without `client_id`, the key's own CIMD is published on loopback and named."""
        self.audience = audience
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        client_id = client_id or publish_test_agent(self.key)
        self.identity = SessionIdentity(client_id, user_id or new_id("usr_"), session_id or new_id("ses_"))

    @classmethod
    def at(cls, company: RunningCompany, **kwargs: Any) -> "AgentSession":
        return cls(company.issuer, **kwargs)

    @property
    def session_id(self) -> str:
        return self.identity.session_id

    def token(self) -> str:
        return sign_session_jwt(self.key, self.identity, self.audience)

    def headers(
        self, *, extensions: bool | str = True, approval: Approval | None = None, version: str | None = c.POPPY_VERSION
    ) -> dict[str, str]:
        """Poppy headers for one request (a new JWT each call)."""
        headers = {c.HEADER_SESSION: self.token()}
        if version is not None:
            headers[c.HEADER_VERSION] = version
        if extensions is True:
            headers[c.HEADER_EXTENSIONS] = OPERATIONS_HEADER_VALUE
        elif isinstance(extensions, str):
            headers[c.HEADER_EXTENSIONS] = extensions
        if approval is not None:
            headers[c.HEADER_APPROVAL] = encode_approval_header(approval)
        return headers

    def httpx_auth(self, extensions: bool | str = True) -> httpx.Auth:
        return _SigningAuth(self, extensions)

    def httpx2_auth(self, extensions: bool | str = True) -> httpx2.Auth:
        return _SigningAuth2(self, extensions)


class _SigningAuth(httpx.Auth):
    def __init__(self, session: AgentSession, extensions: bool | str) -> None:
        self.session = session
        self.extensions = extensions

    def auth_flow(self, request):  # type: ignore[override]
        for name, value in self.session.headers(extensions=self.extensions).items():
            request.headers[name] = value
        yield request


class _SigningAuth2(httpx2.Auth):
    """For the MCP SDK's httpx2 client: every POST, GET and DELETE gets a fresh JWT."""

    def __init__(self, session: AgentSession, extensions: bool | str) -> None:
        self.session = session
        self.extensions = extensions
        self.last_status: int | None = None
        self.last_retry_after: str | None = None

    def auth_flow(self, request):  # type: ignore[override]
        for name, value in self.session.headers(extensions=self.extensions).items():
            request.headers[name] = value
        response = yield request
        self.last_status = response.status_code
        self.last_retry_after = response.headers.get("retry-after")


@contextlib.asynccontextmanager
async def mcp_session(company: RunningCompany, agent: AgentSession, extensions: bool | str = True) -> AsyncIterator[Any]:
    """An initialized MCP ClientSession to the Company's /mcp, signing each HTTP request."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.streamable_http import create_mcp_http_client

    auth = agent.httpx2_auth(extensions)
    async with create_mcp_http_client(auth=auth) as http_client:
        async with streamable_http_client(company.base_url + "/mcp", http_client=http_client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                session.poppy_auth = auth  # type: ignore[attr-defined]
                yield session


__all__ = ["AgentSession", "company", "mcp_session", "publish_test_agent"]
