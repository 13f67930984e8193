"""Operations for the same action as another, whose approval's outcome is not known yet.

Ops 7: the Personal Agent "MUST NOT ask the User to approve a new operation for the same action
until it knows whether the first one was performed". A Company may answer the same request with a
new operation_id (after forgetting the first once its expires_at passed, Ops 7, or because it mints
one per request); poppy-tui then holds the new one: it can't be approved while an earlier
operation answering an equal request (protocol.requests.action_key) is approved, being sent, or
sent with an unknown outcome. Read afresh every time, never stored: once the earlier outcome is
known (found out, or resolved by the person), the hold lifts.
"""

from __future__ import annotations

from typing import NamedTuple

from poppy_tui.agent.store.operations import OperationStore
from poppy_tui.agent.store.records import Status, request_of
from poppy_tui.protocol.requests import action_key

# An approval whose outcome is not known: not sent yet, being sent, or sent without a definite answer.
OUTCOME_NOT_KNOWN = (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN)


class EarlierInDoubt(NamedTuple):
    """An earlier operation for the same action whose approval's outcome is not known yet."""

    operation_row: int
    operation_id: str
    status: Status
    request: object  # the equal request (protocol.requests), for the words that name it


class SameActionStore(OperationStore):
    def earlier_in_doubt(self, operation_row: int) -> list[EarlierInDoubt]:
        """The other operations of this one's Company that answered a request equal to one of its
        own and whose approval's outcome is not known yet (OUTCOME_NOT_KNOWN), oldest first."""
        return self.same_action(operation_row, OUTCOME_NOT_KNOWN)

    def same_action_performed(self, operation_row: int) -> list[EarlierInDoubt]:
        """The other operations for the same action that were performed (approving this one would
        do it again: worth a warning, not a hold)."""
        return self.same_action(operation_row, (Status.PERFORMED,))

    def same_action(self, operation_row: int, statuses: tuple[Status, ...]) -> list[EarlierInDoubt]:
        """The other operations of this one's Company, in one of `statuses`, that answered a
        request equal to one of its own (protocol.requests.action_key), oldest first."""
        row = self._db.execute(
            "SELECT company_id FROM operations WHERE id=?", (operation_row,)
        ).fetchone()
        if row is None:
            return []
        mine = {
            key: request
            for _, _, _, request in self.revision_requests(operation_row)
            if (key := action_key(request)) is not None
        }
        if not mine:
            return []
        placeholders = ",".join("?" * len(statuses))
        # API and MCP requests are stored canonically (request_to_json: sorted keys, the method as
        # sent, upper case), so equal actions have equal JSON; conversation words are compared here.
        candidates = (
            self._db.execute(
                "SELECT DISTINCT o.id, o.operation_id, o.status, q.request_json FROM requests q"
                " JOIN revisions r ON r.request_id = q.id JOIN operations o ON o.id = r.operation_row"
                f" WHERE q.company_id=? AND o.id<>? AND o.status IN ({placeholders})"
                " AND q.interface = ? ORDER BY o.id",
                (row[0], operation_row, *statuses, "conversation"),
            ).fetchall()
            if any(k.startswith('["conversation"') for k in mine)
            else []
        )
        api_mcp = [k for k in mine if not k.startswith('["conversation"')]
        if api_mcp:
            from poppy_tui.protocol.requests import request_to_json

            jsons = [request_to_json(mine[k]) for k in api_mcp]
            candidates += self._db.execute(
                "SELECT DISTINCT o.id, o.operation_id, o.status, q.request_json FROM requests q"
                " JOIN revisions r ON r.request_id = q.id JOIN operations o ON o.id = r.operation_row"
                f" WHERE q.company_id=? AND o.id<>? AND o.status IN ({placeholders})"
                f" AND q.request_json IN ({','.join('?' * len(jsons))}) ORDER BY o.id",
                (row[0], operation_row, *statuses, *jsons),
            ).fetchall()
        found: dict[int, EarlierInDoubt] = {}
        for other_row, operation_id, status, request_json in candidates:
            if other_row in found:
                continue
            request = request_of(request_json)
            if action_key(request) in mine:
                found[other_row] = EarlierInDoubt(other_row, operation_id, Status(status), request)
        return [found[k] for k in sorted(found)]
