"""Quitting with approvals not sent yet (in their grace period, or being sent) asks first:
send them now and wait, or leave them queued. Leaving them is safe: they stay approved in the
store and the next dispatcher to run (the TUI's next start, `poppy-tui send`, a `--wait`, the
MCP server) sends them; but the person who quits right after approving should know that.

The dialog follows the queue while it is open: a grace period that runs out behind it (or
another process) sends an approval, and its line then says how that went; once nothing is left
to send, the choices that no longer mean anything give way to quitting. In the demo the Company
stops when the TUI does, so "leave it queued" says what it really means there.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.safe import plain_line, safe_line_content

IN_FLIGHT = (Status.APPROVED, Status.SENDING)
# How an approval that left the queue while the dialog was open ended, in the dialog's words.
STATUS_WORDS = {
    Status.PERFORMED: "performed",
    Status.NOT_PERFORMED: "not performed",
    Status.OUTCOME_UNKNOWN: "sent; outcome unknown",
    Status.WITHDRAWN: "withdrawn",
    Status.DECLINED: "declined",
    Status.EXPIRED: "expired",
}
LISTED = 6
CHECK_SECONDS = 0.25


def approvals_in_flight(store: Store) -> list[int]:
    return [row.id for row in store.list_operations(IN_FLIGHT, limit=1000, newest_first=False)]


def quit_help(count: int, demo: bool = False) -> str:
    """The choices, in the number the title gives, each key starting its own line and every line
    under the dialog's 74 columns at 80 (run on, a wrapped line began with "or by")."""
    if count == 0:
        return "q  quit\nEsc  don't quit"
    them, each = ("it", "it has") if count == 1 else ("them", "each has")
    if demo:  # the demo Company stops with the TUI, and the next demo starts from a fresh home
        leave = (
            f"l  quit without sending {them}: the demo Company stops now,\n"
            f"   so {them} will never be sent"
        )
    else:
        leave = (
            f"l  leave {them} queued and quit: poppy-tui sends {them} when it next runs,\n"
            "   or 'poppy-tui send' does"
        )
    return (
        f"s  send {them} now and wait until {each} an answer, then quit\n{leave}\nEsc  don't quit"
    )


def quit_title(count: int) -> str:
    if count == 0:
        return "Nothing is left to send"
    return f"{count} approved operation{'s' if count != 1 else ''} not sent yet"


