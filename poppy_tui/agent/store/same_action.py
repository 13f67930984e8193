"""Operations for the same action as another, whose approval's outcome is not known yet.

Ops 7: the Personal Agent "MUST NOT ask the User to approve a new operation for the same action
until it knows whether the first one was performed". A Company may answer the same request with a
new operation_id (after forgetting the first once its expires_at passed, Ops 7, or because it mints
one per request); poppy-tui then holds the new one: it can't be approved while an earlier
operation answering a request for the same action (protocol.requests.action_key: the same
method, URL and body, tool and arguments, or the same conversation) is approved, being sent, or
sent with an unknown outcome. Read afresh every time, never stored: once the earlier outcome is
known (found out, or resolved by the person), the hold lifts.

In a conversation the words are not the action: "Yes please, go ahead" is said in many
conversations, for many actions, and the Company Agent acts on its reading of the whole
conversation. So a conversation's operations are held only by an earlier one of the same
conversation, and by every one there, whatever words led to it: in the conversation the Company
can offer the same action again under a new operation_id (Ops 7 lets it forget the first), and
poppy-tui has no way to tell it from another. Across conversations nothing is held.
"""

from __future__ import annotations

from typing import NamedTuple

from poppy_tui.agent.store.operations import OperationStore
from poppy_tui.agent.store.records import Status, request_of
from poppy_tui.protocol.requests import (
    ActionKey,
    ApiAction,
    ConversationAction,
    McpAction,
    action_key,
)

# An approval whose outcome is not known: not sent yet, being sent, or sent without a definite answer.
OUTCOME_NOT_KNOWN = (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN)


class EarlierInDoubt(NamedTuple):
    """An earlier operation for the same action whose approval's outcome is not known yet."""

    operation_row: int
    operation_id: str
    status: Status
    request: object  # the equal request (protocol.requests), for the words that name it
    key: ActionKey  # what makes it the same action (protocol.requests.action_key)


class SameActionStore(OperationStore):
    def earlier_in_doubt(self, operation_row: int) -> list[EarlierInDoubt]:
        """The other operations of this one's Company that answered a request equal to one of its
        own and whose approval's outcome is not known yet (OUTCOME_NOT_KNOWN), oldest first."""
        return self.same_action(operation_row, OUTCOME_NOT_KNOWN)

    def same_action_performed(self, operation_row: int) -> list[EarlierInDoubt]:
        """The other operations for the same request (API or MCP) that were performed (approving
        this one would do it again: worth a warning, not a hold). Not a conversation's: an earlier
        operation performed in the same conversation says nothing of what this one does."""
        return [
            e
            for e in self.same_action(operation_row, (Status.PERFORMED,))
            if not isinstance(e.key, ConversationAction)
        ]

    def same_action(self, operation_row: int, statuses: tuple[Status, ...]) -> list[EarlierInDoubt]:
        """The other operations of this one's Company, in one of `statuses`, that answered a
        request whose action_key (protocol.requests) equals that of one of its own, oldest first:
        the same interface and the same method, URL and body, tool and arguments, or conversation."""
        row = self._db.execute(
            "SELECT company_id FROM operations WHERE id=?", (operation_row,)
        ).fetchone()
        if row is None:
            return []
        mine: dict[ActionKey, object] = {}
        for _, _, _, request in self.revision_requests(operation_row):
            key = action_key(request)
            if key is not None:
                mine.setdefault(key, request)
        if not mine:
            return []
        interfaces = sorted({_INTERFACE[type(key)] for key in mine})
        candidates = self._db.execute(
            "SELECT DISTINCT o.id, o.operation_id, o.status, q.request_json FROM requests q"
            " JOIN revisions r ON r.request_id = q.id JOIN operations o ON o.id = r.operation_row"
            f" WHERE q.company_id=? AND o.id<>? AND o.status IN ({','.join('?' * len(statuses))})"
            f" AND q.interface IN ({','.join('?' * len(interfaces))}) ORDER BY o.id",
            (row[0], operation_row, *statuses, *interfaces),
        ).fetchall()
        found: dict[int, EarlierInDoubt] = {}
        for other_row, operation_id, status, request_json in candidates:
            if other_row in found:
                continue
            request = request_of(request_json)
            key = action_key(request)
            if key is not None and key in mine:
                found[other_row] = EarlierInDoubt(
                    other_row, operation_id, Status(status), request, key
                )
        return [found[k] for k in sorted(found)]


_INTERFACE: dict[type, str] = {
    ApiAction: "api",
    McpAction: "mcp",
    ConversationAction: "conversation",
}
