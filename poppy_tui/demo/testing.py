"""Test helpers any test folder can import: a demo Company, and a test Personal
Agent's Session that signs a fresh Session JWT for every request."""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Iterator

import httpx
import httpx2
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.demo.accounts.clients import KnownAgents
from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import RunningCompany, start_company
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, encode_approval_header
from poppy_tui.protocol.extensions import OPERATIONS_HEADER_VALUE
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.session_jwt import SessionIdentity, sign_session_jwt


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
        client_id: str = c.AGENT_CLIENT_ID,
    ) -> None:
        self.audience = audience
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.identity = SessionIdentity(client_id, user_id or new_id("usr_"), session_id or new_id("ses_"))
        self.access_token: str | None = None  # set to send Authorization: Bearer (signed in)

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


class TestAgentIdentity:
    """A Personal Agent's long-term identity as a Company sees it: an ES256 key named by
    `kid`, its Client ID Metadata Document and its JWKS."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        client_id: str = c.AGENT_CLIENT_ID,
        *,
        client_name: str = "poppy-tui test agent",
        redirect_uris: tuple[str, ...] = ("http://127.0.0.1:8765/callback",),
        key: ec.EllipticCurvePrivateKey | None = None,
        kid: str | None = None,
    ) -> None:
        self.client_id = client_id
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.kid = kid or new_id("key_", 8)
        self.client_name = client_name
        self.redirect_uris = list(redirect_uris)

    def public_jwk(self) -> dict[str, Any]:
        from poppy_tui.protocol.session_jwt import public_jwk

        return {**public_jwk(self.key.public_key()), "kid": self.kid, "alg": "ES256", "use": "sig"}

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.public_jwk()]}

    def metadata(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_name": self.client_name,
            "jwks_uri": self.client_id.rsplit("/", 1)[0] + "/jwks.json",
            "redirect_uris": list(self.redirect_uris),
            "token_endpoint_auth_method": "private_key_jwt",
        }

    def client_assertion(self, audience: str, *, jti: str | None = None, lifetime: int = 60, kid: str | None = None,
                         key: ec.EllipticCurvePrivateKey | None = None, **claims: Any) -> str:
        """A private_key_jwt client assertion (RFC 7523): iss = sub = client_id."""
        import time

        import jwt

        now = int(time.time())
        body = {"iss": self.client_id, "sub": self.client_id, "aud": audience, "iat": now, "exp": now + lifetime,
                "jti": jti or new_id("jti_"), **claims}
        return jwt.encode(body, key or self.key, algorithm="ES256", headers={"kid": kid or self.kid})

    def assertion_fields(self, audience: str, **kwargs: Any) -> dict[str, str]:
        return {"client_assertion_type": c.CLIENT_ASSERTION_TYPE, "client_assertion": self.client_assertion(audience, **kwargs)}

    def session(self, company: RunningCompany, **kwargs: Any) -> AgentSession:
        """A Session of this agent at `company` (signed out until its access_token is set)."""
        return AgentSession(company.issuer, client_id=self.client_id, **kwargs)


class LocalAgentKeys(KnownAgents):
    """The demo's `AgentKeys` over test agents registered up front: what h/identity's
    AgentRegistry answers after fetching an agent's CIMD and JWKS, without the fetch."""

    def __init__(self, *agents: TestAgentIdentity) -> None:
        super().__init__()
        for agent in agents:
            self.add(agent)

    def add(self, agent: TestAgentIdentity) -> None:
        self.register(agent.metadata(), agent.jwks())


__all__ = ["AgentSession", "LocalAgentKeys", "TestAgentIdentity", "company", "mcp_session"]
