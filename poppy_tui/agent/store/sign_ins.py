"""The sign_ins table: who is signed in at which Company, with which scopes. Nothing secret
lives here (refresh tokens are in the keyring, access tokens in memory): only what
`companies list` and the Companies screen show, and what says a grant already covers a task."""

from __future__ import annotations

from dataclasses import dataclass

from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.store import Store, stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class SignInRecord:
    company_id: int
    issuer: str
    kind: str
    scopes: tuple[str, ...]
    account: str | None
    signed_in_at: str
    updated_at: str


_COLUMNS = "company_id, issuer, kind, scopes, account, signed_in_at, updated_at"


def _record(row: tuple[Any, ...]) -> SignInRecord:
    return SignInRecord(
        row[0], row[1], row[2], tuple(s for s in row[3].split(" ") if s), row[4], row[5], row[6]
    )


def get_sign_in(store: Store, company_id: int) -> SignInRecord | None:
    row = store._db.execute(
        f"SELECT {_COLUMNS} FROM sign_ins WHERE company_id=?", (company_id,)
    ).fetchone()
    return _record(row) if row else None


def list_sign_ins(store: Store) -> dict[int, SignInRecord]:
    return {
        r[0]: _record(r) for r in store._db.execute(f"SELECT {_COLUMNS} FROM sign_ins").fetchall()
    }


def save_sign_in(
    store: Store,
    company_id: int,
    issuer: str,
    kind: str,
    scopes: tuple[str, ...],
    account: str | None,
) -> SignInRecord:
    with store._write(Durability.NOW) as db:
        at = _new_sign_in_stamp(db, company_id)
        db.execute(
            "INSERT INTO sign_ins (company_id, issuer, kind, scopes, account, signed_in_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?) ON CONFLICT (company_id) DO UPDATE SET issuer=excluded.issuer,"
            " kind=excluded.kind, scopes=excluded.scopes, account=excluded.account,"
            " signed_in_at=excluded.signed_in_at, updated_at=excluded.updated_at",
            (company_id, issuer, kind, " ".join(scopes), account, at, at),
        )
    record = get_sign_in(store, company_id)
    assert record is not None
    return record


def _new_sign_in_stamp(db: Any, company_id: int) -> str:
    """A new sign-in's signed_in_at: now, but always later than every stamp this Company's
    sign-ins have had, the current one and those its operations' events name (the sign-in an
    operation came with, the one the person vouched for). The stamp is what names a sign-in
    there (agent/store/owning_account.py), so two sign-ins must never share one: not in the same
    microsecond, nor after the clock was set back."""
    from datetime import timedelta

    from poppy_tui.agent.store.connection import parse_stamp
    from poppy_tui.agent.store.owning_account import CONFIRMED, RETURNED_UNDER, SIGN_IN_PREFIX

    at = stamp()
    current = db.execute(
        "SELECT signed_in_at FROM sign_ins WHERE company_id=?", (company_id,)
    ).fetchone()
    named = db.execute(
        "SELECT max(substr(e.detail, ?)) FROM events e JOIN operations o ON o.id = e.operation_row"
        " WHERE o.company_id=? AND e.kind IN (?, ?)",
        (len(SIGN_IN_PREFIX) + 1, company_id, RETURNED_UNDER, CONFIRMED),
    ).fetchone()
    latest = max((row[0] for row in (current, named) if row and row[0]), default=None)
    if latest is not None and at <= latest:
        at = stamp(parse_stamp(latest) + timedelta(microseconds=1))
    return at


def update_scopes(store: Store, company_id: int, scopes: tuple[str, ...]) -> None:
    with store._write(Durability.SOON) as db:
        db.execute(
            "UPDATE sign_ins SET scopes=?, updated_at=? WHERE company_id=?",
            (" ".join(scopes), stamp(), company_id),
        )


def delete_sign_in(store: Store, company_id: int) -> bool:
    with store._write(Durability.NOW) as db:
        return db.execute("DELETE FROM sign_ins WHERE company_id=?", (company_id,)).rowcount > 0
