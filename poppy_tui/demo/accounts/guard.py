"""Token checks on every API, MCP and conversation request (spec 7 as read), run after
the Session header checks and before the operations extension's checks (Ops 6).

A request without `Authorization` is signed out. One with a Bearer token must carry a
live access token this Company issued to the same agent (`client_id`) the Session JWT
names, for the same User (the grant is bound to the agent's pairwise User ID on first
use). What a request needs is a set of scopes; a signed-out request that needs any gets
`sign_in_required`, a signed-in one lacking some gets `insufficient_scope`, both with
the scopes it needs (conventions.py holds the challenge's form).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from poppy_tui.demo.accounts.tokens import AccessToken, TokenStore
from poppy_tui.demo.sessions import Refusal
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.session_jwt import VerifiedSession

ORGANIZATION = "Manzanita Outfitters"


@dataclass(frozen=True)
class Caller:
    """Who is asking: a Session, signed out or signed in with an access token."""

    session: VerifiedSession
    token: AccessToken | None = None

    @property
    def signed_in(self) -> bool:
        return self.token is not None

    @property
    def owner(self) -> str:
        """Who an operation returned to this request belongs to (Ops 3): the Session when
        signed out; the account, for this agent and User, when signed in."""
        if self.token is None:
            return self.session.session_id
        return f"account:{self.token.account_id}:{self.session.client_id}:{self.session.user_id}"


class Challenge(Exception):
    """A sign-in challenge: sign_in_required, insufficient_scope or invalid_token."""

    def __init__(self, error: str, scopes: tuple[str, ...], description: str) -> None:
        super().__init__(description)
        self.error = error
        self.scopes = scopes
        self.description = description

    @property
    def status(self) -> int:
        return c.CHALLENGE_STATUS[self.error]

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)

    def www_authenticate(self) -> str:
        parts = [f'error="{self.error}"']
        if self.scopes:
            parts.append(f'scope="{self.scope}"')
        parts.append(f'error_description="{_quotable(self.description)}"')
        return f"{c.CHALLENGE_SCHEME} " + ", ".join(parts)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.error, "error_description": self.description}
        if self.scopes:
            body["scope"] = self.scope
        return body

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.www_authenticate()}

    def refusal(self) -> Refusal:
        return Refusal(self.status, self.body(), self.headers())

    def event_fields(self) -> dict[str, Any]:
        """The members of a conversation `authorization` event."""
        return {"error": self.error, "scope": self.scope}


def _quotable(text: str) -> str:
    # RFC 6750 3: error_description is %x20-21 / %x23-5B / %x5D-7E (no quote, no backslash).
    return "".join(ch for ch in text if 0x20 <= ord(ch) <= 0x7E and ch not in '"\\')


def authenticate(
    tokens: TokenStore, headers: Mapping[str, str], session: VerifiedSession
) -> Caller:
    raw = headers.get("authorization")
    if raw is None:
        return Caller(session)
    scheme, _, value = raw.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != c.CHALLENGE_SCHEME.lower() or not value:
        raise Challenge(c.INVALID_TOKEN, (), "Authorization must be 'Bearer <access token>'.")
    token = tokens.access_token(value)
    if token is None or not token.usable():
        raise Challenge(
            c.INVALID_TOKEN,
            (),
            f"The access token is unknown, expired or revoked. Refresh it, or carry on signed out of {ORGANIZATION}.",
        )
    if token.client_id != session.client_id:
        raise Challenge(
            c.INVALID_TOKEN, (), "The access token was issued to another agent than the Session's."
        )
    if not tokens.bind_user(token.grant, session.user_id):
        raise Challenge(
            c.INVALID_TOKEN, (), "The access token belongs to another User than the Session's."
        )
    return Caller(session, token)


def require(caller: Caller, needs: tuple[str, ...], what: str = "do this") -> None:
    """Raise the challenge for `needs` unless the caller holds every scope in it."""
    if not needs:
        return
    if caller.token is None:
        raise Challenge(c.SIGN_IN_REQUIRED, needs, f"Sign in to {ORGANIZATION} to {what}.")
    missing = [s for s in needs if s not in caller.token.scopes]
    if missing:
        raise Challenge(
            c.INSUFFICIENT_SCOPE,
            needs,
            f"To {what}, sign in to {ORGANIZATION} again and allow {' '.join(missing)}.",
        )
