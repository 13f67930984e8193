"""Where tokens live. Refresh tokens: the system keyring, one per issuer (never SQLite, never
logs). Access tokens: this process's memory, with their expiry, refreshed before it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import keyring
import keyring.errors

from poppy_tui.agent.keys import KEYRING_SERVICE, keyring_problem
from poppy_tui.agent.signin.errors import SignInError

REFRESH_TOKEN_USERNAME = "refresh-token {issuer}"


@dataclass
class AccessToken:
    token: str
    expires_at: float | None  # time.time(); None when the Company gave no expiry

    def fresh(self, margin: float, now: float | None = None) -> bool:
        return self.expires_at is None or self.expires_at - (now or time.time()) > margin

    def usable(self, now: float | None = None) -> bool:
        return self.expires_at is None or self.expires_at > (now or time.time())


class TokenVault:
    def __init__(self) -> None:
        self._access: dict[str, AccessToken] = {}

    # ---- access tokens (memory) ---------------------------------------------------------------

    def access(self, issuer: str) -> AccessToken | None:
        return self._access.get(issuer)

    def keep_access(self, issuer: str, token: str, expires_in: int | None) -> AccessToken:
        kept = AccessToken(token, None if expires_in is None else time.time() + expires_in)
        self._access[issuer] = kept
        return kept

    def forget_access(self, issuer: str) -> None:
        self._access.pop(issuer, None)

    # ---- refresh tokens (keyring) -------------------------------------------------------------

    @staticmethod
    def _backend():
        backend = keyring.get_keyring()
        problem = keyring_problem(backend)
        if problem:
            raise SignInError(
                f"no usable keyring to keep the sign-in in ({problem}); install a keyring backend "
                "(gnome-keyring, KWallet, the macOS Keychain) to sign in"
            )
        return backend

    def refresh_token(self, issuer: str) -> str | None:
        try:
            return self._backend().get_password(KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer))
        except keyring.errors.KeyringError as exc:
            raise SignInError(f"the keyring refused to read the sign-in ({exc})") from None

    def keep_refresh_token(self, issuer: str, token: str) -> None:
        try:
            self._backend().set_password(KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer), token)
        except keyring.errors.KeyringError as exc:
            raise SignInError(f"the keyring refused to keep the sign-in ({exc})") from None

    def forget(self, issuer: str) -> None:
        self.forget_access(issuer)
        try:
            backend = self._backend()
            if backend.get_password(KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer)) is not None:
                backend.delete_password(KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer))
        except keyring.errors.PasswordDeleteError:
            pass
        except keyring.errors.KeyringError as exc:
            raise SignInError(f"the keyring refused to delete the sign-in ({exc})") from None
