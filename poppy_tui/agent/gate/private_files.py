"""Files only the user may read (mode 0600), written whole or not at all: a fresh temporary file
created with the final mode (never wider, not even for a moment), then moved into place."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

MODE = 0o600


def write_private(path: Path, data: bytes, *, replace: bool) -> None:
    """`data` in `path`, mode 0600: os.replace when `replace`, else os.link, which fails with
    FileExistsError if another process got there first (so two first uses agree on one file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, MODE)
    try:
        try:
            os.fchmod(fd, MODE)  # a umask can only narrow the mode; this makes it exact
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def readable_by_others(mode: int) -> bool:
    return bool(mode & 0o077)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock beside `path` (`.NAME.lock`, mode 0600) for a read-change-write: two
    `poppy-tui mcp token --agent` at once, or a revoke from the TUI while the CLI makes a token,
    each see the other's change."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
