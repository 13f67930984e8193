"""The inbox tables: one row per operation, with a live expiry column."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from poppy_tui.agent.store.records import OperationRow, Status
from poppy_tui.ui.format import countdown, interface_label, parse_stamp, status_label
from poppy_tui.ui.safe import cell, first_line_text
from poppy_tui.ui.widgets.countdown import app_now
from poppy_tui.ui.widgets.discrepancy_panel import badge_counts
from poppy_tui.ui.widgets.tables import remaining_width, set_columns

# Content widths of every column but the summary, which takes what is left.
WIDTHS = {"company": 20, "checks": 16, "expires": 10, "amount": 12, "via": 4, "status": 26}
# "conversation" would cost the summary eight cells on every row.
VIA = {"api": "API", "mcp": "MCP", "conversation": "Chat"}

PENDING_COLUMNS = (
    ("company", "Company"),
    ("checks", "Checks"),
    ("expires", "Expires in"),
    ("amount", "Amount"),
    ("via", "Via"),
    ("summary", "Summary"),
)
PROGRESS_COLUMNS = (
    ("company", "Company"),
    ("status", "Status"),
    ("amount", "Amount"),
    ("via", "Via"),
    ("summary", "Summary"),
)


@dataclass(frozen=True)
class InboxItem:
    row: OperationRow
    amount: str | None = None
    findings: tuple[Any, ...] = field(default=())
    send_after: str | None = None  # for the grace countdown of approved operations
    checked: bool = True  # False: its checks are still being computed (amount and badge to follow)


class OperationTable(DataTable):
    """Rows are keyed by the operation's row number, so refreshes keep the cursor in place."""

    DEFAULT_CLASSES = "operation-table"

    def __init__(self, columns: tuple[tuple[str, str], ...] = PENDING_COLUMNS, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.column_keys = tuple(key for key, _ in columns)
        self._labels = columns
        self.items: dict[str, InboxItem] = {}
        # Sanitising a hostile megabyte summary takes tens of ms; rows are rebuilt on every change.
        self._summaries: dict[tuple[int, str, int, bool], Text] = {}

    def summary_chars(self) -> int:
        return remaining_width(self.app.size.width, (WIDTHS[k] for k in self.column_keys if k != "summary"))

    def show_items(self, items: list[InboxItem]) -> None:
        selected = self.selected_row_key()
        summary = self.summary_chars()
        set_columns(self, [(k, label, summary if k == "summary" else WIDTHS[k]) for k, label in self._labels])
        self.clear()
        self.items = {}
        for item in items:
            key = str(item.row.id)
            self.items[key] = item
            self.add_row(*self._cells(item), key=key)
        if selected in self.items:
            self.move_cursor(row=self.get_row_index(selected))
        shown = {item.row.id for item in items}
        self._summaries = {k: v for k, v in self._summaries.items() if k[0] in shown}
        # One line per row and the header; max-height in the stylesheet caps it. (height: auto
        # would follow the rows only after a relayout that adding rows doesn't trigger.)
        self.styles.height = len(items) + 1

    def visible_keys(self) -> list[str]:
        if not self.display or not self.row_count:
            return []
        first = max(0, int(self.scroll_y))
        # The header takes a line, so this is one row more than fits: no row is ever missed.
        return [row.key.value for row in self.ordered_rows[first:first + max(1, self.size.height)] if row.key.value]

    def show_checks(self, batch: dict[int, Any]) -> None:
        """Fill in the badge and amount of rows whose checks just arrived (StoredChecks by row)."""
        for row, checked in batch.items():
            key = str(row)
            item = self.items.get(key)
            if item is None:
                continue
            item = replace(item, amount=checked.amount, findings=checked.findings, checked=True)
            self.items[key] = item
            if "checks" in self.column_keys:
                self.update_cell(key, "checks", self._checks_cell(item))
            if "amount" in self.column_keys:
                self.update_cell(key, "amount", cell(item.amount or "—", WIDTHS["amount"]))

    def selected_row_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None

    def tick(self) -> None:
        """Move the countdowns on without rebuilding rows: only those on screen, so idle cost
        doesn't grow with the inbox (a row scrolled into view catches up at the next tick)."""
        now = app_now(self)
        for key in self.visible_keys():
            item = self.items.get(key)
            if item is None:
                continue
            if "expires" in self.column_keys:
                self._update_if_changed(key, "expires", self._expires_cell(item, now))
            if "status" in self.column_keys and item.row.status == Status.APPROVED:
                self._update_if_changed(key, "status", self._status_cell(item, now))

    def _update_if_changed(self, key: str, column: str, value: Text) -> None:
        # "3d 4h" reads the same for an hour: redrawing it every second is idle CPU for nothing.
        try:
            if self.get_cell(key, column) == value:
                return
        except Exception:  # the row went away between the refresh and this tick
            return
        self.update_cell(key, column, value)

    def _cells(self, item: InboxItem) -> list[Text]:
        now = app_now(self)
        row = item.row
        makers = {
            "company": lambda: cell(row.company_name, WIDTHS["company"]),
            "checks": lambda: self._checks_cell(item),
            "expires": lambda: self._expires_cell(item, now),
            "amount": lambda: cell(item.amount or ("—" if item.checked else "…"), WIDTHS["amount"]),
            "via": lambda: Text(VIA.get(row.interface, interface_label(row.interface))),
            "status": lambda: self._status_cell(item, now),
            "summary": lambda: self._summary_cell(item),
        }
        return [makers[key]() for key in self.column_keys]

    def _summary_cell(self, item: InboxItem) -> Text:
        withdrawn = item.row.status == Status.WITHDRAWN
        width = self.summary_chars()
        key = (item.row.id, item.row.revision, width, withdrawn)
        cached = self._summaries.get(key)
        if cached is None:
            if withdrawn:
                cached = Text("(withdrawn) ", style="italic")
                cached.append_text(first_line_text(item.row.summary, width - 12))
            else:
                cached = first_line_text(item.row.summary, width)
            self._summaries[key] = cached
        return cached

    def _expires_cell(self, item: InboxItem, now: datetime) -> Text:
        left = (item.row.expires_at - now).total_seconds()
        if left <= 0:
            return Text("EXPIRED", style=f"bold {self._color('error')}")
        style = f"bold {self._color('warning')}" if left < 60 else ""
        return Text(countdown(left), style=style)

    def _status_cell(self, item: InboxItem, now: datetime) -> Text:
        status = item.row.status
        if status == Status.APPROVED:
            send_after = parse_stamp(item.send_after)
            if send_after is not None and send_after > now:
                return Text(f"approved, sends in {countdown((send_after - now).total_seconds())}")
        if status == Status.OUTCOME_UNKNOWN:
            return Text("OUTCOME UNKNOWN: check", style=f"bold {self._color('warning')}")
        if status == Status.SENDING:
            return Text("sending…")
        return Text(status_label(status))

    def _checks_cell(self, item: InboxItem) -> Text:
        if not item.checked:
            return Text("checking…", style="dim")
        dangers, warnings = badge_counts(item.findings)
        if dangers:
            text = f"DANGER {dangers}" + (f" WARN {warnings}" if warnings else "")
            return Text(text, style=f"bold {self._color('error')}")
        if warnings:
            return Text(f"WARN {warnings}", style=f"bold {self._color('warning')}")
        return Text("ok", style="dim")

    def _color(self, name: str) -> str:
        # Rich Text can't resolve $variables, so take the theme's value (themes change colours, not meaning).
        try:
            return self.app.theme_variables.get(name, "red")
        except Exception:
            return "red"
