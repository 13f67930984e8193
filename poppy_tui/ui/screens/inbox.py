"""The inbox: operations waiting for the person, and those on their way to an outcome."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from poppy_tui.agent.store.records import OperationRow
from poppy_tui.ui.format import IN_PROGRESS_STATUSES, INBOX_STATUSES
from poppy_tui.ui.checks import check_record
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.countdown import app_now
from poppy_tui.ui.widgets.operation_list import PROGRESS_COLUMNS, InboxItem, OperationTable

# Far more than a person can have open at once; the history screen pages through the rest.
INBOX_LIMIT = 500


class InboxScreen(PoppyScreen):
    TITLE_TEXT = "Inbox"
    NAV_MODE = "inbox"
    AUTO_FOCUS = "#pending-table"

    def __init__(self) -> None:
        super().__init__(id="inbox")
        # (row, revision, status) -> (amount, findings, send_after): once per change, not per poll.
        self._checked: dict[tuple[int, str, str], tuple[str | None, tuple[Any, ...], str | None]] = {}
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Vertical(id="inbox-body"):
            yield Static(Content("Waiting for your decision"), id="pending-title", classes="section-title")
            yield OperationTable(id="pending-table")
            yield Static(
                Content(
                    "Nothing is waiting for you. When a Company asks for your approval, "
                    "it appears here (no restart needed)."
                ),
                id="pending-empty",
                classes="empty",
            )
            yield Static(Content("In progress"), id="progress-title", classes="section-title")
            yield OperationTable(PROGRESS_COLUMNS, id="progress-table")
            yield Static(
                Content("Enter: review the highlighted operation. Nothing is ever approved from this list."),
                id="inbox-hint",
                classes="empty",
            )
        yield PoppyFooter()

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def refresh_data(self) -> None:
        pending = self.store.list_operations(INBOX_STATUSES, limit=INBOX_LIMIT)
        # Soonest to expire first: that is the one that can't wait.
        pending.sort(key=lambda r: (r.expires_at, r.id))
        progress = self.store.list_operations(IN_PROGRESS_STATUSES, limit=INBOX_LIMIT)
        pending_table = self.query_one("#pending-table", OperationTable)
        progress_table = self.query_one("#progress-table", OperationTable)
        pending_table.show_items([self._item(r) for r in pending])
        progress_table.show_items([self._item(r) for r in progress])
        current = {(r.id, r.revision, r.status.value) for r in (*pending, *progress)}
        self._checked = {k: v for k, v in self._checked.items() if k in current}
        self.query_one("#pending-title", Static).update(
            Content(f"Waiting for your decision ({len(pending)})")
        )
        self.query_one("#progress-title", Static).update(Content(f"In progress ({len(progress)})"))
        self.query_one("#pending-empty").display = not pending
        pending_table.display = bool(pending)
        progress_table.display = bool(progress)
        self.query_one("#progress-title").display = bool(progress)
        self.loaded = True

    def _item(self, row: OperationRow) -> InboxItem:
        key = (row.id, row.revision, row.status.value)
        cached = self._checked.get(key)
        if cached is None:
            record = self.store.get_operation(row.id)
            checked = check_record(self.store, record, app_now(self), self.agent.config.min_read_seconds)
            cached = (checked.amount, checked.findings, record.send_after)
            self._checked[key] = cached
        amount, findings, send_after = cached
        return InboxItem(row=row, amount=amount, findings=findings, send_after=send_after)

    def _tick(self) -> None:
        for table in self.query(OperationTable):
            table.tick()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.poppy.open_review(int(event.row_key.value))
