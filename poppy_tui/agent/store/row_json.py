"""Operations listed as JSON text, one line each, written by SQLite: what `pending --json` prints.

`pending --json` with 10,000 operations waiting spent ~90% of its time in Python building a
row tuple, a dict and an indented JSON text for each (the indented form runs json's pure-Python
encoder). SQLite's own JSON functions (json_object, in C) write each line as the statement
steps; Python only splices in the terms and checks the line is ASCII. The shape is the one
cli/output.py's `row_json` gives (docs/cli.md, "pending --json and history --json"), key for key
and byte for byte as `json.dumps(row_json(row), ensure_ascii=True, separators=(",", ":"))`
spells it: tests/cli/test_pending_json.py holds the two to that.
"""

from __future__ import annotations

import json

from poppy_tui.agent.store.connection import StoreBase
from poppy_tui.agent.store.status import Status

TYPE_CHECKING = False  # typing is not imported on `pending`'s path (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# SQLite escapes '"', '\' and the characters below U+0020 in JSON strings exactly as Python's
# json does; characters from U+007F up it leaves as they are, and `ensure_ascii` (docs/cli.md:
# JSON output is ASCII-escaped) is done in Python for the lines that hold any.
#
# The terms go in between the two objects as stored: the revision's terms_json is the canonical
# JSON text json.dumps wrote when the operation arrived (protocol/jsonlimits.py canonical_json),
# which is what loading it and dumping it again gives. Not run through SQLite's json(): it
# refuses (SQLite 3.41 and older) or rewrites (3.42 and newer) the NaN or Infinity Python's json
# reads and writes, and which it does depends on the SQLite Python was built with.
_HEAD = """json_object(
    'id', o.id, 'operation_id', o.operation_id,
    'company', json_object('id', o.company_id, 'name', c.name, 'domain', c.domain),
    'interface', (SELECT q.interface FROM requests q WHERE q.id = r.request_id),
    'status', o.status, 'summary', r.summary)"""
# expires_at as cli/output.py's utc_text writes it: the stored stamp is UTC, fixed width
# ("2026-12-04T18:57:04.386595Z", connection.stamp), so its first 19 characters and a "Z".
_TAIL = """json_object(
    'expires_at', substr(r.expires_at, 1, 19) || 'Z', 'revision', r.revision,
    'revision_count', (SELECT count(*) FROM revisions rr WHERE rr.operation_row = o.id),
    'approved_revision', (SELECT ar.revision FROM revisions ar WHERE ar.id = o.approved_revision_id),
    'created_at', o.created_at, 'updated_at', o.updated_at,
    'decided_at', (SELECT max(d.decided_at) FROM decisions d WHERE d.operation_row = o.id),
    'outcome_detail', o.outcome_detail, 'waiting_sign_in', o.waiting_sign_in,
    'requested_by', (SELECT json_object('origin', q.origin, 'agent', q.requester)
                     FROM requests q WHERE q.id = r.request_id))"""

# Rows fetched (and lines handed on) at a time: the output is written as it is read, so 10,000
# operations never sit in memory as one text.
BATCH = 512

_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


class RowJsonStore(StoreBase):
    """Operations as the JSON lines `pending --json` prints."""

    def operation_json_lines(
        self, statuses: Iterable[Status | str], newest_first: bool = False
    ) -> Iterator[list[str]]:
        """Every operation in one of `statuses`, in list_operations' order (by updated_at, then
        row), as batches of one-line JSON objects, ASCII only. One statement: one snapshot."""
        values = [str(Status(s)) for s in statuses]
        if not values:
            return
        order = "DESC" if newest_first else "ASC"
        # The ORDER BY sorts the finished lines (6 MB for 10,000 operations): past the page cache
        # SQLite's sorter spills them to a temporary file, written and read back (~15% of the
        # statement). This connection's temporary data stays in memory instead.
        self._db.execute("PRAGMA temp_store=MEMORY")
        cursor = self._db.execute(
            f"SELECT {_HEAD}, r.terms_json, {_TAIL} FROM operations o"
            " JOIN companies c ON c.id = o.company_id JOIN revisions r ON r.id = o.current_revision_id"
            f" WHERE o.status IN ({','.join('?' * len(values))})"
            f" ORDER BY o.updated_at {order}, o.id {order}",
            values,
        )
        while rows := cursor.fetchmany(BATCH):
            lines = [
                f'{head[:-1]},"terms":{"null" if terms is None else terms},{tail[1:]}'
                for head, terms, tail in rows
            ]
            for index, line in enumerate(lines):
                if not line.isascii() or "\x7f" in line:  # json's ensure_ascii escapes DEL too
                    lines[index] = _ascii(json.loads(line))
            yield lines
