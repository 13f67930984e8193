"""`show`'s and `show --json`'s account part, and `send`'s line for a kept approval (Ops 3): whose
an account-owned operation is, another account signed in there, and an approval held because
the sign-in can't be shown to be its account, in the words of the review and the MCP gate.
Account names are the Company's: every one goes out through safety/account_owner.py."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from poppy_tui.agent.store import OperationRecord, Store


def other_account_of(store: Store, record: OperationRecord) -> str | None:
    from poppy_tui.agent.store.owning_account import other_account_now

    return other_account_now(store, record)


def account_standing_json(store: Store, record: OperationRecord) -> dict[str, Any]:
    standing = store.account_standing(record) if record.account_owned else None
    held = account_hold(store, record)
    return {
        "account_standing": standing.standing if standing is not None else None,
        "account_held": held,
    }


def account_hold(store: Store, record: OperationRecord) -> str | None:
    """Why its approval is held for the sign-in now, in the review's and the MCP gate's words."""
    if not record.account_owned or record.status.is_final:
        return None
    from poppy_tui.safety.account_owner import unconfirmed_account_hold

    standing = store.account_standing(record)
    if standing is None or standing.standing != "unconfirmed":
        return None
    return unconfirmed_account_hold(record.company.name, record.account, standing.current)


def waiting_line(store: Store, record: OperationRecord) -> str:
    """Why a kept approval waits, true now: the sign-in at its Company since the wait began may
    be another account (both named) or one not shown to be its own (the person's word asked),
    whatever line the wait began with ("Sign in to … to continue")."""
    standing = store.account_standing(record) if record.account_owned else None
    if standing is not None and standing.standing in ("other", "unconfirmed"):
        from poppy_tui.safety.account_owner import account_wait

        if standing.standing == "unconfirmed" or record.account:
            return account_wait(record.company.name, record.account, standing)
    return record.waiting_sign_in or ""


def account_lines(store: Store, record: OperationRecord) -> list[str]:
    """Whose the operation is (Ops 3) and, signed in there as another account or one not shown
    to be its own, why it waits."""
    if not record.account_owned:
        return []
    from poppy_tui.safety.account_owner import other_account_reason, owner_line

    lines = [f"Belongs to: {owner_line(record.account)}"]
    other = other_account_of(store, record)
    if other is not None and record.account is not None and not record.status.is_final:
        lines.append(
            f"Can't be approved now: {other_account_reason(record.company.name, record.account, other)}"
        )
    held = account_hold(store, record)
    if held is not None:
        lines.append(f"Held: {held}")
    return lines
