"""Discrepancy checks kept with each revision (schema migration 5), so lists show badges
without recomputing them: written once per revision and checker version, read by row."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable, Sequence

from poppy_tui.agent.store.connection import StoreBase, stamp
from poppy_tui.agent.store.durability import Durability


@dataclass(frozen=True)
class StoredFinding:
    """A finding as stored: what the badge and a list need (the review screen checks afresh)."""

    severity: str
    code: str
    message: str
    field: str | None = None


@dataclass(frozen=True)
class StoredChecks:
    revision_id: int
    amount: str | None
    findings: tuple[StoredFinding, ...]


class CheckStore(StoreBase):
    def current_checks(
        self, operation_rows: Sequence[int], checker_version: int
    ) -> dict[int, StoredChecks]:
        """Stored checks of these operations' current revisions, by operation row; rows whose
        current revision has none of `checker_version` are absent (compute them)."""
        found: dict[int, StoredChecks] = {}
        rows = list(operation_rows)
        for start in range(0, len(rows), 900):  # well under SQLite's limit on bound parameters
            chunk = rows[start : start + 900]
            for op_row, revision_id, amount, findings_json in self._db.execute(
                f"""SELECT o.id, c.revision_id, c.amount, c.findings_json
                    FROM operations o JOIN revision_checks c ON c.revision_id = o.current_revision_id
                    WHERE o.id IN ({",".join("?" * len(chunk))}) AND c.checker_version = ?""",
                (*chunk, checker_version),
            ).fetchall():
                found[op_row] = StoredChecks(revision_id, amount, _findings(findings_json))
        return found

    def save_checks(
        self, checked: Iterable[tuple[int, str | None, Sequence[Any]]], checker_version: int
    ) -> None:
        """(revision_id, amount, findings) for each revision, in one transaction. A cache of
        derived data, so LAZY: a crash loses only work that is done again."""
        rows = [
            (
                revision_id,
                checker_version,
                amount,
                json.dumps(
                    [[f.severity, f.code, f.message, getattr(f, "field", None)] for f in findings]
                ),
                stamp(),
            )
            for revision_id, amount, findings in checked
        ]
        if not rows:
            return
        with self._write(Durability.LAZY) as db:
            for values in rows:
                db.execute(
                    "INSERT OR REPLACE INTO revision_checks (revision_id, checker_version, amount, findings_json,"
                    " checked_at) VALUES (?, ?, ?, ?, ?)",
                    values,
                )


def _findings(text: str) -> tuple[StoredFinding, ...]:
    try:
        return tuple(
            StoredFinding(str(s), str(c), str(m), f if isinstance(f, str) else None)
            for s, c, m, f in json.loads(text)
        )
    except (ValueError, TypeError):
        # A damaged cache row must not hide a danger: say the checks couldn't be read.
        return (
            StoredFinding(
                "danger", "check_failed", "poppy could not read the stored checks of this revision."
            ),
        )
