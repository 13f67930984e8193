"""Talk with a Company's agent. Its messages are shown as sanitised text and are never an
approval: an operation a message carries appears as a card that opens the review screen."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Select, Static

from poppy_tui.agent.store.records import CompanyRecord, Status
from poppy_tui.agent.store.store import Store
from poppy_tui.ui.format import company_interfaces, record_status_label
from poppy_tui.ui.safe import (
    company_content,
    first_line,
    plain_line,
    safe_content,
    safe_line_content,
)
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.company_select import CompanySelect


def carried_operation(message: dict[str, Any]) -> dict[str, Any] | None:
    extensions = message.get("extensions")
    content = extensions.get("operations") if isinstance(extensions, dict) else None
    operation = content.get("operation") if isinstance(content, dict) else None
    return operation if isinstance(operation, dict) else None


def operation_row_for(store: Store, company_id: int, operation_id: str) -> int | None:
    for row in store.list_operations(company_id=company_id, text=operation_id, limit=20):
        if row.operation_id == operation_id:
            return row.id
    return None


CARD_SUMMARY_CHARS = 600


class MessageView(Static):
    DEFAULT_CLASSES = "message"


class OperationCard(Static, can_focus=True):
    """A pointer to the review screen. The card repeats nothing the Company could use to look like poppy."""

    DEFAULT_CLASSES = "operation-card"
    BINDINGS = [Binding("enter", "open", "Review", id="open_card")]

    def __init__(self, operation_row: int, content: Content) -> None:
        super().__init__(content)
        self.operation_row = operation_row

    def action_open(self) -> None:
        self.app.open_review(self.operation_row)  # type: ignore[attr-defined]

    def on_click(self) -> None:
        self.action_open()


class ConversationScreen(PoppyScreen):
    TITLE_TEXT = "Talk"
    NAV_MODE = "talk"
    TYPING = True
    AUTO_FOCUS = "#talk-input"
    BINDINGS = [
        Binding("ctrl+r", "refresh_conversation", "Check for replies", id="refresh_conversation"),
        Binding(
            "ctrl+g",
            "sign_in_and_resend",
            "Sign in, say it again",
            id="sign_in_and_say_again",
            priority=True,
        ),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self, company_id: int | None = None) -> None:
        super().__init__()
        self.initial_company_id = company_id
        self.company: CompanyRecord | None = None
        self.conversation_row: int | None = None
        self._shown: tuple[Any, ...] | None = None
        # (company, text, challenge) when the Company asked for sign-in: ctrl+g signs in, then says it again.
        self.awaiting_sign_in: tuple[Any, str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Horizontal(id="talk-company-row"):
            yield CompanySelect(
                prompt="Pick a Company to talk to",
                id="talk-company",
                preselect=self.initial_company_id,
                pick_only_one=True,
            )
        yield Static(
            Content(
                "Messages are only words: nothing you or the Company write here approves anything. "
                "Operations open in the review screen, where only you decide."
            ),
            id="talk-note",
        )
        yield VerticalScroll(id="talk-log")
        yield Input(placeholder="Write to the Company's agent and press Enter", id="talk-input")
        yield PoppyFooter()

    def on_mount(self) -> None:
        self.refresh_data()

    def choose_company(self, company_id: int) -> None:
        """Pick this Company, as the Companies screen asks; the box and the screen then agree."""
        if not self.is_mounted:
            self.initial_company_id = company_id  # read by compose
            return
        self.refresh_data()
        if not self.query_one("#talk-company", CompanySelect).choose(company_id):
            # Not offered here (Talk lists only Companies with an agent).
            self.notify("That Company has no agent to talk to.", markup=False)

    def refresh_data(self) -> None:
        self.query_one("#talk-company", CompanySelect).show_companies(
            c for c in self.store.list_companies() if "conversation" in company_interfaces(c)
        )
        self.run_exclusive(self.show_messages, "talk-show")

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if not isinstance(event.value, int):
            return
        self.company = self.store.get_company(event.value)
        latest = self.store.latest_conversation(self.company.id)
        self.conversation_row = latest[0] if latest else None
        self._shown = None
        self.run_exclusive(self.show_messages, "talk-show")
        self.query_one("#talk-input").focus()

    async def show_messages(self) -> None:
        log = self.query_one("#talk-log", VerticalScroll)
        company = self.company
        if company is None:
            return
        rows = (
            self.store.messages(self.conversation_row) if self.conversation_row is not None else []
        )
        # The sign-in this conversation still waits for, however the screen came to show it
        # (kept from an `authorization` event): Ctrl+G works on it, not only after saying it again.
        ask = self._open_ask()
        # Cards show the operation's status, so a change there redraws too.
        cards: list[tuple[int, str, int]] = []
        widgets: list[Static] = []
        for message_id, role, text, message in rows:
            if role == "authorization":
                widgets.append(
                    self._sign_in_note(
                        company, message, ask is not None and ask.kept_id == message_id
                    )
                )
                continue
            is_company = role == "company"
            # ⚠ on a look-alike name; the picker above shows the verified domain.
            who = (
                company_content(company.name, company.domain, 40, with_domain=False)
                if is_company
                else Content.styled("You", "bold")
            )
            widgets.append(
                MessageView(
                    Content.assemble(who, "\n", safe_content(text or "")),
                    classes="-company" if is_company else "-person",
                )
            )
            operation = carried_operation(message) if is_company else None
            if operation is None:
                continue
            operation_id = str(operation.get("operation_id", ""))
            row = operation_row_for(self.store, company.id, operation_id)
            if row is None:
                widgets.append(
                    Static(
                        Content.assemble(
                            ("This message carried an operation poppy could not accept: ", "bold"),
                            safe_line_content(operation_id, 80),
                        ),
                        classes="message",
                    )
                )
                continue
            record = self.store.get_operation(row)
            # The revision this message carried, not the operation's newest: an earlier message
            # must keep showing the terms it proposed.
            carried = next(
                (r for r in self.store.revisions(row) if r.revision == operation.get("revision")),
                record.current,
            )
            cards.append((row, record.status.value, record.current.id))
            widgets.append(OperationCard(row, self._card(record, carried)))
        shown = (self.conversation_row, len(rows), tuple(cards), ask is not None)
        if shown == self._shown:
            return
        self._shown = shown
        with self.app.batch_update():
            await log.remove_children()
            if not widgets:
                widgets.append(
                    Static(Content("No messages yet. Say hello below."), classes="empty")
                )
            await log.mount_all(widgets)
        log.scroll_end(animate=False)

    def _open_ask(self) -> Any:
        """The sign-in this conversation still waits for (agent/sign_in_asks.py), offered on Ctrl+G."""
        from poppy_tui.agent.sign_in_asks import open_sign_in_asks

        if self.conversation_row is None or self.company is None:
            return None
        asks = open_sign_in_asks(self.agent, self.conversation_row)
        if not asks:
            return None
        ask = asks[-1]
        if ask.text and self.awaiting_sign_in is None:
            self._ask_sign_in(ask.company, ask.text, ask.challenge)
        return ask

    def _sign_in_note(
        self, company: CompanyRecord, event: dict[str, Any], still_open: bool
    ) -> Static:
        from poppy_tui.protocol.challenges import SIGN_IN_REQUIRED, Challenge, challenge_from_fields

        challenge = challenge_from_fields(event) or Challenge("sign_in", SIGN_IN_REQUIRED)
        said = plain_line(self.agent.sessions.challenge_detail(company, challenge), 300)
        if still_open:
            then = "Ctrl+G: sign in, then your message is said again."
        elif self.agent.signins.covers(company, list(challenge.scopes)):
            then = "Signed in since."
        else:
            then = ""  # answered by a later message of yours
        return Static(
            Content.assemble(("poppy  ", "bold"), said, ". ", (then, "bold")),
            classes="message talk-sign-in",
        )

    def _card(self, record: Any, carried: Any) -> Content:
        replaced = carried.id != record.current.id
        waiting = record.status in (Status.PENDING, Status.WITHDRAWN)
        if replaced:
            state, hint = "replaced by a newer revision", "Enter or click: see the newest revision"
        else:
            state = record_status_label(record)
            hint = "Enter or click: review it and decide" if waiting else "Enter or click: see it"
        return Content.assemble(
            ("OPERATION  ", "bold"),
            safe_line_content(record.operation_id, 60),
            ("  revision ", "dim"),
            safe_line_content(carried.revision, 60),
            ("   " + state, "bold"),
            "\n",
            # Wrapped, not cut at a fixed width: an old and a new proposal differ late in the line
            # ("…from Sat 10:00 to …"), and a card cut there would make them look the same.
            first_line(carried.summary, CARD_SUMMARY_CHARS),
            "\n",
            Content.styled(hint, "italic"),
        )

    # ---- talking --------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.company is None:
            self.notify("Pick a Company to talk to first.", markup=False)
            return
        event.input.value = ""
        self.say(self.company, text)

    @work(group="talk-say", exclusive=False)
    async def say(self, company: CompanyRecord, text: str) -> None:
        try:
            result = await self.agent.say(
                company, text, conversation_row=self.conversation_row, origin="tui"
            )
        except Exception as exc:  # noqa: BLE001 - said in a toast; the message stays to send again
            self._ask_sign_in(company, text, getattr(exc, "challenge", None))
            self.notify(f"Not sent: {plain_line(exc)}", severity="error", markup=False, timeout=10)
            return
        self.conversation_row = result.conversation_row
        self._ask_sign_in(company, text, result.challenge)
        if result.challenge is not None:
            # An `authorization` event (or a challenge): shown, never skipped.
            shown = result.detail or self.agent.sessions.challenge_detail(company, result.challenge)
            self.notify(
                f"{plain_line(shown)}. Ctrl+G: sign in, then say it again.",
                severity="warning",
                markup=False,
                timeout=15,
            )
        await self.show_messages()

    def _ask_sign_in(self, company: CompanyRecord, text: str, challenge: Any) -> None:
        needs = challenge is not None and getattr(challenge, "needs_sign_in", False)
        self.awaiting_sign_in = (company, text, challenge) if needs else None
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "sign_in_and_resend":
            return self.awaiting_sign_in is not None
        return True

    def action_sign_in_and_resend(self) -> None:
        if self.awaiting_sign_in is not None:
            self.sign_in_then_say(*self.awaiting_sign_in)

    @work(group="talk-sign-in", exclusive=True)
    async def sign_in_then_say(self, company: CompanyRecord, text: str, challenge: Any) -> None:
        from poppy_tui.ui.screens.signin import sign_in

        if await sign_in(self.app, company.id, list(challenge.scopes) or None):
            self.awaiting_sign_in = None
            self.say(self.agent.store.get_company(company.id), text)

    def action_refresh_conversation(self) -> None:
        if self.conversation_row is not None:
            self.refresh_conversation(self.conversation_row)

    @work(group="talk-refresh", exclusive=True)
    async def refresh_conversation(self, conversation_row: int) -> None:
        try:
            await self.agent.refresh_conversation(conversation_row)
        except Exception as exc:  # noqa: BLE001 - said in a toast; the next look tries again
            self.notify(
                f"Could not check for replies: {plain_line(exc)}", severity="error", markup=False
            )
            return
        await self.show_messages()

    def action_back(self) -> None:
        # Opened as a mode (t / n), this screen is alone on its stack: back means the inbox.
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.poppy.action_show_inbox()
