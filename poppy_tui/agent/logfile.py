"""The log a person can attach to a bug report: `<data>/poppy-tui.log` (`poppy-tui locate log`),
rotated at LOG_BYTES with LOG_BACKUPS older files beside it, opened where the TUI and the commands
that talk to Companies start (cli/context.py, ui/app.py; `poppy-tui mcp` and `send --watch` open
an agent the same way). Every module logs on its own `logging.getLogger(__name__)`; a failure
caught and carried on from is logged with its traceback (`log.exception`), so it ends up here.

Its level: POPPY_TUI_LOG_LEVEL (debug, info, warning, error), else config.toml's `log_level`,
else info. poppy-tui's own records are kept from that level; other libraries' (httpx2, httpcore2,
the MCP SDK, authlib, uvicorn) from warning, or from debug when the level is debug.

No secret reaches the file (docs/development.md, "The log"): every line is redacted as it is
written (`redact`): Session JWTs and any other JWS or JWT, Authorization values (Bearer, Basic,
DPoP), and the values of secret-named fields (access_token, refresh_token, id_token, password,
code, device_code, user_code, client_assertion, token, secret...) in JSON, Python reprs, forms and
query strings, whoever logged them, at every level, in messages and tracebacks alike. Values the
program knows to be secret (the gate's token, a password typed at a prompt) can be named with
`secret(value)`, and are then replaced wherever they appear.

Only the commands that open a log import logging.handlers (`pending` and the other reading
commands import no logging at all: tests/cli/test_command_imports.py).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path

LEVEL_ENV = "POPPY_TUI_LOG_LEVEL"
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
DEFAULT_LEVEL = "info"
LOG_BYTES = 1024 * 1024
LOG_BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d %(threadName)s] %(message)s"
REDACTED = "[redacted]"

_lock = threading.Lock()
_handler: logging.Handler | None = None
_path: Path | None = None
# The secrets named so far, oldest first (a dict as an ordered set), at most MAX_SECRETS: a TUI
# open for weeks renews its access tokens every few minutes.
_secrets: dict[str, None] = {}
MAX_SECRETS = 512

# Field names whose values are secrets wherever they are written.
_SECRET_NAMES = (
    r"access_token|refresh_token|id_token|token|access-token|refresh-token|id-token"
    r"|password|passwd|pass|passphrase|secret|client_secret|code|device_code|user_code"
    r"|one_time_code|otp|code_verifier|client_assertion|assertion|api_key|apikey|session|session_jwt"
    r"|authorization|proxy-authorization|cookie|set-cookie|poppy-session"
)
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){1,3}")
# Authorization schemes (RFC 9110 11.4): Bearer in any case, as people write it; Basic and DPoP as
# their RFCs spell them, so that "basic" in prose stays.
_SCHEME = re.compile(r"\b((?i:bearer)|Basic|DPoP)(\s+|%20|\+)[A-Za-z0-9._~+/=%-]{4,}")
# "name": "value" / 'name': 'value' / b'name', b'value' (header tuples) / name='value' (reprs)
_QUOTED = re.compile(
    r"""(?ix)
    (?P<name>b?(?P<q>["'])(?:"""
    + _SECRET_NAMES
    + r""")(?P=q))          # a quoted name
    (?P<sep>\s*[:,]\s*b?)    # : in JSON and dicts, , in (name, value) tuples
    (?P<vq>["'])(?P<value>(?:\\.|(?!(?P=vq)).)*)(?P=vq)
    """
)
_ASSIGNED_QUOTED = re.compile(
    r"(?i)(?P<name>\b(?:" + _SECRET_NAMES + r"))(?P<sep>\s*=\s*)(?P<vq>[\"'])"
    r"(?P<value>(?:\\.|(?!(?P=vq)).)*)(?P=vq)"
)
# name=value in forms and query strings; Name: value in header lines (headers only: "exit code: 2"
# is no secret)
_ASSIGNED = re.compile(
    r"(?i)(?P<name>(?<![A-Za-z0-9_-])(?:"
    + _SECRET_NAMES
    + r"))(?P<sep>=)(?P<value>[^\s&\"',;)\]}]+)"
)
_HEADER_LINE = re.compile(
    r"(?i)(?P<name>(?<![A-Za-z0-9_-])(?:authorization|proxy-authorization|cookie|set-cookie"
    r"|poppy-session))(?P<sep>:\s*)(?P<value>[^\r\n]+)"
)


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by [redacted] (see the module's docstring)."""
    with _lock:
        named = sorted(_secrets, key=len, reverse=True)
    for value in named:
        if value in text:
            text = text.replace(value, REDACTED)
    text = _JWT.sub(REDACTED, text)
    text = _SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _QUOTED.sub(
        lambda m: f"{m.group('name')}{m.group('sep')}{m.group('vq')}{REDACTED}{m.group('vq')}", text
    )
    text = _ASSIGNED_QUOTED.sub(
        lambda m: f"{m.group('name')}{m.group('sep')}{m.group('vq')}{REDACTED}{m.group('vq')}", text
    )
    for pattern in (_ASSIGNED, _HEADER_LINE):
        text = pattern.sub(
            lambda m: (
                m.group(0)
                if m.group("value").startswith(REDACTED)
                else f"{m.group('name')}{m.group('sep')}{REDACTED}"
            ),
            text,
        )
    return text


def secret(value: str | None) -> None:
    """Never write `value` to the log (a token or a password this process holds). Short values
    are left alone: they would blank out ordinary words."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.pop(value, None)
            _secrets[value] = None
            while len(_secrets) > MAX_SECRETS:
                del _secrets[next(iter(_secrets))]


class RedactingFormatter(logging.Formatter):
    """The whole line, message and traceback alike, redacted as it is written."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        import time

        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"


def level_named(config_level: str | None) -> tuple[int, str | None]:
    """The level to log at, and a complaint if POPPY_TUI_LOG_LEVEL named none (then the config's
    or the default is used)."""
    from_env = os.environ.get(LEVEL_ENV, "").strip().lower()
    if from_env in LEVELS:
        return LEVELS[from_env], None
    complaint = None
    if from_env:
        complaint = f"{LEVEL_ENV}={from_env!r} is not one of {', '.join(LEVELS)}; ignored"
    return LEVELS.get((config_level or DEFAULT_LEVEL).lower(), logging.INFO), complaint


class _Levels(logging.Filter):
    """poppy-tui's records from the chosen level; other libraries' from warning, or from debug
    when that is the level (their debug records are what a transport bug needs)."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        ours = record.name == "poppy_tui" or record.name.startswith("poppy_tui.")
        needed = (
            self.level if ours or self.level <= logging.DEBUG else max(self.level, logging.WARNING)
        )
        return record.levelno >= needed


class _LazyFile(logging.Handler):
    """The rotating file, opened at the first record worth writing: a command that logs
    nothing (most runs) creates no file and imports no logging.handlers (the CLI's per-command
    targets, docs/benchmarks.md)."""

    def __init__(self, path: Path, level: int) -> None:
        super().__init__()
        self.path = path
        self.chosen = level
        self.file: logging.Handler | None = None
        self.broken = False
        self.setFormatter(RedactingFormatter(FORMAT))
        self.addFilter(_Levels(level))

    def emit(self, record: logging.LogRecord) -> None:
        if self.file is None:
            if self.broken:
                return
            try:
                self.file = self._open()
            except OSError:
                self.broken = True  # a log must never stop the program: it runs without one
                return
        self.file.emit(record)

    def _open(self) -> logging.Handler:
        import logging.handlers

        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        opened = logging.handlers.RotatingFileHandler(
            self.path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
        opened.setFormatter(self.formatter)
        from poppy_tui import __version__

        opened.emit(
            logging.LogRecord(
                __name__,
                logging.INFO,
                __file__,
                0,
                "poppy-tui %s (pid %s) writes its log here, from %s",
                (__version__, os.getpid(), logging.getLevelName(self.chosen).lower()),
                None,
            )
        )
        return opened

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        super().close()


def open_log(path: Path, config_level: str | None = None) -> Path:
    """Write this process's log records to `path` (a rotating file, mode 0600, opened at the
    first record) from now on; a process that opens another home's log (the demo's) writes
    there instead. A file that can't be written is left unwritten: the log never stops the
    program."""
    global _handler, _path
    with _lock:
        if _handler is not None and _path == path:
            return path
        level, complaint = level_named(config_level)
        handler = _LazyFile(path, level)
        root = logging.getLogger()
        if _handler is not None:
            root.removeHandler(_handler)
            _handler.close()
        root.addHandler(handler)
        # Records below the root's level are never made: let the chosen level's through.
        if root.getEffectiveLevel() > level:
            root.setLevel(level)
        logging.captureWarnings(True)
        _handler, _path = handler, path
    if complaint:
        logging.getLogger(__name__).warning(complaint)
    return path


def current() -> Path | None:
    """The log file this process writes, if one is open."""
    return _path


def close_log() -> None:
    """Stop writing the log (tests; a process's log is closed when it ends)."""
    global _handler, _path
    with _lock:
        if _handler is None:
            return
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler, _path = None, None


def where() -> str:
    """'Details in /path/poppy-tui.log.' for an error message, or '' without a log."""
    path = _path
    return f"Details in {path}." if path is not None else ""
