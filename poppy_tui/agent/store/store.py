"""The durable record: SQLite on disk, WAL, file mode 0600; when each commit is fsynced: durability.py.

Every state change is one short `BEGIN IMMEDIATE` transaction whose WHERE clause
checks the state it moves from, so several processes (the TUI, CLI agents) can
share one file and a change only happens once. A decision is committed before
anything is sent; an attempt row is committed before the request leaves.

Store is assembled from one class per responsibility:
  connection.py     opening, migrating, write transactions (StoreBase), errors, time stamps
  companies.py      Companies and Sessions
  requests.py       the requests sent and their first answers
  operations.py     operations, revisions, and one operation's decisions/attempts/events
  history.py        filtered lists and counts of operations
  decisions.py      approve, decline, withdraw, resolve (only the person makes these)
  dispatch.py       expiry, leases, attempts, settling (the dispatcher's side)
  probes.py         finding out about an unknown outcome (Ops 7): resends, state read
  conversations.py  conversations and their messages
  rows.py           column lists and row -> record conversions
  checks.py         discrepancy checks stored with each revision (a cache, by checker version)
  resource_reads.py the resource an operation changes, as last read before the decision
  owning_account.py whether the sign-in now is an account-owned operation's account (Ops 3);
  accounts.py       its store side: that standing, and the person's word on it
"""

from __future__ import annotations

from poppy_tui.agent.store.checks import CheckStore
from poppy_tui.agent.store.companies import CompanyStore
from poppy_tui.agent.store.connection import (
    BUSY_TIMEOUT_SECONDS,
    STAMP_LENGTH,
    StateError,
    StoreBase,
    StoreError,
    now_utc,
    parse_stamp,
    stamp,
    store_error,
)
from poppy_tui.agent.store.conversations import ConversationStore
from poppy_tui.agent.store.decisions import DecisionStore
from poppy_tui.agent.store.dispatch import DispatchStore
from poppy_tui.agent.store.history import HistoryStore
from poppy_tui.agent.store.probes import ProbeStore
from poppy_tui.agent.store.accounts import OwningAccountStore
from poppy_tui.agent.store.resource_reads import ResourceReadStore

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "STAMP_LENGTH",
    "StateError",
    "Store",
    "StoreBase",
    "StoreError",
    "now_utc",
    "parse_stamp",
    "stamp",
    "store_error",
]


class Store(
    DecisionStore,
    DispatchStore,
    ProbeStore,
    HistoryStore,
    CompanyStore,
    ConversationStore,
    CheckStore,
    ResourceReadStore,
    OwningAccountStore,
):
    """The whole durable record; see the module docstring for which part lives where."""
