"""The bearer token of `poppy-tui mcp --http`: made on first use, kept in the home (mode 0600),
printed by `poppy-tui mcp token`, replaced by `poppy-tui mcp token --rotate`.

Standard library only (no MCP SDK, no agent), so `poppy-tui mcp token` stays a short command.
A running server holds a `TokenFile` and asks it on every request; that costs one stat() and
re-reads the file only when it changed (another inode, mtime, ctime, size or mode), so a rotation refuses the
old token at once, also in a server started before it.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

FILE_NAME = "mcp-http-token"
# secrets.token_urlsafe(32): 32 random bytes (256 bits), 43 URL-safe characters.
TOKEN_BYTES = 32
_MODE = 0o600


class TokenError(Exception):
    """The token file can't be made or read (one line for the person)."""


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / FILE_NAME


def _write_new(path: Path, token: str, *, replace: bool) -> None:
    """Write `token` to a fresh temporary file created with mode 0600 (never wider, not even for
    a moment), then move it into place: os.replace for a rotation, os.link for a first creation
    (which fails if another process got there first, so two first uses agree on one token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, _MODE)
    try:
        try:
            os.fchmod(fd, _MODE)  # a umask can only narrow the mode; this makes it exact
            os.write(fd, (token + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass


def _read(path: Path) -> str:
    with open(path, encoding="ascii", errors="replace") as handle:
        token = handle.read(4096).strip()
    if len(token) < 32 or not all(ch.isalnum() or ch in "-_" for ch in token):
        raise TokenError(
            f"{path} does not hold a usable token; replace it with 'poppy-tui mcp token --rotate'"
        )
    return token


def _check_mode(path: Path) -> None:
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        raise TokenError(
            f"{path} can be read by others (mode {mode:04o}); 'poppy-tui mcp token --rotate' makes a new one "
            "with mode 0600"
        )


def read_or_create(path: Path) -> str:
    """The token in `path`, made there first if there is none yet."""
    try:
        if not path.exists():
            try:
                _write_new(path, secrets.token_urlsafe(TOKEN_BYTES), replace=False)
            except FileExistsError:
                pass  # another process made it first: use theirs
        _check_mode(path)
        return _read(path)
    except OSError as exc:
        raise TokenError(f"can't use the MCP token file {path}: {exc.strerror or exc}") from None


def rotate(path: Path) -> str:
    """A new token in `path`; the old one is refused from now on."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        _write_new(path, token, replace=True)
    except OSError as exc:
        raise TokenError(f"can't write the MCP token file {path}: {exc.strerror or exc}") from None
    return token


_GONE = (-1, -1, -1, -1, -1, -1)


class TokenFile:
    """The token a server accepts now: the file's, re-read when it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, ...] | None = None
        self._token: bytes | None = None
        read_or_create(path)
        self.current()

    def current(self) -> bytes | None:
        """The token's bytes, or None when the file is gone or unusable (then nothing is accepted)."""
        try:
            status = os.stat(self.path)
        except OSError:
            if self._seen != _GONE:
                self._refuse_all(f"{self.path} is gone")
            self._seen, self._token = _GONE, None
            return None
        # ctime and mode too: a chmod changes neither the inode nor mtime.
        seen = (
            status.st_dev,
            status.st_ino,
            status.st_mtime_ns,
            status.st_ctime_ns,
            status.st_size,
            status.st_mode,
        )
        if seen != self._seen:
            token = None
            if status.st_mode & 0o077:
                self._refuse_all(
                    f"{self.path} can be read by others (mode {status.st_mode & 0o777:04o})"
                )
            else:
                try:
                    token = _read(self.path)
                except (OSError, TokenError) as exc:
                    self._refuse_all(str(exc))
            if token:
                from poppy_tui.agent import logfile

                logfile.secret(token)  # never written to the log, whoever would quote it
            self._seen, self._token = seen, token.encode("ascii") if token else None
        return self._token

    def _refuse_all(self, why: str) -> None:
        import logging

        logging.getLogger(__name__).warning(
            "%s: every request is refused until 'poppy-tui mcp token --rotate' makes a new token",
            why,
        )

    def accepts(self, presented: bytes) -> bool:
        """Whether `presented` is the current token, compared in constant time."""
        token = self.current()
        # compare_digest takes as long for any presented value of a given length: nothing about
        # the token leaks through timing but its length, which is public (43 characters).
        return token is not None and hmac.compare_digest(presented, token)
