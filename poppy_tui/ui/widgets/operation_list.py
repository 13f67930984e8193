"""The inbox tables: one row per operation, with a live expiry column."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from datetime import datetime
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from poppy_tui.agent.store.status import OperationRow, Status
from poppy_tui.ui.format import countdown, interface_label, parse_stamp, status_label
from poppy_tui.ui.safe import CELL_MAX, cell, company_label, first_lines_apart, wrapped_first_line
from poppy_tui.ui.widgets.countdown import app_now
from poppy_tui.ui.widgets.discrepancy_panel import badge_counts
from poppy_tui.ui.widgets.tables import remaining_width, set_columns

# Content widths of every column but the summary, which takes what is left.
WIDTHS = {"company": 20, "checks": 16, "expires": 10, "amount": 12, "via": 4, "status": 26}
# Below this many columns the table is laid out for the width on purpose: Checks and Via go
# under the Company's name, and each row wraps its summary over up to SUMMARY_LINES lines.
COMPACT_BELOW = 140
COMPACT_WIDTHS = {"company": 20, "expires": 8, "amount": 10, "status": 22}
SUMMARY_LINES = 4
# Wide, a summary that doesn't fit its line goes on to a second rather than being cut early.
WIDE_SUMMARY_LINES = 2
# The first frame gets the rows the table can show (each row takes at least one of its lines); the
# others follow ROWS_PER_CHUNK at a time, each once the last is drawn, so keys are answered between chunks.
ROWS_PER_CHUNK = 100
CHUNK_PAUSE_SECONDS = 0.05
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
# What each compact column shows; "company" carries the checks and the interface on its second line.
COMPACT_COLUMNS = {
    "company": "Company",
    "expires": "Expires",
    "amount": "Amount",
    "status": "Status",
    "summary": "Summary",
}


# The inbox's lines that are not a table's: title bar, section title, hint and footer.
SCREEN_CHROME_LINES = 8


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

    class RowsAdded(Message):
        """Rows went in (a long list goes in chunks after the first frame): the table's height changed."""

    @property
    def lines_needed(self) -> int:
        """Lines to show every row added so far and the header (known before the table is laid out)."""
        return self._lines + 1

    def __init__(
        self, columns: tuple[tuple[str, str], ...] = PENDING_COLUMNS, *, id: str | None = None
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.wide_keys = tuple(key for key, _ in columns)
        self.column_keys = self.wide_keys
        self._labels = columns
        self.compact = False
        self.items: dict[str, InboxItem] = {}
        # Sanitising a hostile megabyte summary takes tens of ms; rows are rebuilt on every change.
        self._summaries: dict[tuple[Any, ...], Text] = {}
        self._apart: dict[str, str] = {}
        self._to_add: list[str] = []  # keys of items whose rows are still to be added
        self._generation = 0  # which show_items the pending chunks belong to
        self._lines = 0
        self._selecting: str | None = None  # the cursor goes back here once its row is added
        self._chunk_queued = False

    def _widths(self) -> dict[str, int]:
        return COMPACT_WIDTHS if self.compact else WIDTHS

    def summary_chars(self) -> int:
        widths = self._widths()
        # The inbox's padding (2) and room for a vertical scrollbar (2): never a horizontal one.
        return remaining_width(
            self.app.size.width, (widths[k] for k in self.column_keys if k != "summary"), chrome=4
        )

    def _layout(self) -> list[tuple[str, str, int]]:
        self.compact = self.app.size.width < COMPACT_BELOW
        labels = dict(self._labels)
        if self.compact:
            # The status says more than the amount while a send is under way; the review has both.
            dropped = {"amount"} if "status" in self.wide_keys else set()
            self.column_keys = tuple(
                k for k in self.wide_keys if k in COMPACT_COLUMNS and k not in dropped
            )
            labels = {k: COMPACT_COLUMNS[k] for k in self.column_keys}
        else:
            self.column_keys = self.wide_keys
        summary = self.summary_chars()
        widths = self._widths()
        return [(k, labels[k], summary if k == "summary" else widths[k]) for k in self.column_keys]

    def show_items(self, items: list[InboxItem], others: list[str] | None = None) -> None:
        """Rows for the screen first, the rest right after each refresh, in chunks: the first
        frame costs the same with 50,000 pending as with 50 (the first-frame target,
        docs/benchmarks.md). `others`: the summaries of the whole list when `items` are only its
        first rows (the first frame's), so alike summaries are told apart as they will be once
        every row is there."""
        selected = self._selecting or self.selected_row_key()
        if items:  # an empty table is hidden (the inbox says so in words): no header to measure
            set_columns(self, self._layout())
        self.clear()
        self._generation += 1
        self.items = {str(item.row.id): item for item in items}
        # Summaries that begin alike are shown from where they part, if they'd be cut before it.
        summaries = [item.row.summary for item in items]
        apart = first_lines_apart(summaries + (others or []), len(items))
        self._apart = {str(item.row.id): text for item, text in zip(items, apart, strict=True)}
        self._to_add = list(self.items)
        self._lines = 0
        self._selecting = selected if selected in self.items else None
        shown = {item.row.id for item in items}
        self._summaries = {k: v for k, v in self._summaries.items() if k[0] in shown}
        self._chunk_queued = False
        first = self.first_rows()
        self._add_rows(first, lines=first)

    def first_rows(self) -> int:
        """How many rows go in before the first frame: as many as the table has lines to show
        (the terminal's height less the screen's other lines: the inbox fits its tables to the
        room after the first frame), as each row takes at least one."""
        return max(1, self.app.size.height - SCREEN_CHROME_LINES)

    def _add_rows(self, count: int, lines: int | None = None) -> None:
        """Add up to `count` of the rows still to add, in order; with `lines`, stop once the
        rows fill that many lines (the first frame's: rows of a compact table take 2 to 4)."""
        added = 0
        for key in self._to_add[:count]:
            if lines is not None and self._lines >= lines:
                break
            cells = self._cells(self.items[key])
            height = max(len(c.plain.split("\n")) for c in cells)
            self._lines += height
            self.add_row(*cells, key=key, height=height)
            added += 1
        del self._to_add[:added]
        if self._selecting is not None and self._selecting in self.rows:
            self.move_cursor(row=self.get_row_index(self._selecting))
            self._selecting = None
        # Every row's lines and the header; max-height in the stylesheet caps it. (height: auto
        # would follow the rows only after a relayout that adding rows doesn't trigger.)
        self.styles.height = self._lines + 1
        if added:
            self.post_message(self.RowsAdded())

    def render_lines(self, crop: Any) -> Any:
        lines = super().render_lines(crop)
        # The next chunk waits until the rows so far have been laid out (DataTable measures new
        # rows when idle, then its virtual height is theirs and the header's) and drawn: so the
        # first frame has its rows before any more are added.
        laid_out = self.virtual_size.height >= self._lines + (
            self.header_height if self.show_header else 0
        )
        if self._to_add and not self._chunk_queued and laid_out:
            self._chunk_queued = True
            self.set_timer(CHUNK_PAUSE_SECONDS, partial(self._add_more, self._generation))
        return lines

    def _add_more(self, generation: int) -> None:
        self._chunk_queued = False
        if generation != self._generation:
            return  # show_items ran again since: its rows replaced these
        self._add_rows(ROWS_PER_CHUNK)

    @property
    def complete(self) -> bool:
        """Every item has its row (the rest of a long inbox is added after the first frame)."""
        return not self._to_add

    def visible_keys(self) -> list[str]:
        if not self.display or not self.row_count:
            return []
        # Rows may take several lines: walk their heights to the ones the viewport overlaps.
        top, bottom = (
            max(0, int(self.scroll_y)),
            max(0, int(self.scroll_y)) + max(1, self.size.height),
        )
        keys, y = [], 0
        for row in self.ordered_rows:
            if y >= bottom:
                break
            if y + row.height > top and row.key.value:
                keys.append(row.key.value)
            y += row.height
        return keys

    def show_checks(self, batch: dict[int, Any]) -> None:
        """Fill in the badge and amount of rows whose checks just arrived (StoredChecks by row)."""
        for row, checked in batch.items():
            key = str(row)
            item = self.items.get(key)
            if item is None:
                continue
            item = replace(item, amount=checked.amount, findings=checked.findings, checked=True)
            self.items[key] = item
            if key not in self.rows:
                continue  # its row is still to be added, with these checks
            # The badge is its own column when wide, under the Company's name when compact.
            for column, value in zip(self.column_keys, self._cells(item), strict=True):
                if column in ("company", "checks", "amount"):
                    self.update_cell(key, column, value)

    def selected_row_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - no cell under the cursor (CellDoesNotExist): no row
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
        except Exception:  # noqa: BLE001 - the row went away between the refresh and this tick
            return
        self.update_cell(key, column, value)

    def _cells(self, item: InboxItem) -> list[Text]:
        now = app_now(self)
        row = item.row
        makers = {
            "company": lambda: self._company_cell(item),
            "checks": lambda: self._checks_cell(item),
            "expires": lambda: self._expires_cell(item, now),
            "amount": lambda: cell(
                item.amount or ("—" if item.checked else "…"), self._widths()["amount"]
            ),
            "via": lambda: Text(VIA.get(row.interface, interface_label(row.interface))),
            "status": lambda: self._status_cell(item, now),
            "summary": lambda: self._summary_cell(item),
        }
        return [makers[key]() for key in self.column_keys]

    def _company_cell(self, item: InboxItem) -> Text:
        # ⚠ on a look-alike name; uncut here, so cell() cuts once, with one honest marker
        name = cell(
            company_label(item.row.company_name, item.row.company_domain, CELL_MAX).marked_name,
            WIDTHS["company"],
        )
        if not self.compact:
            return name
        # The badge under the name; the interface goes under the expiry (see _expires_cell).
        second = (
            self._checks_cell(item)
            if "checks" in self.wide_keys
            else Text(self._via(item), style="dim")
        )
        return Text.assemble(name, "\n", second, no_wrap=True)

    def _via(self, item: InboxItem) -> str:
        return VIA.get(item.row.interface, interface_label(item.row.interface))

    def _summary_cell(self, item: InboxItem) -> Text:
        withdrawn = item.row.status == Status.WITHDRAWN
        width = self.summary_chars()
        apart = self._apart.get(str(item.row.id))
        key = (item.row.id, item.row.revision, width, withdrawn, self.compact, apart)
        cached = self._summaries.get(key)
        if cached is None:
            prefix = "(withdrawn) " if withdrawn else ""
            lines = SUMMARY_LINES if self.compact else WIDE_SUMMARY_LINES
            room = width * lines - len(prefix)
            summary = item.row.summary
            if apart is not None and apart.startswith("…") and len(summary) > room:
                summary = apart  # the full line would be cut before the part that differs
            cached = Text(prefix, style="italic")
            cached.append(wrapped_first_line(summary, width, lines, len(prefix)))
            # Its lines are ours (wrapped_first_line); when each fits the column, Rich's word
            # wrapping would find nothing to do at every draw (~3 ms of a first frame's rows):
            # no_wrap draws the same. A line wider in cells than in characters is still wrapped.
            cached.no_wrap = all(cell_len(line) <= width for line in cached.plain.split("\n"))
            self._summaries[key] = cached
        return cached

    def _expires_cell(self, item: InboxItem, now: datetime) -> Text:
        left = (item.row.expires_at - now).total_seconds()
        if left <= 0:
            shown = Text("EXPIRED", style=f"bold {self._color('error')}")
        else:
            style = f"bold {self._color('warning')}" if left < 60 else ""
            shown = Text(countdown(left), style=style)
        if self.compact:
            shown.append("\n" + self._via(item), style="dim")
        return shown

    def _status_cell(self, item: InboxItem, now: datetime) -> Text:
        status = item.row.status
        if status == Status.APPROVED:
            send_after = parse_stamp(item.send_after)
            if send_after is not None and send_after > now:
                return Text(f"approved, sends in {countdown((send_after - now).total_seconds())}")
        if status == Status.OUTCOME_UNKNOWN:
            return Text("OUTCOME UNKNOWN: check", style=f"bold {self._color('warning')}")
        if status == Status.SENDING and item.row.waiting_sign_in:
            # Held back until the person signs in again (the review says where); not on its way.
            return Text("waiting for sign-in", style=f"bold {self._color('warning')}")
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
        except Exception:  # noqa: BLE001 - no app or theme yet: the default colour
            return "red"
