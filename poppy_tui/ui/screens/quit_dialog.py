"""Quitting with approvals not sent yet (in their grace period, or being sent) asks first:
send them now and wait, or leave them queued. Leaving them is safe: they stay approved in the
store and the next dispatcher to run (the TUI's next start, `poppy-tui send`, a `--wait`, the
MCP server) sends them; but the person who quits right after approving should know that.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.safe import first_line, plain_line, safe_line_content

IN_FLIGHT = (Status.APPROVED, Status.SENDING)
LISTED = 6
CHECK_SECONDS = 0.25


def approvals_in_flight(store: Store) -> list[int]:
    return [row.id for row in store.list_operations(IN_FLIGHT, limit=1000, newest_first=False)]


def quit_help(count: int) -> str:
    """The choices, in the number the title gives, each key starting its own line and every line
    under the dialog's 74 columns at 80 (run on, a wrapped line began with "or by")."""
    them, each = ("it", "it has") if count == 1 else ("them", "each has")
    return (
        f"s  send {them} now and wait until {each} an answer, then quit\n"
        f"l  leave {them} queued and quit: poppy-tui sends {them} when it next runs,\n"
        "   or 'poppy-tui send' does\n"
        "Esc  don't quit"
    )


class QuitScreen(ModalScreen[None]):
    AUTO_FOCUS = None
    DEFAULT_CSS = """
    QuitScreen { align: center middle; }
    #quit-dialog { width: 80; height: auto; padding: 1 2; background: $panel; border: thick $warning; }
    #quit-title { text-style: bold; margin-bottom: 1; }
    #quit-help { margin-top: 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("s", "send_and_wait", "Send, then quit", id="quit_send_wait"),
        Binding("l", "leave_queued", "Leave queued and quit", id="quit_leave_queued"),
        Binding("escape", "stay", "Don't quit", id="quit_cancel"),
    ]

    def __init__(self, rows: list[int]) -> None:
        super().__init__(id="quit-screen")
        self.rows = rows
        self.sending = False

    def compose(self) -> ComposeResult:
        count = len(self.rows)
        with Vertical(id="quit-dialog"):
            yield Static(
                Content(f"{count} approved operation{'s' if count != 1 else ''} not sent yet"), id="quit-title"
            )
            store = self.app.agent.store  # type: ignore[attr-defined]
            for row in self.rows[:LISTED]:
                record = store.get_operation(row)
                yield Static(
                    Content.assemble(
                        f"{row}  ",
                        safe_line_content(record.company.name, 40),
                        ": ",
                        first_line(record.current.summary, 60),
                    ),
                    classes="quit-operation",
                )
            if count > LISTED:
                yield Static(Content(f"... and {count - LISTED} more"))
            yield Static(Content(quit_help(count)), id="quit-help")
            yield Static(Content(""), id="quit-progress")

    def action_leave_queued(self) -> None:
        self.app.exit()

    def action_stay(self) -> None:
        self.dismiss(None)

    def action_send_and_wait(self) -> None:
        if self.sending:
            return
        store = self.app.agent.store  # type: ignore[attr-defined]
        try:
            # "Now" means now: their grace periods end here, committed like the decision, and the
            # app's dispatcher (or any other) claims them on its next pass.
            store.send_now(approvals_in_flight(store))
        except Exception as exc:  # noqa: BLE001 - a locked database: nothing changed, say so
            self.query_one("#quit-progress", Static).update(
                Content(f"Can't send them now: {plain_line(exc)}. s tries again, l leaves them queued.")
            )
            return
        self.sending = True
        self._show_progress()
        # The app's dispatcher sends them; we watch until none is left.
        self.set_interval(CHECK_SECONDS, self._show_progress)

    def _show_progress(self) -> None:
        store = self.app.agent.store  # type: ignore[attr-defined]
        try:
            left = approvals_in_flight(store)
        except Exception as exc:  # noqa: BLE001 - a locked database: look again next tick
            self.query_one("#quit-progress", Static).update(Content(f"Can't read the queue: {plain_line(exc)}"))
            return
        if not left:
            self.app.exit()
            return
        from poppy_tui.agent.headless import waiting_for_sign_in

        try:
            kept = set(waiting_for_sign_in(store))
        except Exception:  # noqa: BLE001 - a locked database: look again next tick
            kept = set()
        sending = [row for row in left if row not in kept]
        if not sending:
            # Nothing more can be sent now: waiting here would last until their terms expire.
            waiting = [row for row in left if row in kept]
            self.query_one("#quit-progress", Static).update(Content(
                f"Nothing more can be sent now: operation {', '.join(map(str, waiting[:LISTED]))} waits for you to "
                "sign in to the Company. l leaves it queued (it is sent once you sign in, until its terms expire)."
            ))
            return
        self.query_one("#quit-progress", Static).update(
            Content(f"Sending... {len(sending)} left (operation {', '.join(map(str, sending[:LISTED]))}). "
                    "l leaves the rest queued.")
        )
