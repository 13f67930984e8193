"""Mediated Sign-In (0.2): the agent relays exactly the declared fields, once, to
auth.mediated.endpoint; the answer's `status` is complete | code_required | failed |
expired. After code_required the agent posts only the one-time code to
`{endpoint}/{sign_in_id}`. Attempts are rate-limited, and no answer ever carries a
credential back (not even the username).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from poppy_tui.demo.accounts.users import MEDIATED_SCOPES, Account, parse_scope

FIELDS = (
    {"name": "username", "label": "Email", "secret": False},
    {"name": "password", "label": "Password", "secret": True},
)
FIELD_NAMES = frozenset(str(f["name"]) for f in FIELDS)
MAX_FAILURES = 5  # per agent and username, and per agent, within the window
FAILURE_WINDOW_SECONDS = 300.0
MAX_CODE_ATTEMPTS = 3


@dataclass
class PendingSignIn:
    sign_in_id: str
    client_id: str
    account: Account
    scopes: tuple[str, ...]
    expires_at: float
    attempts: int = 0
    done: bool = False


class MediatedError(Exception):
    def __init__(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        super().__init__(body.get("error_description", ""))
        self.status = status
        self.body = body
        self.headers = headers or {}


@dataclass
class MediatedSignIns:
    expires_in: float = 300.0
    _pending: dict[str, PendingSignIn] = field(default_factory=dict)
    _failures: dict[tuple[str, ...], deque] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check_request(self, body: dict) -> tuple[dict[str, str], tuple[str, ...]]:
        """The declared fields, exactly, and the scopes asked for."""
        fields = body.get("fields")
        if (
            not isinstance(fields, dict)
            or set(fields) != FIELD_NAMES
            or not all(isinstance(v, str) for v in fields.values())
        ):
            raise MediatedError(
                400,
                {
                    "status": "failed",
                    "error": "invalid_request",
                    "error_description": "fields must hold exactly: "
                    + ", ".join(sorted(FIELD_NAMES))
                    + " (strings).",
                },
            )
        scopes = (
            parse_scope(body.get("scope") if isinstance(body.get("scope"), str) else None)
            or MEDIATED_SCOPES
        )
        unknown = [s for s in scopes if s not in MEDIATED_SCOPES]
        if unknown:
            raise MediatedError(
                400,
                {
                    "status": "failed",
                    "error": "invalid_scope",
                    "error_description": f"Mediated Sign-In can't grant {' '.join(unknown)}.",
                },
            )
        return fields, scopes

    # ----- rate limiting -----------------------------------------------------

    def _keys(self, client_id: str, username: str) -> list[tuple[str, ...]]:
        return [("user", client_id, username.strip().casefold()), ("agent", client_id)]

    def check_rate(self, client_id: str, username: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in self._keys(client_id, username):
                failures = self._failures.get(key)
                while failures and failures[0] < now - FAILURE_WINDOW_SECONDS:
                    failures.popleft()
                if failures and len(failures) >= MAX_FAILURES:
                    retry = max(1, int(failures[0] + FAILURE_WINDOW_SECONDS - now) + 1)
                    raise MediatedError(
                        429,
                        {
                            "status": "failed",
                            "error": "rate_limited",
                            "error_description": "Too many failed sign-ins; try again later.",
                        },
                        {"Retry-After": str(retry)},
                    )

    def failed(self, client_id: str, username: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in self._keys(client_id, username):
                self._failures.setdefault(key, deque()).append(now)

    # ----- the one-time code step ---------------------------------------------

    def start(self, client_id: str, account: Account, scopes: tuple[str, ...]) -> PendingSignIn:
        pending = PendingSignIn(
            "msi_" + secrets.token_urlsafe(16),
            client_id,
            account,
            scopes,
            time.time() + self.expires_in,
        )
        with self._lock:
            self._pending[pending.sign_in_id] = pending
        return pending

    def pending(self, sign_in_id: str, client_id: str) -> PendingSignIn | None:
        with self._lock:
            found = self._pending.get(sign_in_id)
            return found if found is not None and found.client_id == client_id else None

    def check_code(self, pending: PendingSignIn, code: str) -> str:
        """'complete', 'failed' or 'expired' for this code; the sign-in ends unless it failed with attempts left."""
        import hmac

        with self._lock:
            if pending.done:
                return "failed"
            if time.time() >= pending.expires_at:
                pending.done = True
                return "expired"
            expected = pending.account.one_time_code or ""
            if expected and hmac.compare_digest(expected.encode(), code.strip().encode()):
                pending.done = True
                return "complete"
            pending.attempts += 1
            if pending.attempts >= MAX_CODE_ATTEMPTS:
                pending.done = True
            return "failed"
