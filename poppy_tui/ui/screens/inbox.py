"""The inbox: operations waiting for the person, and those on their way to an outcome."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from poppy_tui.agent.store.checks import StoredChecks
from poppy_tui.agent.store.status import OperationRow, Status
from poppy_tui.safety.checker import CHECKER_VERSION
from poppy_tui.ui.format import IN_PROGRESS_STATUSES, INBOX_STATUSES
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.operation_list import PROGRESS_COLUMNS, InboxItem, OperationTable


def _revision_key(row: OperationRow) -> tuple[int, int, str]:
    """Which revision of the operation a row shows: checks are kept per revision."""
    return (row.id, row.revision_count, row.revision)


def check_missing(*args: Any, **kwargs: Any) -> None:
    # Imported when first needed, in the checking thread: the checks pull in the whole safety
    # package (~0.2 s), which must not stand between the start and the first frame.
    from poppy_tui.agent.revision_checks import check_missing as run

    run(*args, **kwargs)


# Far more than a person can have open at once; the history screen pages through the rest.
INBOX_LIMIT = 500
# The empty inbox: where operations will appear, or, on a first start with no Company, how to begin.
NOTHING_WAITING = "Nothing is waiting for you. When a Company asks for your approval, it appears here (no restart needed)."
NO_COMPANY_YET = (
    "Nothing is waiting for you, and no Company is added yet. Press c for Companies and add one by "
    "its domain; or quit (q) and run poppy-tui --demo to see the whole flow with a demo Company."
)


class InboxScreen(PoppyScreen):
    TITLE_TEXT = "Inbox"
    CSS_PATH = None  # poppy.tcss has all it needs: screens.tcss waits for the first other screen
    NAV_MODE = "inbox"
    AUTO_FOCUS = "#pending-table"
    # The notice at the top (ui/screens/inbox_notice.py): what the app was started to say (the demo's
    # failed sign-in, operations that arrived expired) and sign-ins a Company still waits for.
    BINDINGS = [
        Binding("ctrl+g", "sign_in_for_notice", "Sign in", id="inbox_sign_in"),
        Binding("x", "dismiss_notice", "Dismiss", id="inbox_dismiss_notice"),
    ]

    def __init__(self) -> None:
        super().__init__(id="inbox")
        # Checks are stored per revision and computed in a thread (agent/revision_checks.py): rows
        # show first, badges fill in as each batch is checked. Never computed on the event loop.
        self._checked: dict[int, StoredChecks] = {}
        self._send_after: dict[tuple[int, str], str | None] = {}
        self._declined: dict[tuple[int, int, str], str | None] = {}
        self.checking = False  # a thread is computing checks the store doesn't have yet
        # Checks are per revision: a row's new revision is checked like its first. What the thread
        # was given, by (row, revision), so one that fails isn't retried in a loop.
        self._attempted: set[tuple[int, int, str]] = set()
        self._handed: set[tuple[int, int, str]] = set()
        self._revision_key: dict[int, tuple[int, int, str]] = {}  # each listed row's, now
        self.loaded = False
        # The store's change token when the rows were read: the app doesn't read them again at
        # on_ready when nothing was committed since (they were read at mount, for the first frame).
        self.read_at_token: Any = None
        self._checks_token: Any = None  # the store's change token when the checks' thread began
        self._checks_waiting: list[int] = []  # rows to check once the first frame is on screen
        # Before the first frame only the rows it shows are read, with their stored checks
        # (reading and building all 500 was ~10 ms of it); first_frame_shown reads the rest.
        self.partial = False
        self._adding_tables = False  # an empty table is being mounted (first_frame_shown)
        self._empty_text = NOTHING_WAITING
        self.notice: Any = None  # ui/screens/inbox_notice.Notice shown, or None
        self._fitted: dict[str | None, int | None | str] = {}  # the max-height each table was given
        self._pending_count = 0

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Vertical(id="inbox-body"):
            notice = Static("", id="inbox-notice")
            notice.display = (
                False  # until refresh_data, after the first frame, has something to say
            )
            yield notice
            yield Static(
                Content("Waiting for your decision"), id="pending-title", classes="section-title"
            )
            if self._has_rows(INBOX_STATUSES):
                yield OperationTable(id="pending-table")
            more = Static(Content(""), id="pending-more", classes="empty")
            more.display = False  # until rows are hidden below the table's edge
            yield more
            yield Static(Content(NOTHING_WAITING), id="pending-empty", classes="empty")
            if self._has_rows(IN_PROGRESS_STATUSES):
                yield from self._progress_section()
            yield Static(
                Content(
                    "Enter: review the highlighted operation. Nothing is ever approved from this list."
                ),
                id="inbox-hint",
                classes="empty",
            )
        yield PoppyFooter()

    # An empty table is hidden (the inbox says so in words), so the first frame doesn't build it
    # (a table's styles and layout, ~3-5 ms each): it is mounted, hidden, right after that frame
    # (first_frame_shown), and then filled as on every change. One indexed read each.
    def _has_rows(self, statuses: tuple[Status, ...]) -> bool:
        return bool(self.reader.list_operations(statuses, limit=1))

    def _progress_section(self) -> ComposeResult:
        title = Static(Content("In progress"), id="progress-title", classes="section-title")
        table = OperationTable(PROGRESS_COLUMNS, id="progress-table")
        title.display = table.display = False  # until refresh_data finds rows for it
        yield title
        yield table

    async def _add_missing_tables(self) -> None:
        body = self.query_one("#inbox-body")
        if not self.query("#pending-table"):
            table = OperationTable(id="pending-table")
            table.display = False  # until refresh_data finds rows for it
            await body.mount(table, before=body.query_one("#pending-empty"))
            self._follow_scrolling(table)
        if not self.query("#progress-table"):
            await body.mount_all(
                list(self._progress_section()), before=body.query_one("#inbox-hint")
            )
        self.refresh_data()

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        for table in self.query("#pending-table").results(OperationTable):
            self._follow_scrolling(table)
        # The first page is read now, synchronously (two indexed queries, the same cost at 50,000
        # pending as at 500), so the rows are in the first frame (the first-frame target,
        # docs/benchmarks.md).
        self.refresh_data()

    def first_frame_shown(self) -> None:
        """Called by the app once the first frame is on screen: the whole list is read and the
        checks' thread starts now, so neither competes with that frame for the interpreter."""
        if not self.query("#pending-table") or not self.query("#progress-table"):
            if not self._adding_tables:  # once, however often the app says so
                self._adding_tables = True
                self.call_later(self._add_missing_tables)  # then every row, as below
            return
        if self.partial:
            self.refresh_data()  # painted: every row, their stored checks, the checks' thread
            return
        waiting, self._checks_waiting = self._checks_waiting, []
        if waiting and not self.checking:
            self._start_checks(waiting)

    def refresh_data(self) -> None:
        self.read_at_token = self.reader.change_token()
        # Each None until mounted after the first frame (it had nothing to show at start).
        pending_table = next(iter(self.query("#pending-table").results(OperationTable)), None)
        progress_table = next(iter(self.query("#progress-table").results(OperationTable)), None)
        pending: list[OperationRow] = []
        progress: list[OperationRow] = []
        pending_count, others = 0, None
        if self.poppy.painted:
            if pending_table is not None:
                pending = self.reader.list_operations(INBOX_STATUSES, limit=INBOX_LIMIT)
                # Soonest to expire first: that is the one that can't wait.
                pending.sort(key=lambda r: (r.expires_at, r.id))
                pending_count = len(pending)
            if progress_table is not None:
                progress = self.reader.list_operations(IN_PROGRESS_STATUSES, limit=INBOX_LIMIT)
        else:
            # Before the first frame, only the rows it shows (as many as each table has lines),
            # chosen and ordered from the same list; first_frame_shown reads the whole lists.
            if pending_table is not None:
                pending, pending_count, others = self.reader.soonest_to_expire(
                    INBOX_STATUSES, pending_table.first_rows(), limit=INBOX_LIMIT
                )
            if progress_table is not None:
                progress = self.reader.list_operations(
                    IN_PROGRESS_STATUSES, limit=min(INBOX_LIMIT, progress_table.first_rows())
                )
        self.partial = not self.poppy.painted
        rows = [r.id for r in (*pending, *progress)]
        self._revision_key = {r.id: _revision_key(r) for r in (*pending, *progress)}
        # One query for the rows' stored checks (of each row's current revision); rows still
        # unchecked show "checking…".
        self._checked = self.reader.current_checks(rows, CHECKER_VERSION)
        if pending_table is not None:
            pending_table.show_items([self._item(r) for r in pending], others=others)
        if progress_table is not None:
            progress_table.show_items([self._item(r) for r in progress])
        missing = [
            row
            for row in rows
            if row not in self._checked and self._revision_key[row] not in self._attempted
        ]
        if missing and not self.checking:
            if self.poppy.painted:
                self._checks_waiting = []
                self._start_checks(missing)
            else:
                self._checks_waiting = missing
        self.query_one("#pending-title", Static).update(
            Content(f"Waiting for your decision ({pending_count})")
        )
        empty = self.query_one("#pending-empty", Static)
        empty.display = not pending
        if not pending and not progress:
            # A first start has nothing to review and nowhere to ask: say where to begin.
            text = NOTHING_WAITING if self.reader.has_companies() else NO_COMPANY_YET
            if text != self._empty_text:
                self._empty_text = text
                empty.update(Content(text))
        # Nothing highlighted, nothing for Enter to open.
        self.query_one("#inbox-hint").display = bool(pending or progress)
        if pending_table is not None:
            pending_table.display = bool(pending)
        if progress_table is not None:
            self.query_one("#progress-title", Static).update(
                Content(f"In progress ({len(progress)})")
            )
            progress_table.display = bool(progress)
            self.query_one("#progress-title").display = bool(progress)
        self._give_keys_to_rows(pending_table if pending else progress_table if progress else None)
        self._pending_count = pending_count
        if (
            self.poppy.painted
        ):  # before the first frame the layout isn't settled: nothing to fit yet
            self._show_notice(pending_count)  # first: the tables get the room it leaves
            self.call_after_refresh(self.fit_tables)
        self.loaded = True

    def fit_tables(self) -> None:
        """Give the tables the room the screen has: every waiting row shows while there is room
        (a fixed 60% hid a fourth row at 80x24 above five empty lines), the in-progress table
        keeps a share when both don't fit, and rows that still don't fit are counted below."""
        tables = [t for t in self.query(OperationTable) if t.display]
        if not tables:
            self._say_more_below(None)
            return
        body = self.query_one("#inbox-body")
        # Whatever else the body shows; a line for "N more below" only when rows are hidden.
        rest = sum(
            child.outer_size.height
            for child in body.children
            if child.display and child not in tables and child.id != "pending-more"
        )
        needs = {t.id: t.lines_needed for t in tables}
        caps = self._caps(tables, needs, max(3, body.content_size.height - rest))
        pending_cap = caps.get("pending-table")
        if pending_cap is not None and pending_cap < needs["pending-table"]:
            caps = self._caps(tables, needs, max(3, body.content_size.height - rest - 1))
        for table in tables:
            cap = caps[table.id]
            if self._fitted.get(table.id, "unset") != cap:  # a new height lays the screen out again
                self._fitted[table.id] = cap
                table.styles.max_height = cap
                # The table scrolled its cursor into view for the height it had: keep the cursor's
                # row in view at the new one (once laid out), or it can sit hidden below.
                self.call_after_refresh(self._keep_cursor_in_view, table)
        pending = next((t for t in tables if t.id == "pending-table"), None)
        self._say_more_below(pending, caps.get("pending-table") if pending is not None else None)

    @staticmethod
    def _caps(
        tables: list[OperationTable], needs: dict[str | None, int], room: int
    ) -> dict[str | None, int | None]:
        """Each table's most lines in `room`: None where everything fits."""
        caps: dict[str | None, int | None] = {t.id: None for t in tables}
        if sum(needs.values()) <= room:
            return caps
        if len(tables) == 1:
            return {tables[0].id: room}
        # Waiting rows first (they need a decision); in progress keeps its header and a row.
        progress = next(t for t in tables if t.id == "progress-table")
        first_row = progress.ordered_rows[0].height if progress.ordered_rows else 1
        progress_least = min(needs["progress-table"], progress.header_height + first_row)
        pending_room = min(needs["pending-table"], room - progress_least)
        return {
            "pending-table": pending_room,
            "progress-table": min(needs["progress-table"], room - pending_room),
        }

    def _say_more_below(self, table: OperationTable | None, cap: int | None = None) -> None:
        more = self.query_one("#pending-more", Static)
        hidden = 0
        if table is not None:
            header = table.header_height if table.show_header else 0
            bottom = (
                int(table.scroll_y)
                + (cap if cap is not None else table.virtual_size.height)
                - header
            )
            shown, top = 0, 0
            for row in table.ordered_rows:
                top += row.height
                if top > bottom:
                    break
                if top > int(table.scroll_y):
                    shown += 1
            above = sum(1 for row in self._rows_above(table))
            hidden = max(0, self._pending_count - shown - above)
        text = f"↓ {hidden} more below (down arrow or PgDn)" if hidden else ""
        if str(more.render()) != text:
            more.update(Content(text))
        more.display = bool(hidden)

    @staticmethod
    def _rows_above(table: OperationTable) -> list[Any]:
        """The rows scrolled off the top."""
        above, top = [], 0
        for row in table.ordered_rows:
            top += row.height
            if top > int(table.scroll_y):
                break
            above.append(row)
        return above

    def fit_to_size(self) -> None:
        self.call_after_refresh(self.fit_tables)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The cursor scrolls the table: what is hidden below changes with it.
        self.call_after_refresh(self.fit_tables)

    @staticmethod
    def _keep_cursor_in_view(table: OperationTable) -> None:
        if table.is_mounted and table.row_count:
            table.move_cursor(row=table.cursor_row)  # the same row: only scrolls it into view

    def _follow_scrolling(self, table: OperationTable) -> None:
        """Count what is below again whenever the table scrolls: DataTable scrolls to the cursor
        after a refresh when its rows were just updated, so that scroll can land after the count
        made for the cursor's move (RowHighlighted), which then said rows were hidden that show."""
        self.watch(table, "scroll_y", self._scrolled, init=False)

    def _scrolled(self) -> None:
        self.call_after_refresh(self.fit_tables)

    # ---- the notice ----------------------------------------------------------------------------

    def _show_notice(self, pending_count: int) -> None:
        from poppy_tui.ui.screens.inbox_notice import inbox_notice

        notice = inbox_notice(self.poppy, pending_count)
        widget = self.query_one("#inbox-notice", Static)
        if notice != self.notice:
            self.notice = notice
            widget.update(notice.content if notice is not None else Content(""))
            self.refresh_bindings()
        widget.display = notice is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "sign_in_for_notice":
            return self.notice is not None and self.notice.sign_in is not None
        if action == "dismiss_notice":
            return self.notice is not None and self.notice.dismissable
        return True

    def action_dismiss_notice(self) -> None:
        self.poppy.notice = None
        self.refresh_data()

    def action_sign_in_for_notice(self) -> None:
        if self.notice is not None and self.notice.sign_in is not None:
            self._sign_in_for(self.notice.sign_in)

    @work(group="inbox-sign-in", exclusive=True)
    async def _sign_in_for(self, target: Any) -> None:
        from poppy_tui.ui.screens.inbox_notice import sign_in_then_ask_again

        await sign_in_then_ask_again(self.poppy, target)
        self.refresh_data()

    def _give_keys_to_rows(self, table: OperationTable | None) -> None:
        """Enter opens the highlighted row as soon as there is one. AUTO_FOCUS works only for a
        table there at mount: one mounted after the first frame (an inbox that started empty),
        or hidden and shown again (every earlier row decided), would wait for Tab. Only when
        nothing on this screen has the keys: a person typing elsewhere keeps them."""
        if table is not None and self.focused is None:
            table.focus(scroll_visible=False)

    def _start_checks(self, missing: list[int]) -> None:
        self.checking = True
        self._checks_token = self.read_at_token
        handed = {self._revision_key[row] for row in missing if row in self._revision_key}
        self._attempted |= handed
        self._handed = handed
        self._check(missing)

    def _item(self, row: OperationRow) -> InboxItem:
        checked = self._checked.get(row.id)
        send_after = None
        if row.status == Status.APPROVED:  # the grace countdown; few rows, so read them one by one
            key = (row.id, row.revision)
            if key not in self._send_after:
                self._send_after[key] = self.store.get_operation(row.id).send_after
            send_after = self._send_after[key]
        declined = self._declined_before(row)
        stopped = self._stopped_domain is not None and row.company_domain == self._stopped_domain
        if checked is None:
            return InboxItem(
                row=row, send_after=send_after, checked=False, declined=declined, stopped=stopped
            )
        return InboxItem(
            row=row,
            amount=checked.amount,
            findings=checked.findings,
            send_after=send_after,
            declined=declined,
            stopped=stopped,
        )

    @property
    def _stopped_domain(self) -> str | None:
        """The domain of a demo Company that has stopped (agent/demo_marker.py), if any."""
        stopped = getattr(self.poppy, "stopped_demo", None)
        if stopped is None:
            return None
        from urllib.parse import urlsplit

        return urlsplit(stopped.base_url).netloc

    def _declined_before(self, row: OperationRow) -> str | None:
        """When the person declined an earlier revision of this row's operation (a later request
        brought a new one): only rows with a decision and more than one revision are read, once
        per revision."""
        if (
            row.revision_count < 2
            or row.decided_at is None
            or row.status not in (Status.PENDING, Status.WITHDRAWN)
            or not self.poppy.painted
        ):
            return None
        key = _revision_key(row)
        if key not in self._declined:
            from poppy_tui.agent.earlier_decline import declined_earlier

            try:
                self._declined[key] = declined_earlier(self.store, self.store.get_operation(row.id))
            except KeyError:
                return None
        return self._declined[key]

    @work(thread=True, group="inbox-checks", exit_on_error=False)
    def _check(self, operation_rows: list[int]) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        try:
            check_missing(
                self.reader.path,
                operation_rows,
                self.poppy.clock,
                self.agent.config.min_read_seconds,
                lambda batch: self.app.call_from_thread(self._checks_arrived, batch),
                cancelled=lambda: worker.is_cancelled,
            )
        finally:
            self.app.call_from_thread(self._checks_done)

    def _checks_arrived(self, batch: dict[int, StoredChecks]) -> None:
        self._checked.update(batch)
        for table in self.query(OperationTable):
            table.show_checks(batch)

    def _checks_done(self) -> None:
        self.checking = False
        unchecked = {
            self._revision_key[row]
            for row in {int(key) for table in self.query(OperationTable) for key in table.items}
            - set(self._checked)
            if row in self._revision_key
        }
        # Rows the thread stopped without checking are tried again at the next change of the
        # store (not at once, so a failure can't spin); rows (or revisions) that arrived
        # meanwhile go now. A store changed while checking is read again: a batch checked the
        # revision that was current when it began, and the store knows which is current now.
        failed = unchecked & self._handed
        self._attempted -= failed
        if unchecked - failed or self._checks_token != self.reader.change_token():
            self.refresh_data()

    def _tick(self) -> None:
        if not self.is_current:
            return  # under a review or in another mode: nothing of it is on screen
        for table in self.query(OperationTable):
            table.tick()

    def on_operation_table_rows_added(self, event: OperationTable.RowsAdded) -> None:
        # A long list's later chunks change how much room the tables need.
        if self.poppy.painted:
            self.call_after_refresh(self.fit_tables)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.poppy.open_review(int(event.row_key.value))
