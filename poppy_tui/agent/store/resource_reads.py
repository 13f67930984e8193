"""The resource an operation changes, as last read from the Company (schema migration 8).

Written by agent/resource_read.py after each read, read by the review and `show`. One row per
operation, replaced by each read: what matters before a decision is the latest read; the
review keeps the one it opened with, to say whether the state changed since."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from poppy_tui.agent.store.connection import StoreBase, parse_stamp, stamp
from poppy_tui.agent.store.durability import Durability


# How a read's `problem` begins when the Company offers no safe read of the resource at all
# (agent/resource_read.py): "no read offered", which is not "couldn't read it" (a failure, a
# timeout) nor "not read yet" (no read stored).
NO_READ_OFFERED = "no read offered"
# The problems stores from before said, with no source, for the same thing.
_OLD_NO_READ = (
    "nowhere to read it",
    "a conversation names no API resource",
    "the Company's OpenAPI offers no GET",
    "the MCP server offers no read tool",
    "the request went elsewhere than the Company's API",
)


def no_read_offered(reason: str) -> str:
    return f"{NO_READ_OFFERED}: {reason}"


@dataclass(frozen=True)
class ResourceRead:
    """`source`: where it was read from (`GET https://…/api/orders/ord_7Hk2`, `MCP get_order
    {"order_id": "ord_7Hk2"}`), empty when there was nowhere to read it, or the read failed
    before it was chosen; `body` the JSON read when `ok`; `problem` our one line on why nothing
    usable came back (beginning NO_READ_OFFERED when there is no safe read at all)."""

    operation_row: int
    revision_id: int | None
    source: str
    read_at: datetime
    ok: bool
    body: Any = None
    problem: str | None = None

    @property
    def state(self) -> str:
        """`read`, `no_read_offered` (nothing safe to read it with) or `failed` (couldn't read it)."""
        if self.ok:
            return "read"
        problem = self.problem or ""
        if problem.startswith(NO_READ_OFFERED) or (
            not self.source and problem.startswith(_OLD_NO_READ)
        ):
            return "no_read_offered"
        return "failed"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "source": self.source,
            "read_at": stamp(self.read_at),
            "ok": self.ok,
            "body": self.body if self.ok else None,
            "problem": self.problem,
            "revision_row": self.revision_id,
        }


class ResourceReadStore(StoreBase):
    def save_resource_read(self, read: ResourceRead) -> None:
        """Kept SOON: a read lost in a crash is read again when the review opens."""
        body = json.dumps(read.body, ensure_ascii=False) if read.ok else None
        self._write_one(
            "INSERT OR REPLACE INTO resource_reads (operation_row, revision_id, source, read_at, ok, body_json, problem)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                read.operation_row,
                read.revision_id,
                read.source,
                stamp(read.read_at),
                int(read.ok),
                body,
                read.problem,
            ),
            Durability.SOON,
        )

    def resource_read(self, operation_row: int) -> ResourceRead | None:
        row = self._db.execute(
            "SELECT revision_id, source, read_at, ok, body_json, problem FROM resource_reads WHERE operation_row=?",
            (operation_row,),
        ).fetchone()
        if row is None:
            return None
        revision_id, source, read_at, ok, body_json, problem = row
        try:
            body = json.loads(body_json) if body_json is not None else None
            at = parse_stamp(read_at)
        except (ValueError, TypeError):
            return None  # a damaged row is no read: the review reads again
        return ResourceRead(operation_row, revision_id, source, at, bool(ok), body, problem)
