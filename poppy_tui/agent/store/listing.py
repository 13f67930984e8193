"""The part of the store that `pending` opens: the lists, and the expiries it records before it
lists. Only the light parts (no records' dataclasses, no protocol parsers): a short command's
time is mostly imports (docs/architecture.md). Opened like the Store (StoreBase.open: same file,
same migrations), and writes nothing else."""

from __future__ import annotations

from poppy_tui.agent.store.expiry import ExpiryStore
from poppy_tui.agent.store.history import HistoryStore
from poppy_tui.agent.store.row_json import RowJsonStore


class ListStore(HistoryStore, ExpiryStore, RowJsonStore):
    """Lists and counts of operations (also as the JSON `pending --json` prints), after recording
    what has expired."""
