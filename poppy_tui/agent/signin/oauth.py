"""The OAuth client (authlib) the sign-in flows share, and what its failures mean to a person.

authlib does the OAuth: PKCE S256, the code, device-code and refresh grants, RFC 7009
revocation. We add the parts Poppy decides: the client authenticates with a private_key_jwt
assertion whose `aud` is the issuer (not the token endpoint, authlib's default), and every
connection passes the same destination guard as the rest of the agent (no private addresses,
loopback only for loopback Companies), with redirects never followed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, TypeVar

import httpx2
from authlib.common.urls import add_params_to_qs
from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

from poppy_tui.agent.http import USER_AGENT, overall_deadline
from poppy_tui.agent.netguard import guarded_client_options
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.identity import ClientIdentity
from poppy_tui.protocol.conventions import CLIENT_ASSERTION_TYPE

AUTH_METHOD = "private_key_jwt"
_LOOPBACK_PATTERNS = ("all://127.0.0.1", "all://localhost", "all://[::1]")

__all__ = ["AUTH_METHOD", "OAuthError", "oauth_client", "describe_failure", "within"]

T = TypeVar("T")


class NoCompleteAnswer(TimeoutError):
    pass


async def within(call: Awaitable[T], timeout_seconds: float) -> T:
    """One call to an authorization server, bounded as a whole like every other fetch from a
    Company (agent/http.py): per-read timeouts alone let a server trickle a byte at a time."""
    limit = overall_deadline(timeout_seconds)
    try:
        return await asyncio.wait_for(call, limit)
    except asyncio.TimeoutError:
        raise NoCompleteAnswer(f"no complete answer within {limit:g} s") from None


def oauth_client(
    identity: ClientIdentity,
    issuer: str,
    timeout_seconds: float,
    allow_loopback: bool,
    *,
    redirect_uri: str | None = None,
    scope: str | None = None,
) -> AsyncOAuth2Client:
    client = AsyncOAuth2Client(
        client_id=identity.client_id,
        token_endpoint_auth_method=AUTH_METHOD,
        revocation_endpoint_auth_method=AUTH_METHOD,
        code_challenge_method="S256",
        redirect_uri=redirect_uri,
        scope=scope,
        timeout=httpx2.Timeout(timeout_seconds),
        follow_redirects=False,
        **guarded_client_options(httpx2, allow_loopback),
        headers={"User-Agent": USER_AGENT},
        trust_env=True,
        mounts={pattern: None for pattern in _LOOPBACK_PATTERNS},
    )

    def private_key_jwt(auth: Any, method: str, uri: str, headers: dict, body: str) -> tuple[str, dict, str]:
        body = add_params_to_qs(
            body or "",
            [
                ("client_id", identity.client_id),
                ("client_assertion_type", CLIENT_ASSERTION_TYPE),
                ("client_assertion", identity.client_assertion(issuer)),
            ],
        )
        if "Content-Length" in headers:
            headers["Content-Length"] = str(len(body))
        return uri, headers, body

    client.register_client_auth_method((AUTH_METHOD, private_key_jwt))
    return client


def describe_failure(exc: BaseException, where: str) -> SignInError:
    """A failure at an authorization server endpoint as one line (the text may quote the Company)."""
    if isinstance(exc, OAuthError):
        description = f": {exc.description}" if exc.description else ""
        return SignInError(f"{where} answered {exc.error}{description}")
    if isinstance(exc, httpx2.HTTPStatusError):
        return SignInError(f"{where} answered HTTP {exc.response.status_code}")
    if isinstance(exc, httpx2.TransportError):
        return SignInError(f"could not reach {where}: {exc or type(exc).__name__}")
    if isinstance(exc, NoCompleteAnswer):
        return SignInError(f"{where} gave {exc}")
    if isinstance(exc, ValueError):
        return SignInError(f"{where} gave an answer that can't be used ({exc})")
    return SignInError(f"{where} failed: {type(exc).__name__}: {exc}")
