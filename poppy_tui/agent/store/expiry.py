"""Recording expiries: an operation whose revision expired before it was sent is expired.

Its own part of the store (the dispatcher's side, DispatchStore, includes it) because `pending`
records expiries before it lists, and must not load the records and protocol modules for it."""

from __future__ import annotations

from poppy_tui.agent.store.connection import StoreBase, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.status import Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime


class ExpiryStore(StoreBase):
    def expire_due(self, now: datetime | None = None) -> list[int]:
        """Undecided (or approved, never sent) operations whose revision expired."""
        at = stamp(now)
        query = (
            "SELECT o.id FROM operations o JOIN revisions r ON r.id = o.current_revision_id"
            " WHERE o.status IN (?,?,?) AND r.expires_at <= ?"
        )
        params = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED, at)
        # The dispatcher asks on every pass, and looking means reading every open operation (50,000
        # pending took 150 ms, twice a second, far over the idle-CPU target in docs/benchmarks.md).
        # So the soonest expiry is kept with the store's change token: until any connection
        # commits, nothing can expire sooner.
        token = self.change_token()
        known: tuple[object, str | None] | None = getattr(self, "_soonest_expiry", None)
        if known is None or known[0] != token:
            soonest = self._db.execute(
                "SELECT min(r.expires_at) FROM operations o JOIN revisions r ON r.id = o.current_revision_id"
                " WHERE o.status IN (?,?,?)",
                params[:3],
            ).fetchone()[0]
            known = self._soonest_expiry = (token, soonest)
        if known[1] is None or known[1] > at:
            return []
        # Looked up outside a write transaction first: an empty BEGIN IMMEDIATE would still take
        # the lock from other processes.
        if not self._db.execute(query, params).fetchone():
            return []
        with self._write(Durability.SOON) as db:
            rows = db.execute(query, params).fetchall()
            for (op_row,) in rows:
                db.execute(
                    "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, updated_at=? WHERE id=?",
                    (Status.EXPIRED, at, op_row),
                )
                self._event(op_row, "expired")
        return [r[0] for r in rows]
