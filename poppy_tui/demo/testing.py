"""Test helpers any test folder can import: a demo Company, and a test Personal
Agent's Session that signs a fresh Session JWT for every request.

A test agent is a real one to the Company: its Client ID Metadata Document and JWKS are served
on 127.0.0.1 (one small server per test process, agent/identity/publisher.py), and the Company
fetches and checks them like any other agent's."""

from __future__ import annotations

import contextlib
from typing import Any
from collections.abc import AsyncIterator, Iterator

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


def publish_test_agent(
    key: ec.EllipticCurvePrivateKey,
    name: str | None = None,
    *,
    client_name: str = "poppy-tui test agent",
    redirect_paths: tuple[str, ...] = ("/signed-in",),
) -> str:
    """Serve a CIMD and JWKS for `key` on loopback; returns the client_id. One per key (or name).
    `redirect_paths` become redirect_uris under the agent's folder."""
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
        "client_name": client_name,
        "jwks_uri": f"{origin}{folder}/jwks.json",
        "redirect_uris": [f"{origin}{folder}{path}" for path in redirect_paths],
        "token_endpoint_auth_method": c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD,
    }
    serve(
        _test_agents_port,
        {
            f"{folder}/agent.json": metadata,
            f"{folder}/jwks.json": jwks_document([key.public_key()]),
        },
    )
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
        self.identity = SessionIdentity(
            client_id, user_id or new_id("usr_"), session_id or new_id("ses_")
        )
        self.access_token: str | None = None  # set to send Authorization: Bearer (signed in)

    @classmethod
    def at(cls, company: RunningCompany, **kwargs: Any) -> AgentSession:
        return cls(company.issuer, **kwargs)

    @property
    def session_id(self) -> str:
        return self.identity.session_id

    def token(self) -> str:
        return sign_session_jwt(self.key, self.identity, self.audience)

    def headers(
        self,
        *,
        extensions: bool | str = True,
        approval: Approval | None = None,
        version: str | None = c.POPPY_VERSION,
    ) -> dict[str, str]:
        """Poppy headers for one request (a new JWT each call)."""
        headers = {c.HEADER_SESSION: self.token()}
        if self.access_token is not None:
            headers["Authorization"] = f"Bearer {self.access_token}"
        if version is not None:
            headers[c.HEADER_VERSION] = version
        if extensions is True:
            headers[c.HEADER_EXTENSIONS] = OPERATIONS_HEADER_VALUE
        elif isinstance(extensions, str):
            headers[c.HEADER_EXTENSIONS] = extensions
        if approval is not None:
            headers[c.HEADER_APPROVAL] = encode_approval_header(approval)
        return headers

    def httpx2_auth(self, extensions: bool | str = True) -> httpx2.Auth:
        return _SigningAuth2(self, extensions)


class _SigningAuth2(httpx2.Auth):
    """For the MCP SDK's httpx2 client: every POST, GET and DELETE gets a fresh JWT."""

    def __init__(self, session: AgentSession, extensions: bool | str) -> None:
        self.session = session
        self.extensions = extensions
        self.last_status: int | None = None
        self.last_retry_after: str | None = None

    def auth_flow(self, request):
        for name, value in self.session.headers(extensions=self.extensions).items():
            request.headers[name] = value
        response = yield request
        self.last_status = response.status_code
        self.last_retry_after = response.headers.get("retry-after")


@contextlib.asynccontextmanager
async def mcp_session(
    company: RunningCompany, agent: AgentSession, extensions: bool | str = True
) -> AsyncIterator[Any]:
    """An initialized MCP ClientSession to the Company's /mcp, signing each HTTP request."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.streamable_http import create_mcp_http_client

    auth = agent.httpx2_auth(extensions)
    async with create_mcp_http_client(auth=auth) as http_client:
        async with streamable_http_client(company.base_url + "/mcp", http_client=http_client) as (
            read,
            write,
        ):
            async with ClientSession(read, write) as session:
                await session.initialize()
                session.poppy_auth = auth  # type: ignore[attr-defined]
                yield session


class TestAgentIdentity:
    """A Personal Agent's long-term identity as a Company sees it: an ES256 key named by
    `kid`, its Client ID Metadata Document and its JWKS, served on loopback (the Company
    fetches and checks them with its AgentRegistry, as for any agent)."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        name: str | None = None,
        *,
        client_name: str = "poppy-tui test agent",
        key: ec.EllipticCurvePrivateKey | None = None,
    ) -> None:
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.kid = key_id(self.key.public_key())
        self.client_name = client_name
        self.client_id = publish_test_agent(
            self.key,
            name or new_id("agent_", 8),
            client_name=client_name,
            redirect_paths=("/callback", "/signed-in"),
        )
        folder = self.client_id.rsplit("/", 1)[0]
        self.redirect_uris = [f"{folder}/callback", f"{folder}/signed-in"]

    def client_assertion(
        self,
        audience: str | list[str],
        *,
        jti: str | None = None,
        lifetime: int = 60,
        kid: str | None = None,
        key: ec.EllipticCurvePrivateKey | None = None,
        **claims: Any,
    ) -> str:
        """A private_key_jwt client assertion (RFC 7523): iss = sub = client_id."""
        import time

        import jwt

        now = int(time.time())
        body = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + lifetime,
            "jti": jti or new_id("jti_"),
            **claims,
        }
        return jwt.encode(
            body, key or self.key, algorithm="ES256", headers={"kid": kid or self.kid}
        )

    def assertion_fields(self, audience: str, **kwargs: Any) -> dict[str, str]:
        return {
            "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
            "client_assertion": self.client_assertion(audience, **kwargs),
        }

    def session(self, company: RunningCompany, **kwargs: Any) -> AgentSession:
        """A Session of this agent at `company` (signed out until its access_token is set)."""
        return AgentSession(company.issuer, key=self.key, client_id=self.client_id, **kwargs)


__all__ = ["AgentSession", "TestAgentIdentity", "company", "mcp_session", "publish_test_agent"]
