"""Where tokens live. Refresh tokens: where the agent's signing key lives, i.e. the system keyring
(one entry per issuer), or, when the person opted in to key_storage = "file" for the key, a
private 0600 file beside the key file. Never SQLite, never logs. Access tokens: this process's
memory, with their expiry, refreshed before it."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from poppy_tui.agent import logfile
from poppy_tui.agent.config import Config
from poppy_tui.agent.keys import KEYRING_SERVICE, KeyStorageError, keyring_problem, storage_mode
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.protocol.header_values import is_refresh_token, token_problem

log = logging.getLogger(__name__)

REFRESH_TOKEN_USERNAME = "refresh-token {issuer}"
REFRESH_TOKEN_FILE = "sign-ins.json"  # in the data folder, with key_storage = "file" only
MAX_TOKEN_FILE_BYTES = 1024 * 1024


def token_fingerprint(token: str) -> str:
    """Which access token, without the token: for comparing tokens across calls and processes."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:16]


@dataclass
class AccessToken:
    token: str
    expires_at: float | None  # time.time(); None when the Company gave no expiry
    # The sign-in (sign_ins.signed_in_at) it belongs to: a sign-in made since, in this process or
    # another (the CLI beside the TUI), makes it stale, whatever its expiry says.
    signed_in_at: str | None = None

    def fresh(self, margin: float, now: float | None = None) -> bool:
        return self.expires_at is None or self.expires_at - (now or time.time()) > margin

    def usable(self, now: float | None = None) -> bool:
        return self.expires_at is None or self.expires_at > (now or time.time())


class TokenVault:
    def __init__(self, paths: Paths | None = None, config: Config | None = None) -> None:
        self._paths = paths
        self._config = config
        self._access: dict[str, AccessToken] = {}

    # ---- access tokens (memory) ---------------------------------------------------------------

    def access(self, issuer: str) -> AccessToken | None:
        return self._access.get(issuer)

    def keep_access(
        self, issuer: str, token: str, expires_in: int | None, signed_in_at: str | None = None
    ) -> AccessToken:
        logfile.secret(token)  # never written to the log, whoever would quote it
        kept = AccessToken(
            token, None if expires_in is None else time.time() + expires_in, signed_in_at
        )
        self._access[issuer] = kept
        return kept

    def forget_access(self, issuer: str) -> None:
        self._access.pop(issuer, None)

    # ---- refresh tokens (keyring, or the opt-in private file) ----------------------------------

    def _file(self) -> Path | None:
        """The private file when the person chose file storage for the signing key, else None."""
        if self._paths is None or self._config is None:
            return None
        try:
            mode = storage_mode(self._config)
        except KeyStorageError as exc:
            raise SignInError(str(exc)) from None
        return self._paths.data_dir / REFRESH_TOKEN_FILE if mode == "file" else None

    def refresh_token(self, issuer: str) -> str | None:
        """The stored refresh token, or None. One that isn't RFC 6749 VSCHARs (an older
        poppy-tui kept whatever a Company sent) counts as none: it is never sent again."""
        path = self._file()
        if path is not None:
            stored = _read_tokens(path).get(issuer)
        else:
            import keyring.errors  # only here: with file storage, keyring (and its metadata scan) never loads

            try:
                stored = _keyring().get_password(
                    KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer)
                )
            except keyring.errors.KeyringError as exc:
                raise SignInError(f"the keyring refused to read the sign-in ({exc})") from None
        if stored is not None and not is_refresh_token(stored):
            log.warning(
                "the stored refresh token for %s can't be used (%s); sign in again",
                issuer,
                token_problem(stored),
            )
            return None
        logfile.secret(stored)
        return stored

    def keep_refresh_token(self, issuer: str, token: str) -> None:
        logfile.secret(token)
        path = self._file()
        if path is not None:
            tokens = _read_tokens(path)
            tokens[issuer] = token
            _write_tokens(path, tokens)
            return
        import keyring.errors

        try:
            _keyring().set_password(
                KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer), token
            )
        except keyring.errors.KeyringError as exc:
            raise SignInError(f"the keyring refused to keep the sign-in ({exc})") from None

    def forget(self, issuer: str) -> None:
        self.forget_access(issuer)
        path = self._file()
        if path is not None:
            tokens = _read_tokens(path)
            if tokens.pop(issuer, None) is not None:
                _write_tokens(path, tokens)
            return
        username = REFRESH_TOKEN_USERNAME.format(issuer=issuer)
        import keyring.errors

        try:
            backend = _keyring()
            if backend.get_password(KEYRING_SERVICE, username) is not None:
                backend.delete_password(KEYRING_SERVICE, username)
        except keyring.errors.PasswordDeleteError:
            pass
        except keyring.errors.KeyringError as exc:
            raise SignInError(f"the keyring refused to delete the sign-in ({exc})") from None


def _keyring():
    import keyring

    backend = keyring.get_keyring()
    problem = keyring_problem(backend)
    if problem:
        raise SignInError(
            f"no usable keyring to keep the sign-in in ({problem}); install a keyring backend "
            '(gnome-keyring, KWallet, the macOS Keychain), or opt in to files with key_storage = "file"'
        )
    return backend


def _read_tokens(path: Path) -> dict[str, str]:
    """The private token file, checked as the key file is: a regular file of ours, mode 0600."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SignInError(f"can't read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise SignInError(
                f"{path} is not a regular file of yours; refusing to use it for sign-ins"
            )
        if info.st_mode & 0o077:
            raise SignInError(
                f"{path} can be read by other users; refusing to use it (chmod 600 {path})"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    try:
        tokens = json.loads(data) if data.strip() else {}
    except ValueError:
        raise SignInError(f"{path} is damaged; remove it and sign in again") from None
    if not isinstance(tokens, dict):
        raise SignInError(f"{path} is damaged; remove it and sign in again")
    return {k: v for k, v in tokens.items() if isinstance(k, str) and isinstance(v, str)}


def _write_tokens(path: Path, tokens: dict[str, str]) -> None:
    """Written whole to a private temporary file, synced, then renamed over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(
            temp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        try:
            os.write(fd, json.dumps(tokens).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as exc:
        raise SignInError(f"can't save the sign-in to {path}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
