"""What the TUI's first frame reads: the inbox's lists, their stored checks and the change token,
without the rest of the store (its write side and the records' dataclasses, ~20 ms of imports),
which `Agent.store` opens after the first frame (Agent.open(lazy_store=True)). Opened like the
Store (StoreBase.open: same file, same migrations); its own connection, which sees every other
connection's commits (the change token is SQLite's data_version)."""

from __future__ import annotations

from poppy_tui.agent.store.checks import CheckStore
from poppy_tui.agent.store.history import HistoryStore


class InboxReader(HistoryStore, CheckStore):
    """Lists, counts and stored checks of operations; nothing here changes an operation."""
