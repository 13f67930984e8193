"""Every operation ever received, a page at a time: the table never holds more than one page."""

from __future__ import annotations

import threading
from typing import Any, TypedDict

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widgets import DataTable, Input, Select, Static

from poppy_tui.agent.store import Store
from poppy_tui.agent.store.records import OperationRow, Status
from poppy_tui.safety.who_asked import short_requester
from poppy_tui.ui.format import (
    IN_PROGRESS_STATUSES,
    INBOX_STATUSES,
    interface_label,
    local_time,
    record_status_label,
    status_label,
)
from poppy_tui.ui.safe import CELL_MAX, cell, company_label, fit_line, wrapped_first_line
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.company_select import CompanySelect
from poppy_tui.ui.widgets.tables import remaining_width, set_columns

PAGE_SIZE = 50
# Typing in the search box waits this long for the next key before querying.
TEXT_DEBOUNCE_SECONDS = 0.25


class HistoryFilters(TypedDict):
    """What the boxes above the table ask the store for (HistoryStore.list_operations)."""

    company_id: int | None
    statuses: tuple[Status, ...] | None
    text: str | None


STATUS_FILTERS: dict[str, tuple[str, tuple[Status, ...] | None]] = {
    "all": ("Any status", None),
    # Not "Waiting for you": that is the pending status's own entry below.
    "waiting": ("Inbox: waiting or withdrawn", INBOX_STATUSES),
    "progress": ("In progress", IN_PROGRESS_STATUSES),
    **{s.value: (status_label(s).capitalize(), (s,)) for s in Status},
}


# What tells records apart comes first; the rest scrolls into view.
COLUMNS = (
    ("updated", "Updated", 23),
    ("company", "Company", 22),
    ("status", "Status", 15),
    ("decision", "Decision", 22),
    ("via", "Via, asked by", 16),  # the interface, and who asked (safety/who_asked.py)
    (
        "summary",
        "Summary",
        0,
    ),  # takes what the others leave; the table scrolls sideways for the rest
    ("decided", "Decided", 23),
    ("outcome", "Outcome", 40),
)
# Narrower than this, each record takes two lines so its summary fits beside who and when:
# rows must read differently at 80 columns, and nothing scrolls sideways.
COMPACT_BELOW = 180
COMPACT_COLUMNS = (
    ("when", "Updated / status", 23),
    ("who", "Company / decision", 20),
    ("summary", "Summary", 0),
)
COMPACT_LINES = 3
# Wider, a summary that doesn't fit its line takes a second one, keeping its beginning and end.
WIDE_LINES = 2
# Decided, then Outcome, join the others only where the summary keeps at least this many cells
# beside them: a wider terminal must never leave the summary narrower than a smaller one does.
OPTIONAL_COLUMNS = ("decided", "outcome")
SUMMARY_BESIDE_OPTIONAL = 60
WIDE_CHROME = 6


def wide_columns(width: int) -> tuple[tuple[str, str, int], ...]:
    """The columns at `width` (not compact): when and how a record ended only where they leave the
    summary room (SUMMARY_BESIDE_OPTIONAL); the record itself has them all."""
    shown = {k for k, _, _ in COLUMNS if k not in OPTIONAL_COLUMNS}
    for optional in OPTIONAL_COLUMNS:
        trying = shown | {optional}
        beside = remaining_width(
            width,
            (w for k, _, w in COLUMNS if k in trying and k != "summary"),
            minimum=0,
            chrome=WIDE_CHROME,
        )
        if beside < SUMMARY_BESIDE_OPTIONAL:
            break
        shown = trying
    return tuple(c for c in COLUMNS if c[0] in shown)