class QuitScreen(ModalScreen[None]):
    AUTO_FOCUS = None
    DEFAULT_CSS = """
    QuitScreen { align: center middle; }
    #quit-dialog { width: 80; max-width: 100%; height: auto; max-height: 100%; overflow-y: auto; padding: 1 2; background: $panel; border: thick $warning; }
    #quit-title { text-style: bold; margin-bottom: 1; }
    #quit-help { margin-top: 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("s", "send_and_wait", "Send, then quit", id="quit_send_wait"),
        Binding("l", "leave_queued", "Quit now", id="quit_leave_queued"),
        Binding("q", "quit_now", "Quit", id="quit_now"),
        Binding("escape", "stay", "Don't quit", id="quit_cancel"),
    ]

    def __init__(self, rows: list[int], demo: bool = False) -> None:
        super().__init__(id="quit-screen")
        self.rows = rows
        self.demo = demo
        self.sending = False
        self.left = list(rows)  # the listed approvals still approved or being sent

    def compose(self) -> ComposeResult:
        count = len(self.rows)
        with Vertical(id="quit-dialog"):
            yield Static(Content(quit_title(count)), id="quit-title")
            store = self.app.agent.store  # type: ignore[attr-defined]
            for row in self.rows[:LISTED]:
                yield Static(
                    self._operation_line(store.get_operation(row), width=self._line_width()),
                    classes="quit-operation",
                    id=f"quit-operation-{row}",
                )
            if count > LISTED:
                yield Static(Content(f"... and {count - LISTED} more"))
            yield Static(Content(quit_help(count, self.demo)), id="quit-help")
            yield Static(Content(""), id="quit-progress")
        yield Footer()

    def _line_width(self) -> int:
        return max(20, min(76, self.app.size.width - 8))  # the dialog's border and padding

    @staticmethod
    def _operation_line(record: Any, settled: str = "", width: int = 72) -> Content:
        """Over two lines, its beginning and its end kept: a move's new time is at its end (walk
        K4: "Move your jacket fitting … at Manzanita Outfitters …(+134 chars)")."""
        from poppy_tui.ui.safe import plain_line, wrapped_first_line

        name = plain_line(record.company.name, 40)
        prefix = f"{record.id}  {name}: "
        summary = wrapped_first_line(record.current.summary, width, 2, indent=len(prefix) % width)
        return Content.assemble(
            f"{record.id}  ",
            safe_line_content(record.company.name, 40),
            ": ",
            Content(summary),
            (settled, "bold"),
        )

    def on_mount(self) -> None:
        # Follow the queue from the start, not only after "s": the grace period goes on behind us.
        self.set_interval(CHECK_SECONDS, self._follow)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send_and_wait", "leave_queued"):
            return bool(self.left)
        if action == "quit_now":
            return not self.left
        return True

    def action_quit_now(self) -> None:
        self.app.exit()

    def _follow(self) -> None:
        """Say what became of each listed approval that left the queue while the dialog was open."""
        store = self.app.agent.store  # type: ignore[attr-defined]
        try:
            in_flight = set(approvals_in_flight(store))
        except Exception as exc:  # noqa: BLE001 - a locked database: look again next tick
            self.query_one("#quit-progress", Static).update(
                Content(f"Can't read the queue: {plain_line(exc)}")
            )
            return
        left = [row for row in self.rows if row in in_flight]
        if left == self.left:
            return
        for row in set(self.left) - set(left):
            if row in self.rows[:LISTED]:
                record = store.get_operation(row)
                self.query_one(f"#quit-operation-{row}", Static).update(
                    self._operation_line(
                        record,
                        f"  (now {STATUS_WORDS.get(record.status, record.status.value)})",
                        self._line_width(),
                    )
                )
        self.left = left
        if self.sending:
            if not left:
                self.app.exit()
            return
        self.query_one("#quit-title", Static).update(Content(quit_title(len(left))))
        self.query_one("#quit-help", Static).update(Content(quit_help(len(left), self.demo)))
        self.refresh_bindings()

    def action_leave_queued(self) -> None:
        if self.demo:
            self._withdraw_unsent()
        self.app.exit()

    def _withdraw_unsent(self) -> None:
        """In the demo, `l` says the approvals will never be sent (its Company stops with the
        TUI): those still in their grace period are withdrawn, so the store says so too, and a
        later look at the demo's home never shows them on their way (one being sent can't be
        taken back; the demo's home says its Company stopped, agent/demo_marker.py)."""
        agent = self.app.agent  # type: ignore[attr-defined]
        for row in self.left:
            try:
                if agent.store.get_operation(row).status == Status.APPROVED:
                    agent.withdraw(row)
            except Exception:  # noqa: BLE001 - its first attempt began meanwhile: it goes as it is
                continue

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
                Content(
                    f"Can't send them now: {plain_line(exc)}. s tries again, l leaves them queued."
                )
            )
            return
        self.sending = True
        self._show_progress()
        # The app's dispatcher sends them; _follow watches until none is left.
        self.set_interval(CHECK_SECONDS, self._show_progress)

    def _show_progress(self) -> None:
        left = self.left
        if not left:
            return
        from poppy_tui.agent.headless import waiting_for_sign_in

        try:
            kept = set(waiting_for_sign_in(self.app.agent.store))  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a locked database: look again next tick
            kept = set()
        sending = [row for row in left if row not in kept]
        rest = "l quits without sending the rest" if self.demo else "l leaves the rest queued"
        if not sending:
            # Nothing more can be sent now: waiting here would last until their terms expire.
            waiting = [row for row in left if row in kept]
            leave = (
                "l quits without sending it"
                if self.demo
                else "l leaves it queued (it is sent once you sign in, until its terms expire)"
            )
            self.query_one("#quit-progress", Static).update(
                Content(
                    f"Nothing more can be sent now: operation {', '.join(map(str, waiting[:LISTED]))} waits for you to "
                    f"sign in to the Company. {leave}."
                )
            )
            return
        self.query_one("#quit-progress", Static).update(
            Content(
                f"Sending... {len(sending)} left (operation {', '.join(map(str, sending[:LISTED]))}). {rest}."
            )
        )
