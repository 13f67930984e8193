"""Whether the agent is signed in now, at an account-owned operation's Company, as ANOTHER account
than the one the operation belongs to (Ops 3: approvable "while signed in to the same account").

Known only when both are: the operation's account (operations.account, migration 9) and the
account of the sign-in now (sign_ins.account). Either unknown, or signed out: None, and the
operation behaves as before (approvable from any signed-in Session; waits for sign-in signed out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from poppy_tui.agent.store.records import OperationRecord


def signed_in_account(db: Any, company_id: int) -> str | None:
    """The account the agent is signed in as at this Company, where the sign-in named it (read
    from the sign_ins table directly: the store's own modules use this, below sign_ins.py)."""
    row = db.execute("SELECT account FROM sign_ins WHERE company_id=?", (company_id,)).fetchone()
    return row[0] if row is not None and row[0] else None


def other_account(db: Any, op: OperationRecord) -> str | None:
    """The account signed in now at op's Company when it is known and not op's own; else None."""
    if not op.account_owned or not op.account:
        return None
    current = signed_in_account(db, op.company.id)
    if current is None:
        return None
    from poppy_tui.safety.account_owner import (
        same_account,
    )  # the sanitiser only when both are known

    if same_account(current, op.account):
        return None
    return current


def other_account_now(store: Any, op: OperationRecord) -> str | None:
    """other_account, read through a Store (for the agent, the CLI and the TUI)."""
    return other_account(store._db, op)


def account_signed_in_now(store: Any, company_id: int) -> str | None:
    """signed_in_account, read through a Store."""
    return signed_in_account(store._db, company_id)