def page_count(total: int) -> int:
    return max(1, -(-total // PAGE_SIZE))


def fitted_widths(
    columns: tuple[tuple[str, str, int], ...], cells: list[dict[str, Text]]
) -> dict[str, int]:
    """Each column but the summary as wide as its label or the page's widest cell, never wider
    than its own width: what a column doesn't use goes to the summary (walk K9: at 250 columns
    Outcome kept 40 cells for "performed" while the summary was cut at 67)."""
    return {
        key: min(
            width, max([cell_len(label)] + [line.cell_len for line in (c[key] for c in cells)])
        )
        for key, label, width in columns
        if key != "summary"
    }


def decision_cell(row: OperationRow, width: int) -> str:
    """The decision with the approved revision's id where the whole id fits, never a cut one
    ("approved 1796609170-w…" read as neither)."""
    whole = decision_text(row)
    if cell_len(fit_line(whole, CELL_MAX)) <= width:
        return whole
    return decision_text(row, with_revision=False)


def decision_text(row: OperationRow, with_revision: bool = True) -> str:
    """The person's decision; the approved revision's id only where there is room for it (at 80
    columns "approved 1796411283…" read as a revision id, not a decision)."""
    status = row.status
    if row.approved_revision:
        return f"approved {row.approved_revision}" if with_revision else "approved"
    if status == Status.DECLINED:
        return "declined"
    if status == Status.WITHDRAWN:
        return "withdrawn"
    return "—"


class HistoryScreen(PoppyScreen):
    TITLE_TEXT = "History"
    NAV_MODE = "history"
    AUTO_FOCUS = "#history-table"
    BINDINGS = [
        Binding("right_square_bracket,pagedown", "next_page", "Next page", id="next_page"),
        Binding("left_square_bracket,pageup", "prev_page", "Prev page", id="prev_page"),
        Binding("slash", "focus_search", "Search", id="search"),
        # Out of the search box, so the global keys are keys again (and not letters in it).
        Binding("escape", "leave_filters", "Leave the box", id="leave_search"),
    ]

    def __init__(self) -> None:
        super().__init__(id="history")
        self.page = 0
        self.total = 0
        self.rows: list[OperationRow] = []
        self._debounce: Timer | None = None
        # Its own connection, used from worker threads only: a text search over 100,000 records
        # takes a few hundred ms, and the event loop must not wait for it.
        self._reader: Store | None = None
        self._reader_lock = threading.Lock()
        self.unmounted = False  # unmounted: no page loader opens a reader or shows a page again
        self.fetching = False

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Horizontal(id="history-filters"):
            yield CompanySelect(prompt="Any Company", id="history-company")
            yield Select(
                [
                    (Content(label), key)
                    for key, (label, _) in STATUS_FILTERS.items()
                    if key != "all"
                ],
                prompt="Any status",
                id="history-status",
            )
            yield Input(
                placeholder="Search summary, operation id or Company  (/)", id="history-search"
            )
        yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="history-pager")
        yield PoppyFooter()

    # ---- filters --------------------------------------------------------------------------

    def _filters(self) -> HistoryFilters:
        company = self.query_one("#history-company", Select).value
        status = self.query_one("#history-status", Select).value
        text = self.query_one("#history-search", Input).value.strip()
        return HistoryFilters(
            company_id=company if isinstance(company, int) else None,
            statuses=STATUS_FILTERS[status][1] if isinstance(status, str) else None,
            text=text or None,
        )

    def on_select_changed(self, event: Select.Changed) -> None:
        self.page = 0
        self.refresh_data()

    def on_input_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self.page = 0
        self._debounce = self.set_timer(TEXT_DEBOUNCE_SECONDS, self.refresh_data)

    def enter_moves_focus_to(self, field: Input) -> tuple[Any, bool] | None:
        # Enter in the search box gives the keys back to the table at once (ui/typed_keys.py).
        if field.id == "history-search":
            return self.query_one("#history-table"), True
        return None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#history-table").focus()

    def action_focus_search(self) -> None:
        self.query_one("#history-search").focus()

    def action_leave_filters(self) -> None:
        self.query_one("#history-table").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_filters":
            return self.focused is not None and self.focused.id in (
                "history-search",
                "history-company",
                "history-status",
            )
        return True

    # ---- paging ---------------------------------------------------------------------------

    @property
    def pages(self) -> int:
        return page_count(self.total)

    def action_next_page(self) -> None:
        if self.page + 1 < self.pages:
            self.page += 1
            self.refresh_data()

    def action_prev_page(self) -> None:
        if self.page > 0:
            self.page -= 1
            self.refresh_data()

    def refresh_data(self) -> None:
        self.query_one("#history-company", CompanySelect).show_companies(
            self.store.list_companies()
        )
        self.fetching = True
        self._load(self._filters(), self.page)

    @work(thread=True, exclusive=True, group="history-page")
    def _load(self, filters: HistoryFilters, page: int) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        # The reader's lock is never held while waiting for the event loop (call_from_thread):
        # on_unmount takes it on the loop, and the two would wait for each other for good.
        with self._reader_lock:
            if self.unmounted:
                return
            if self._reader is None:
                self._reader = Store.open(self.store.path)
            reader = self._reader
            # The page first, the count after: a page costs the same at 1,000,000 records as at
            # 100, counting them grows with the records, and the person wants the rows.
            rows = reader.list_operations(limit=PAGE_SIZE, offset=page * PAGE_SIZE, **filters)
            total: int | None = None
            if not rows and page > 0:  # past the end (filters or records changed): the last page
                total = reader.count_operations(**filters)
                page = min(page, page_count(total) - 1)
                rows = reader.list_operations(limit=PAGE_SIZE, offset=page * PAGE_SIZE, **filters)
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._show, rows, total, page)
        if total is None:
            with self._reader_lock:
                if self.unmounted:
                    return  # the screen closed meanwhile, and its reader with it
                total = self._reader.count_operations(**filters)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_total, total)

    def _show_total(self, total: int) -> None:
        if self.unmounted:
            return
        self.total = total
        self._show_pager(total)
        self.fetching = False

    def _show_pager(self, total: int | None) -> None:
        first = self.page * PAGE_SIZE + 1 if self.rows else 0
        of = str(total) if total is not None else "…"
        if total == 0:
            # Not a blank table and "0–0 of 0" (walk K14): say why it is empty.
            filtered = any(value is not None for value in self._filters().values())
            self.query_one("#history-pager", Static).update(
                Content(
                    "Nothing matches these filters: change the Company, the status or the "
                    "search (/) to see more."
                    if filtered
                    else "No operations yet: they appear here once a Company asks for an approval."
                )
            )
            return
        self.query_one("#history-pager", Static).update(
            Content(
                f"{first}–{self.page * PAGE_SIZE + len(self.rows)} of {of}   "
                f"page {self.page + 1} of {page_count(total) if total is not None else '…'}   "
                "([ and ] turn pages; Enter shows the full record)"
            )
        )

    def _show(self, rows: list[OperationRow], total: int | None, page: int) -> None:
        if self.unmounted:
            return  # a page that arrived after the screen closed: nothing left to show it in
        self.rows, self.page = rows, page
        if total is not None:
            self.total = total
        table = self.query_one("#history-table", DataTable)
        selected = table.cursor_row
        width = self.app.size.width
        if width < COMPACT_BELOW:
            self._show_compact(table, rows, width)
        else:
            self._show_wide(table, rows, width)
        if rows:
            table.move_cursor(row=min(selected, len(rows) - 1))
        self._show_pager(total)
        if total is not None:
            self.fetching = False

    def _show_compact(self, table: DataTable, rows: list[OperationRow], width: int) -> None:
        columns = COMPACT_COLUMNS
        summary = remaining_width(width, (w for k, _, w in columns if k != "summary"), chrome=4)
        set_columns(
            table, [(k, label, summary if k == "summary" else w) for k, label, w in columns]
        )
        table.clear()
        for row in rows:
            table.add_row(
                Text.assemble(
                    cell(local_time(row.updated_at), 23), "\n", cell(record_status_label(row), 23)
                ),
                Text.assemble(
                    cell(
                        company_label(row.company_name, row.company_domain, CELL_MAX).marked_name,
                        20,
                    ),
                    "\n",
                    cell(decision_text(row, with_revision=False), 20),
                    "\n",
                    cell(f"via {self._via(row)}", 20),
                ),
                Text(wrapped_first_line(row.summary, summary, COMPACT_LINES)),
                key=str(row.id),
                height=COMPACT_LINES,
            )

    def _show_wide(self, table: DataTable, rows: list[OperationRow], width: int) -> None:
        columns = wide_columns(width)
        cells = [
            {
                key: cell(text, w)
                for key, text, w in (
                    (k, self._wide_value(row, k, w), w) for k, _, w in columns if k != "summary"
                )
            }
            for row in rows
        ]
        widths = fitted_widths(columns, cells)
        summary = remaining_width(width, widths.values(), minimum=30, chrome=WIDE_CHROME)
        set_columns(table, [(k, label, widths.get(k, summary)) for k, label, _ in columns])
        table.clear()
        for row, shown in zip(rows, cells, strict=True):
            text = wrapped_first_line(row.summary, summary, WIDE_LINES)
            table.add_row(
                *(Text(text) if k == "summary" else shown[k] for k, _, _ in columns),
                key=str(row.id),
                height=text.count("\n") + 1,
            )

    @staticmethod
    def _via(row: OperationRow) -> str:
        return f"{interface_label(row.interface)}, {short_requester(row.origin, row.requester)}"

    def _wide_value(self, row: OperationRow, key: str, width: int) -> str:
        if key == "updated":
            return local_time(row.updated_at)
        if key == "company":
            return company_label(row.company_name, row.company_domain, CELL_MAX).marked_name
        if key == "status":
            return record_status_label(row)
        if key == "decision":
            return decision_cell(row, width)
        if key == "via":
            return self._via(row)
        if key == "decided":
            return local_time(row.decided_at) if row.decided_at else "—"
        return row.outcome_detail or "—"

    def on_unmount(self) -> None:
        self.unmounted = True
        # Waits at most for the one query a page loader may be running (it never holds the lock
        # while it waits for the event loop).
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.poppy.open_history_detail(int(event.row_key.value))
