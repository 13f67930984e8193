"""Grants, access tokens and refresh tokens of the demo authorization server (in memory).

One sign-in makes one grant (agent + account + scopes). Access tokens are opaque and
short-lived; refresh tokens rotate on every use, and presenting one that was already
rotated revokes the whole grant (RFC 9700 4.14.2: a reused refresh token means a leak),
unless it comes within `refresh_reuse_grace_seconds` of its rotation: then it is only
refused, because two processes of one agent sharing a keyring (the TUI and a CLI run) can
race to refresh, and the loser retries with the token the winner stored.
Revoking the refresh token (RFC 7009) ends the grant: its access tokens stop working
and the agent's Sessions carry on signed out. Tokens are kept by their SHA-256, so the
store never holds one in the clear.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field

from poppy_tui.protocol.ids import new_id

DEFAULT_ACCESS_TOKEN_SECONDS = 300
DEFAULT_REFRESH_REUSE_GRACE_SECONDS = 30.0
AUTHORIZATION_CODE_SECONDS = 120


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Grant:
    grant_id: str
    client_id: str
    account_id: str
    scopes: tuple[str, ...]
    sign_in: str  # "direct" | "device" | "mediated"
    user_id: str | None = None  # the agent's pairwise User ID, bound on first signed-in request
    revoked: bool = False


@dataclass
class AccessToken:
    grant: Grant
    scopes: tuple[str, ...]
    expires_at: float

    @property
    def client_id(self) -> str:
        return self.grant.client_id

    @property
    def account_id(self) -> str:
        return self.grant.account_id

    def usable(self, now: float | None = None) -> bool:
        return not self.grant.revoked and (time.time() if now is None else now) < self.expires_at


@dataclass
class RefreshToken:
    grant: Grant
    scopes: tuple[str, ...]
    rotated: bool = False
    rotated_at: float = 0.0

    # What authlib's grants and endpoints ask of a token object.
    def check_client(self, client) -> bool:
        return client.get_client_id() == self.grant.client_id

    def get_scope(self) -> str:
        return " ".join(self.scopes)

    def get_user(self):
        return self.grant.account_id

    def is_revoked(self) -> bool:
        return self.grant.revoked or self.rotated

    def is_expired(self) -> bool:
        return False


@dataclass
class AuthorizationCode:
    code: str
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    account_id: str
    code_challenge: str
    code_challenge_method: str
    expires_at: float
    used: bool = False

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return " ".join(self.scopes)

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at


@dataclass
class DeviceCredential:
    device_code: str
    user_code: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: float
    interval: int
    last_poll: float | None = None
    decision: tuple[str, bool] | None = None  # (account_id, approved) once the person answered
    used: bool = False

    # authlib's DeviceCredentialMixin
    def get_client_id(self) -> str:
        return self.client_id

    def get_scope(self) -> str:
        return " ".join(self.scopes)

    def get_user_code(self) -> str:
        return self.user_code

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at


@dataclass
class TokenStore:
    access_token_seconds: float = DEFAULT_ACCESS_TOKEN_SECONDS
    refresh_reuse_grace_seconds: float = DEFAULT_REFRESH_REUSE_GRACE_SECONDS
    lock: threading.RLock = field(default_factory=threading.RLock)
    _grants: dict[str, Grant] = field(default_factory=dict)
    _access: dict[str, AccessToken] = field(default_factory=dict)
    _refresh: dict[str, RefreshToken] = field(default_factory=dict)
    _codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    _devices: dict[str, DeviceCredential] = field(default_factory=dict)
    _user_codes: dict[str, str] = field(default_factory=dict)  # user_code -> device_code digest

    # ----- grants and tokens -------------------------------------------------

    def new_grant(
        self, client_id: str, account_id: str, scopes: tuple[str, ...], sign_in: str
    ) -> Grant:
        with self.lock:
            grant = Grant(new_id("grt_"), client_id, account_id, scopes, sign_in)
            self._grants[grant.grant_id] = grant
            return grant

    def issue(self, grant: Grant, scopes: tuple[str, ...]) -> dict[str, object]:
        """A token response for `grant`: a new access token and a new refresh token."""
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self.lock:
            self._access[_digest(access)] = AccessToken(
                grant, scopes, time.time() + self.access_token_seconds
            )
            self._refresh[_digest(refresh)] = RefreshToken(grant, scopes)
        return {
            "token_type": "Bearer",
            "access_token": access,
            "expires_in": int(self.access_token_seconds),
            "refresh_token": refresh,
            "scope": " ".join(scopes),
        }

    def access_token(self, token: str) -> AccessToken | None:
        with self.lock:
            return self._access.get(_digest(token))

    def refresh_token(self, token: str) -> RefreshToken | None:
        """A refresh token that may still be used. A rotated one presented again revokes its grant."""
        with self.lock:
            found = self._refresh.get(_digest(token))
            if found is None or found.grant.revoked:
                return None
            if found.rotated:
                if time.monotonic() - found.rotated_at >= self.refresh_reuse_grace_seconds:
                    found.grant.revoked = True
                return None
            return found

    def rotate(self, refresh: RefreshToken) -> None:
        with self.lock:
            refresh.rotated, refresh.rotated_at = True, time.monotonic()

    def revoke_grant(self, grant: Grant) -> None:
        with self.lock:
            grant.revoked = True

    def any_token(self, token: str) -> AccessToken | RefreshToken | None:
        with self.lock:
            digest = _digest(token)
            return self._refresh.get(digest) or self._access.get(digest)

    def bind_user(self, grant: Grant, user_id: str) -> bool:
        """Bind the grant to the agent's pairwise User ID on first use; False for another User."""
        with self.lock:
            if grant.user_id is None:
                grant.user_id = user_id
            return grant.user_id == user_id

    def devices(self) -> list[DeviceCredential]:
        """Device sign-ins still waiting for the person (to inspect)."""
        with self.lock:
            return [
                d
                for d in self._devices.values()
                if not d.used and d.decision is None and not d.is_expired()
            ]

    def grants(self) -> list[Grant]:
        with self.lock:
            return list(self._grants.values())

    # ----- authorization codes -----------------------------------------------

    def save_code(self, code: AuthorizationCode) -> None:
        with self.lock:
            self._codes[_digest(code.code)] = code

    def take_code(self, code: str, client_id: str) -> AuthorizationCode | None:
        with self.lock:
            found = self._codes.get(_digest(code))
            if found is None or found.client_id != client_id or found.used or found.is_expired():
                return None
            return found

    def use_code(self, code: AuthorizationCode) -> None:
        with self.lock:
            code.used = True

    # ----- device codes --------------------------------------------------------

    def save_device(self, credential: DeviceCredential) -> None:
        with self.lock:
            digest = _digest(credential.device_code)
            self._devices[digest] = credential
            self._user_codes[normalise_user_code(credential.user_code)] = digest

    def device(self, device_code: str) -> DeviceCredential | None:
        with self.lock:
            found = self._devices.get(_digest(device_code))
            return None if found is None or found.used else found

    def device_by_user_code(self, user_code: str) -> DeviceCredential | None:
        with self.lock:
            digest = self._user_codes.get(normalise_user_code(user_code))
            found = self._devices.get(digest) if digest else None
            return None if found is None or found.used or found.is_expired() else found

    def decide_device(self, credential: DeviceCredential, account_id: str, approved: bool) -> None:
        with self.lock:
            credential.decision = (account_id, approved)


def normalise_user_code(code: str) -> str:
    """RFC 8628 6.1: compare user codes without case, dashes or spaces."""
    return "".join(ch for ch in code.upper() if ch.isalnum())
