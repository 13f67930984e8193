"""Every agent that has a token, as the person lists and ends them (`poppy-tui mcp agents`,
`poppy-tui mcp revoke`, the TUI's Agents screen): the `default` agent (the token from before
names, default_token.py) when its file exists, and each named one (registry.py)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from poppy_tui.agent.gate import default_token, registry
from poppy_tui.agent.gate.default_token import DEFAULT_AGENT


@dataclass(frozen=True)
class TokenHolder:
    name: str
    created_at: str | None  # RFC 3339 UTC; the default token's: when it was made or last rotated
    see_all: bool


def token_holders(data_dir: Path) -> list[TokenHolder]:
    """Agents with a token now, `default` first (RegistryError if the agents file can't be read)."""
    holders = []
    try:
        made = os.stat(default_token.token_path(data_dir)).st_mtime
    except OSError:
        pass
    else:
        holders.append(
            TokenHolder(
                DEFAULT_AGENT, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(made)), False
            )
        )
    for entry in registry.read_entries(registry.registry_path(data_dir)):
        holders.append(TokenHolder(entry.name, entry.created_at, entry.see_all))
    return holders


def revoke(data_dir: Path, name: str) -> bool:
    """End the agent `name`'s token (a running gate refuses it at once and closes its sessions);
    False if it had none. `default`: its token file is removed (`poppy-tui mcp token` makes a new
    one if the person wants it back)."""
    if name == DEFAULT_AGENT:
        try:
            os.unlink(default_token.token_path(data_dir))
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise registry.RegistryError(
                f"can't remove {default_token.token_path(data_dir)}: {exc.strerror or exc}"
            ) from None
        return True
    return registry.revoke(registry.registry_path(data_dir), name)
