"""What a store holds, read through the Store's own API as plain JSON: every Company, operation,
revision, decision, attempt and history event, and every conversation's messages.

The same function reads an old store with the code that made it (make.py writes vN.json beside
vN.sql) and the same store once today's code has upgraded it (test_old_stores.py): what the old
code read must still be there, field for field. Only attributes are read (no import of poppy_tui
here), so it runs against the Store of any version; a field that version did not have is left out.
"""

from __future__ import annotations

import json
from typing import Any

# The fields read of each record; a field a version doesn't have is not written.
COMPANY = ("base_url", "domain", "name", "supports_operations", "user_id", "session_id")
OPERATION = (
    "operation_id",
    "interface",
    "session_id",
    "status",
    "approved_revision_id",
    "send_after",
    "idempotency_key",
    "next_attempt_at",
    "attempt_count",
    "outcome",
    "outcome_detail",
    "created_at",
    "request_id",
    "account_owned",
    "waiting_sign_in",
    "account",
)
REVISION = (
    "id",
    "revision",
    "request_id",
    "summary",
    "terms",
    "expires_at_text",
    "raw",
    "carrier_text",
    "received_at",
    "seen_at",
    "session_id",
)
DECISION = ("id", "revision_id", "decision", "decided_at", "actor", "note")
ATTEMPT = (
    "id",
    "revision_id",
    "number",
    "idempotency_key",
    "started_at",
    "finished_at",
    "outcome",
    "http_status",
    "response",
    "detail",
    "owner",
)
EVENT = ("id", "at", "kind", "detail")


def _plain(value: Any) -> Any:
    """JSON's view of a value: enums by value, the rest as json.dumps would write it."""
    if hasattr(value, "value") and isinstance(value.value, str):
        return value.value
    return json.loads(json.dumps(value, default=str))


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: _plain(getattr(record, name)) for name in names if hasattr(record, name)}


def operation_rows(store: Any) -> list[int]:
    """Every operation's row, whatever its state (the store lists at most 200 a page)."""
    rows: list[int] = []
    while True:
        page = store.list_operations(None, limit=200, offset=len(rows), newest_first=False)
        rows += [row.id for row in page]
        if len(page) < 200:
            return rows


def snapshot(store: Any, conversations: list[int]) -> dict[str, Any]:
    """The store's records as JSON (see the module's docstring). `conversations`: the rows of the
    conversations whose messages to read."""
    from poppy_tui.protocol.requests import request_to_json  # of the code reading the store

    companies = {}
    for company_id in sorted({store.get_operation(r).company.id for r in operation_rows(store)}):
        companies[str(company_id)] = _fields(store.get_company(company_id), COMPANY)
    operations = {}
    for row in operation_rows(store):
        record = store.get_operation(row)
        entry = _fields(record, OPERATION)
        entry["company_id"] = record.company.id
        entry["current_revision"] = record.current.revision
        entry["request"] = json.loads(request_to_json(store.get_request(record.request_id)[0]))
        entry["revisions"] = [_fields(r, REVISION) for r in store.revisions(row)]
        entry["decisions"] = [_fields(d, DECISION) for d in store.decisions(row)]
        entry["attempts"] = [_fields(a, ATTEMPT) for a in store.attempts(row)]
        entry["events"] = [_fields(e, EVENT) for e in store.events(row)]
        operations[str(row)] = entry
    messages = {str(c): _plain(store.messages(c)) for c in conversations}
    return {"companies": companies, "operations": operations, "messages": messages}
