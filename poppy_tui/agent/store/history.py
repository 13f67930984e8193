"""Lists and counts of operations, filtered, for the TUI's tables and the CLI."""

from __future__ import annotations

from poppy_tui.agent.store.connection import StoreBase, parse_stamp
from poppy_tui.agent.store.status import OperationRow, Status, loads

TYPE_CHECKING = False  # typing is not imported on `pending`'s path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Iterable


# How much of each summary soonest_to_expire reads: enough for its first line's first 400
# characters (what first_lines_apart compares) unless blank lines push that line further.
SUMMARY_HEAD = 4000


class HistoryStore(StoreBase):
    """Filtered lists of operations."""

    def list_operations(
        self,
        statuses: Iterable[Status | str] | None = None,
        company_id: int | None = None,
        text: str | None = None,
        limit: int = 200,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[OperationRow]:
        page, params, order = self._page(statuses, company_id, text, limit, offset, newest_first)
        return self._rows(f"o.id IN ({page})", params, order)

    def _page(
        self,
        statuses: Iterable[Status | str] | None,
        company_id: int | None,
        text: str | None,
        limit: int,
        offset: int,
        newest_first: bool,
    ) -> tuple[str, tuple[Any, ...], str]:
        """The SELECT of a page's ids, its parameters, and the ORDER BY that keeps its order."""
        where, params = self._filters(statuses, company_id, text)
        order = "DESC" if newest_first else "ASC"
        # The page's rows are chosen first (index order, LIMIT) and only then are their columns
        # computed: SQLite evaluates every result column of every candidate before sorting, so
        # with the subqueries of _rows in the sort, a page of 500 out of 50,000 pending cost ~0.4 s.
        # Joined only when the text filter needs them (every operation has its Company and a
        # current revision): joining 50,000 candidates just to sort them doubled the cost.
        joins = (
            " JOIN companies c ON c.id = o.company_id JOIN revisions r ON r.id = o.current_revision_id"
            if text
            else ""
        )
        page = (
            f"SELECT o.id FROM operations o{joins} {where}"
            f" ORDER BY o.updated_at {order}, o.id {order} LIMIT ? OFFSET ?"
        )
        return page, (*params, limit, offset), f"o.updated_at {order}, o.id {order}"

    def soonest_to_expire(
        self, statuses: Iterable[Status | str], first: int, limit: int = 200
    ) -> tuple[list[OperationRow], int, list[str]]:
        """The `first` rows of list_operations(statuses, limit=limit) sorted soonest to expire
        first (then by row), how many that list holds, and the beginning of each one's summary
        (for telling alike summaries apart): what the inbox's first frame shows, without building
        every row of the list (the first-frame target, docs/benchmarks.md). The page is
        list_operations' own (_page)."""
        page, params, _ = self._page(statuses, None, None, limit, 0, True)
        candidates = self._db.execute(
            f"SELECT o.id, r.expires_at, substr(r.summary, 1, {SUMMARY_HEAD}) FROM operations o"
            f" JOIN revisions r ON r.id = o.current_revision_id WHERE o.id IN ({page})",
            params,
        ).fetchall()
        # Sorted as the inbox sorts its rows: by the parsed time, then the row.
        candidates.sort(key=lambda c: (parse_stamp(c[1]), c[0]))
        chosen = [c[0] for c in candidates[: max(0, first)]]
        rows = (
            self._rows(f"o.id IN ({','.join('?' * len(chosen))})", chosen, "o.id") if chosen else []
        )
        by_id = {row.id: row for row in rows}
        return [by_id[i] for i in chosen if i in by_id], len(candidates), [c[2] for c in candidates]

    def _rows(self, condition: str, params: Any, order: str) -> list[OperationRow]:
        rows = self._db.execute(
            f"""
            SELECT o.id, o.company_id, c.name, c.domain, o.operation_id,
                   (SELECT json_extract(q.request_json, '$.interface') FROM requests q WHERE q.id = r.request_id),
                   o.status,
                   r.revision, r.summary, r.terms_json, r.expires_at,
                   (SELECT count(*) FROM revisions rr WHERE rr.operation_row = o.id),
                   o.created_at, o.updated_at,
                   (SELECT max(d.decided_at) FROM decisions d WHERE d.operation_row = o.id),
                   (SELECT ar.revision FROM revisions ar WHERE ar.id = o.approved_revision_id),
                   o.outcome_detail, o.waiting_sign_in
            FROM operations o
            JOIN companies c ON c.id = o.company_id
            JOIN revisions r ON r.id = o.current_revision_id
            WHERE {condition}
            ORDER BY {order}
            """,
            params,
        ).fetchall()
        return [
            OperationRow(
                id=r[0],
                company_id=r[1],
                company_name=r[2],
                company_domain=r[3],
                operation_id=r[4],
                interface=r[5],
                status=Status(r[6]),
                revision=r[7],
                summary=r[8],
                terms=loads(r[9]),
                expires_at=parse_stamp(r[10]),
                revision_count=r[11],
                created_at=r[12],
                updated_at=r[13],
                decided_at=r[14],
                approved_revision=r[15],
                outcome_detail=r[16],
                waiting_sign_in=r[17],
            )
            for r in rows
        ]

    def latest_update(self) -> str:
        """The newest operation's updated_at ("" with none): one step down an index. What was
        updated after it is news to a watcher that started then (ui/notifications.py)."""
        row = self._db.execute("SELECT max(updated_at) FROM operations").fetchone()
        return row[0] or ""

    def has_companies(self) -> bool:
        """Whether any Company is added (and not removed): with none, an empty inbox says how to
        begin. Here, on the read side the inbox has before its first frame (store/reader.py)."""
        return bool(
            self._db.execute(
                "SELECT EXISTS (SELECT 1 FROM companies WHERE removed_at IS NULL)"
            ).fetchone()[0]
        )

    def count_operations(
        self,
        statuses: Iterable[Status | str] | None = None,
        company_id: int | None = None,
        text: str | None = None,
    ) -> int:
        where, params = self._filters(statuses, company_id, text)
        counted: int = self._db.execute(
            f"SELECT count(*) FROM operations o JOIN companies c ON c.id = o.company_id"
            f" JOIN revisions r ON r.id = o.current_revision_id {where}",
            params,
        ).fetchone()[0]
        return counted

    @staticmethod
    def _filters(
        statuses: Iterable[Status | str] | None, company_id: int | None, text: str | None
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if statuses is not None:
            values = [str(Status(s)) for s in statuses]
            clauses.append(f"o.status IN ({','.join('?' * len(values))})" if values else "0")
            params.extend(values)
        if company_id is not None:
            clauses.append("o.company_id = ?")
            params.append(company_id)
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append(
                "(r.summary LIKE ? ESCAPE '\\' OR o.operation_id LIKE ? ESCAPE '\\' OR c.name LIKE ? ESCAPE '\\')"
            )
            params.extend([pattern] * 3)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params
