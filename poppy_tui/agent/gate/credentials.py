"""What a running `poppy-tui mcp --http` accepts: a bearer token is the `default` agent's
(default_token.TokenFile) or a named agent's (registry.py, by its hash). Both files are looked at
on every request (one stat() each; read again only when they changed), so a new token works, and a
revoked one is refused, from the next request, also in a server started before. `names()` is what
the server's watch compares, to close the sessions of an agent the moment it is revoked.
"""

from __future__ import annotations

import hmac
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from poppy_tui.agent.gate import default_token, registry
from poppy_tui.agent.gate.default_token import DEFAULT_AGENT, TokenFile

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GateAgent:
    """An agent as the gate knows it from its token."""

    name: str
    see_all: bool
    # Which token: a revoked agent made again under the same name is another principal, so it can
    # never pick up a session the old token opened (the MCP SDK binds a session to its creator).
    principal: str


_UNREAD = (-1, -1, -1, -1, -1, -1)


class Credentials:
    def __init__(self, data_dir: Path) -> None:
        self.default = TokenFile(default_token.token_path(data_dir), create=False)
        self.path = registry.registry_path(data_dir)
        self._seen: tuple[int, ...] | None = None
        self._entries: list[registry.AgentEntry] = []
        self._entries_now()

    def _entries_now(self) -> list[registry.AgentEntry]:
        try:
            status = os.stat(self.path)
            seen: tuple[int, ...] = (
                status.st_dev,
                status.st_ino,
                status.st_mtime_ns,
                status.st_ctime_ns,
                status.st_size,
                status.st_mode,
            )
        except OSError:
            seen = _UNREAD
        if seen != self._seen:
            self._seen = seen
            try:
                self._entries = registry.read_entries(self.path)
            except registry.RegistryError as exc:
                log.warning("%s: every named agent is refused until it is fixed", exc)
                self._entries = []
        return self._entries

    def identify(self, presented: bytes) -> GateAgent | None:
        """The agent whose token `presented` is, or None. Compared in constant time: against the
        default token, and as a hash against every named agent's (all of them, every time)."""
        found = None
        if self.default.accepts(presented):
            found = GateAgent(DEFAULT_AGENT, False, "default:" + registry.token_hash(presented))
        digest = registry.token_hash(presented)
        for entry in self._entries_now():
            if hmac.compare_digest(digest, entry.token_sha256) and found is None:
                found = GateAgent(entry.name, entry.see_all, f"{entry.name}:{digest}")
        return found

    def principals(self) -> frozenset[str]:
        """The principals accepted now (what a revocation takes away)."""
        principals = {f"{e.name}:{e.token_sha256}" for e in self._entries_now()}
        token = self.default.current()
        if token is not None:
            principals.add("default:" + registry.token_hash(token))
        return frozenset(principals)
