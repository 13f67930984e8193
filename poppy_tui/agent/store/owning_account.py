"""Whether the sign-in at an account-owned operation's Company now can be shown to be the account
the operation belongs to (Ops 3: approvable "while signed in to the same account").

One answer, `account_standing`, for every reader (the send, the dispatcher, the review, `show`,
the MCP gate), from what the store knows:
- the names: the operation's account (operations.account, migration 9) and the account the
  sign-in now named (sign_ins.account), compared as the Company wrote them
  (safety/account_owner.compare_accounts): the same, or another account;
- where a name is missing (Device or Direct Sign-In with an opaque token and nothing else that
  names the account) or the two can't be compared, the sign-ins themselves: the sign-in the
  request that returned the operation went with (an `account_sign_in` event, kept as the
  operation is recorded: the sign-in current then, if it was made before that request), and the
  sign-ins the person said are this operation's account (`account_confirmed` events, kept by
  `confirm_account`). The sign-in now is the same as one of those: same. Else it can't be shown,
  and the approval is held until the person says, in the review, that it is (or signs in as it).
The events are the record (durable, shown in the history); nothing here is a cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from poppy_tui.agent.store.connection import stamp

if TYPE_CHECKING:
    from poppy_tui.agent.store.records import OperationRecord

# Event kinds (events table): the sign-in an operation came with, and one the person vouched for.
RETURNED_UNDER = "account_sign_in"
CONFIRMED = "account_confirmed"
SIGN_IN_PREFIX = "the sign-in of "

Standing = Literal["same", "other", "unconfirmed", "signed_out"]


@dataclass(frozen=True)
class AccountStanding:
    """What the sign-in now is to an account-owned operation.

    - same: its account (by name, or the very sign-in it came with, or one the person vouched for);
    - other: another account, by name (`current`);
    - unconfirmed: it can't be shown to be the operation's account: held until the person says;
    - signed_out: no sign-in now (the Company asks for one; the approval waits for it).
    `current`: the account the sign-in now named (None: not named); `sign_in`: its signed_in_at."""

    standing: Standing
    current: str | None = None
    sign_in: str | None = None


def _sign_in_now(db: Any, company_id: int) -> tuple[str | None, str] | None:
    row = db.execute(
        "SELECT account, signed_in_at FROM sign_ins WHERE company_id=?", (company_id,)
    ).fetchone()
    return None if row is None else (row[0] or None, row[1])


def signed_in_account(db: Any, company_id: int) -> str | None:
    """The account the agent is signed in as at this Company, where the sign-in named it (read
    from the sign_ins table directly: the store's own modules use this, below sign_ins.py)."""
    now = _sign_in_now(db, company_id)
    return None if now is None else now[0]


def _sign_ins(db: Any, operation_row: int, kind: str) -> list[str]:
    rows = db.execute(
        "SELECT detail FROM events WHERE operation_row=? AND kind=? ORDER BY id",
        (operation_row, kind),
    ).fetchall()
    return [
        r[0].removeprefix(SIGN_IN_PREFIX) for r in rows if r[0] and r[0].startswith(SIGN_IN_PREFIX)
    ]


def account_standing(db: Any, op: OperationRecord) -> AccountStanding | None:
    """None for an operation returned signed out (its Session's, Ops 3: no account to match)."""
    if not op.account_owned:
        return None
    now = _sign_in_now(db, op.company.id)
    if now is None:
        return AccountStanding("signed_out")
    current, sign_in = now
    from poppy_tui.safety.account_owner import compare_accounts

    by_name = compare_accounts(op.account, current)
    if by_name != "unknown":
        return AccountStanding(by_name, current, sign_in)
    returned = _sign_ins(db, op.id, RETURNED_UNDER)
    if (returned and returned[-1] == sign_in) or sign_in in _sign_ins(db, op.id, CONFIRMED):
        return AccountStanding("same", current, sign_in)
    return AccountStanding("unconfirmed", current, sign_in)


def note_returned_sign_in(db: Any, operation_row: int, company_id: int, request_id: int) -> None:
    """As an account-owned operation (or its new revision) is recorded, in the same transaction:
    which sign-in the request that returned it went with. Known only when the sign-in current now
    was made before that request was (then no other sign-in can have come between: a new one
    replaces the row with a later signed_in_at, a sign-out deletes it); else nothing is kept and
    the sign-in can't be shown to be the operation's account later (the person is asked)."""
    now = _sign_in_now(db, company_id)
    made = db.execute("SELECT created_at FROM requests WHERE id=?", (request_id,)).fetchone()
    if now is None or made is None or not now[1] < made[0]:
        return
    if _sign_ins(db, operation_row, RETURNED_UNDER)[-1:] == [now[1]]:
        return  # the same sign-in as for its last revision: said once
    db.execute(
        "INSERT INTO events (operation_row, at, kind, detail) VALUES (?, ?, ?, ?)",
        (operation_row, stamp(), RETURNED_UNDER, SIGN_IN_PREFIX + now[1]),
    )


def not_to_confirm(standing: AccountStanding | None) -> str:
    if standing is None:
        return (
            "this operation was returned signed out: it belongs to its Session, not to an account"
        )
    if standing.standing == "signed_out":
        return "poppy-tui is not signed in there; sign in first"
    if standing.standing == "other":
        return "the sign-in now names another account; sign in as the operation's account"
    return "the sign-in now is already known to be this operation's account"


def other_account(db: Any, op: OperationRecord) -> str | None:
    """The account signed in now at op's Company when it is known to be another than op's; else None."""
    standing = account_standing(db, op)
    return standing.current if standing is not None and standing.standing == "other" else None


def account_held(db: Any, op: OperationRecord) -> bool:
    """Its approval must not go with the sign-in now: another account's, or not shown to be its."""
    standing = account_standing(db, op)
    return standing is not None and standing.standing in ("other", "unconfirmed")


# Read through a Store, for the agent, the CLI, the TUI and the MCP gate.


def other_account_now(store: Any, op: OperationRecord) -> str | None:
    """The account signed in now when it is known to be another than op's; else None."""
    standing = store.account_standing(op)
    return standing.current if standing is not None and standing.standing == "other" else None


def account_standing_now(store: Any, op: OperationRecord) -> AccountStanding | None:
    standing: AccountStanding | None = store.account_standing(op)
    return standing


def account_signed_in_now(store: Any, company_id: int) -> str | None:
    """signed_in_account, read through a Store."""
    account: str | None = store.signed_in_account_at(company_id)
    return account
