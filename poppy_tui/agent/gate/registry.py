"""The agents the person named for the gate, each with a bearer token of its own:
`poppy-tui mcp token --agent NAME [--see-all]` makes one and prints it once; only its SHA-256 is
kept, in `mcp-agents.json` in the data folder (mode 0600, refused if anyone else can read it);
`poppy-tui mcp revoke NAME` (or the TUI's Agents screen) removes it, and a running server
refuses it from its next request and closes its sessions (credentials.py).

A plain hash is enough: a token is 256 random bits, so nothing can be guessed from its hash, and
a slow password hash would only slow every request down. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from poppy_tui.agent.gate.default_token import DEFAULT_AGENT, TOKEN_BYTES
from poppy_tui.agent.gate.private_files import locked, readable_by_others, write_private

FILE_NAME = "mcp-agents.json"
# Names appear in the person's inbox, in notifications and in shell output: a short, plain word.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
NAME_RULE = "1 to 40 letters, digits, '.', '_' or '-', starting with a letter or digit"
MAX_BYTES = 1024 * 1024


class RegistryError(Exception):
    """The agents file can't be used, or a name can't be (one line for the person)."""


@dataclass(frozen=True)
class AgentEntry:
    name: str
    created_at: str  # RFC 3339, UTC
    see_all: bool  # reads every operation, not only its own requests'
    token_sha256: str  # hex


def registry_path(data_dir: Path) -> Path:
    return Path(data_dir) / FILE_NAME


def token_hash(token: bytes) -> str:
    return hashlib.sha256(token).hexdigest()


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise RegistryError(f"an agent's name is {NAME_RULE}; got {name[:60]!r}")
    return name


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_entries(path: Path) -> list[AgentEntry]:
    """The agents in `path` ([] when there is no file yet)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RegistryError(f"can't read the agents file {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode & 0o777
        if readable_by_others(mode):
            raise RegistryError(
                f"{path} can be read by others (mode {mode:04o}); 'chmod 600 {path}' makes it yours "
                "alone again (its tokens are hashes, but who the agents are is yours)"
            )
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        document = json.loads(data)
        listed = document["agents"]
        entries = [
            AgentEntry(
                name=check_name(str(item["name"])),
                created_at=str(item["created_at"]),
                see_all=bool(item.get("see_all", False)),
                token_sha256=str(item["token_sha256"]),
            )
            for item in listed
        ]
    except (ValueError, KeyError, TypeError, RegistryError) as exc:
        raise RegistryError(
            f"{path} is not an agents file poppy-tui can read ({exc}); move it away, and make "
            "the tokens again with 'poppy-tui mcp token --agent NAME'"
        ) from None
    return entries


def _write(path: Path, entries: list[AgentEntry]) -> None:
    document = {
        "agents": [
            {
                "name": e.name,
                "created_at": e.created_at,
                "see_all": e.see_all,
                "token_sha256": e.token_sha256,
            }
            for e in entries
        ]
    }
    write_private(path, (json.dumps(document, indent=2) + "\n").encode("ascii"), replace=True)


def create(path: Path, name: str, *, see_all: bool = False, replace: bool = False) -> str:
    """A new token for the agent `name`, returned (to print once); only its hash is kept.
    `replace`: the agent has one already and this one takes its place (the old one is refused
    from now on); otherwise a name that has a token is refused."""
    check_name(name)
    if name == DEFAULT_AGENT:
        raise RegistryError(
            f"'{DEFAULT_AGENT}' is the agent of 'poppy-tui mcp token' without --agent (the token "
            "from before agents had names); choose another name"
        )
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        with locked(path):
            entries = read_entries(path)
            existing = next((e for e in entries if e.name == name), None)
            if existing is not None and not replace:
                raise RegistryError(
                    f"the agent '{name}' has a token already; 'poppy-tui mcp token --agent {name} "
                    f"--rotate' replaces it, 'poppy-tui mcp revoke {name}' ends it"
                )
            if existing is None and replace:
                raise RegistryError(
                    f"there is no agent '{name}' to rotate; 'poppy-tui mcp token --agent {name}' "
                    "makes its first token"
                )
            entry = AgentEntry(
                name=name,
                created_at=_utc_now(),
                see_all=see_all,
                token_sha256=token_hash(token.encode("ascii")),
            )
            _write(path, [e for e in entries if e.name != name] + [entry])
    except OSError as exc:
        raise RegistryError(f"can't write the agents file {path}: {exc.strerror or exc}") from None
    return token


def revoke(path: Path, name: str) -> bool:
    """Remove the agent `name` (its token is refused from now on); False if there was none."""
    try:
        with locked(path):
            entries = read_entries(path)
            kept = [e for e in entries if e.name != name]
            if len(kept) == len(entries):
                return False
            _write(path, kept)
    except OSError as exc:
        raise RegistryError(f"can't write the agents file {path}: {exc.strerror or exc}") from None
    return True
