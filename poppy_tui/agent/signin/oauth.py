"""The OAuth client (authlib) the sign-in flows share, and what its failures mean to a person.

authlib does the OAuth: PKCE S256, the code, device-code and refresh grants, RFC 7009
revocation. We add the parts Poppy decides: the client authenticates with a private_key_jwt
assertion whose `aud` is the issuer (not the token endpoint, authlib's default), and every
connection passes the same destination guard as the rest of the agent (no private addresses,
loopback only for loopback Companies), with redirects never followed. Every answer authlib gets
is read as the agent reads a Company's (agent/net/http.py): at most MAX_SIGNIN_ANSWER_BYTES after
decompression and within the overall deadline, else one line naming the server.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar
from collections.abc import Awaitable

import httpx2
from authlib.common.urls import add_params_to_qs
from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

from poppy_tui.agent.net.http import USER_AGENT, ResponseTooLarge, overall_deadline, read_bounded
from poppy_tui.agent.net.netguard import guarded_client_options
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.identity import ClientIdentity
from poppy_tui.protocol.conventions import CLIENT_ASSERTION_TYPE, MAX_SIGNIN_ANSWER_BYTES

AUTH_METHOD = "private_key_jwt"
_LOOPBACK_PATTERNS = ("all://127.0.0.1", "all://localhost", "all://[::1]")

__all__ = ["AUTH_METHOD", "OAuthError", "oauth_client", "describe_failure", "within"]

T = TypeVar("T")


# `within` bounds a whole call (signing the assertion, every request it makes) a little later than
# each request's own deadline, so a slow server is named by the request that waited on it.
_WHOLE_CALL_MARGIN_SECONDS = 1.0


class NoCompleteAnswer(TimeoutError):
    pass


class AnswerTooLarge(ResponseTooLarge):
    pass


async def within(call: Awaitable[T], timeout_seconds: float) -> T:
    """One call to an authorization server, bounded as a whole like every other fetch from a
    Company (agent/net/http.py): per-read timeouts alone let a server trickle a byte at a time."""
    limit = overall_deadline(timeout_seconds) + _WHOLE_CALL_MARGIN_SECONDS
    try:
        return await asyncio.wait_for(call, limit)
    except NoCompleteAnswer:
        raise  # one request's own deadline, which names its server
    except TimeoutError:
        raise NoCompleteAnswer(f"no complete answer within {limit:g} s") from None


class _BoundedOAuth2Client(AsyncOAuth2Client):
    """authlib's client, whose answers are read bounded in size and time (httpx2 would read any
    length, and a trickled answer for as long as each byte comes inside the read timeout)."""

    async def send(
        self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any
    ) -> httpx2.Response:
        if stream:
            return await super().send(request, stream=True, **kwargs)
        server = request.url.netloc.decode("ascii", "replace")
        limit = overall_deadline(self.timeout.read or 30.0)
        try:
            async with asyncio.timeout(limit):
                response = await super().send(request, stream=True, **kwargs)
                try:
                    content = await read_bounded(response, MAX_SIGNIN_ANSWER_BYTES)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise NoCompleteAnswer(f"no complete answer within {limit:g} s from {server}") from None
        except ResponseTooLarge:
            raise AnswerTooLarge(
                f"{server} sent more than the {MAX_SIGNIN_ANSWER_BYTES:,} bytes allowed"
            ) from None
        # The body is decoded already: the rebuilt answer carries it without its transfer headers.
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            content=content,
            request=request,
            extensions=response.extensions,
        )


def oauth_client(
    identity: ClientIdentity,
    issuer: str,
    timeout_seconds: float,
    allow_loopback: bool,
    *,
    redirect_uri: str | None = None,
    scope: str | None = None,
) -> AsyncOAuth2Client:
    client = _BoundedOAuth2Client(
        client_id=identity.client_id,
        token_endpoint_auth_method=AUTH_METHOD,
        revocation_endpoint_auth_method=AUTH_METHOD,
        code_challenge_method="S256",
        redirect_uri=redirect_uri,
        scope=scope,
        timeout=httpx2.Timeout(timeout_seconds),
        follow_redirects=False,
        **guarded_client_options(allow_loopback),
        headers={"User-Agent": USER_AGENT},
        trust_env=True,
        mounts=dict.fromkeys(_LOOPBACK_PATTERNS),
    )

    def private_key_jwt(
        auth: Any, method: str, uri: str, headers: dict, body: str
    ) -> tuple[str, dict, str]:
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
    if isinstance(exc, AnswerTooLarge):
        return SignInError(f"{where} gave an answer too large to read: {exc}")
    if isinstance(exc, ValueError):
        return SignInError(f"{where} gave an answer that can't be used ({exc})")
    return SignInError(f"{where} failed: {type(exc).__name__}: {exc}")
