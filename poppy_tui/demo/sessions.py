"""The Session header checks every API, MCP and conversation request goes through."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from poppy_tui.demo.agent_registry import AgentRegistry, AgentRejected
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.session_jwt import (
    InvalidSession,
    VerifiedSession,
    session_key_id,
    verify_session_jwt,
)


class Refusal(Exception):
    """A request refused before it reaches the shop: HTTP status plus a JSON error body."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(body.get("error_description") or body.get("error"))
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class _Binding:
    key_id: str
    client_id: str
    user_id: str


class SessionVerifier:
    """Verifies `Poppy-Version` and `Poppy-Session` (the signature with the agent's published key,
    found through its CIMD by the AgentRegistry), rejects replayed JWTs, and binds each Session
    id to the first key (and agent and User) that used it."""

    def __init__(self, audience: str, registry: AgentRegistry | None = None) -> None:
        self.audience = audience
        self.registry = registry or AgentRegistry()
        self._lock = threading.Lock()
        self._seen_jti: dict[str, float] = {}
        self._bindings: dict[str, _Binding] = {}
        self._checks = 0

    async def check(self, headers: Mapping[str, str]) -> VerifiedSession:
        """`headers` must look names up case-insensitively (starlette Headers do)."""
        version = headers.get(c.HEADER_VERSION)
        if version is None or version.strip() != c.POPPY_VERSION:
            shown = "missing" if version is None else f"{version.strip()[:40]!r}"
            raise Refusal(
                400,
                {
                    "error": "unsupported_version",
                    "error_description": f"{c.HEADER_VERSION} is {shown}; this Company speaks {c.POPPY_VERSION}.",
                    "supported_versions": [c.POPPY_VERSION],
                },
            )
        token = headers.get(c.HEADER_SESSION)
        try:
            client_id, kid = session_key_id(token)
            key = await self.registry.key_for(client_id, kid)
            session = verify_session_jwt(token, self.audience, key)
        except AgentRejected as exc:
            raise Refusal(
                401,
                {
                    "error": exc.error,
                    "error_description": exc.description,
                    "client_id": exc.client_id,
                },
                {"WWW-Authenticate": f'Bearer error="{exc.error}"'},
            ) from None
        except InvalidSession as exc:
            raise _invalid(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - an unreadable JWT is an invalid Session, never a 500
            raise _invalid(f"the Session JWT could not be read ({type(exc).__name__})") from None
        with self._lock:
            self._forget_expired()
            if session.jti in self._seen_jti:
                raise _invalid(
                    "the Session JWT was already used (jti replay); sign a new one for each request"
                )
            binding = self._bindings.get(session.session_id)
            expected = _Binding(session.key_id, session.client_id, session.user_id)
            if binding is None:
                self._bindings[session.session_id] = expected
            elif binding != expected:
                raise _invalid("this Session belongs to another key, agent or User")
            self._seen_jti[session.jti] = session.expires_at + c.SESSION_JWT_MAX_CLOCK_SKEW_SECONDS
        return session

    def _forget_expired(self) -> None:
        # A jti only needs remembering while its JWT could still be accepted.
        self._checks += 1
        if self._checks % 256:
            return
        now = time.time()
        for jti in [j for j, until in self._seen_jti.items() if until < now]:
            del self._seen_jti[jti]


def _invalid(description: str) -> Refusal:
    return Refusal(403, {"error": "invalid_session", "error_description": description})
