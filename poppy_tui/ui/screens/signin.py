"""Signing in to a Company: one dialog for the three kinds of the core spec.

- Device: the Company's name and verified domain next to the link (shown only when its host,
  read as a browser reads it, is the issuer's, a poppy_domains entry or a subdomain of one that
  is not a public suffix; marked when it is a look-alike), the code and a QR code.
- Direct: the Company's page opens in the browser (only when it is on the Company's own domains,
  by the same rule); the redirect comes back on loopback, or the person pastes the address the
  browser ended on.
- Mediated: where the answers go (the endpoint's host by its ASCII form, marked when it is a
  look-alike) before anything is typed; exactly the fields the Company declares, masked (Input
  password) when secret by declaration or by their words (safety/secret_fields.py); they are
  handed to the agent once and cleared from the dialog; then a masked code step if asked.

The dialog fits 80x24: its status line and keys are always on screen (the steps above them
scroll), the QR code shows only where the screen has room for it beside the rest, and `c` copies
a link through the terminal (OSC 52), since a wrapped link can't be copied in one piece. Its
footer lists only its own keys.

Other screens sign in with `open_sign_in(app, company_id, scopes, on_done)` or, from a worker,
`await sign_in(app, company_id, scopes)`: both end with True only when the sign-in succeeded.
Every Company string is shown through ui/safe.py.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static

from poppy_tui.safety.web_host import show_host
from poppy_tui.safety.wording import followed_by, possessive
from poppy_tui.ui.safe import plain_error, plain_line, safe_line_content, strong
from poppy_tui.ui.screens.base import SCREENS_CSS
from poppy_tui.ui.typed_keys import TYPED_FOCUS_BINDINGS, TypedFocus

KIND_LABELS = {
    "device": ("d", "Device: confirm a code on the Company's site"),
    "direct": ("b", "Direct: sign in on the Company's page in your browser"),
    "mediated": ("m", "Mediated: type the Company's sign-in fields here"),
}


# Lines of the screen the Device step needs beside a QR code (borders, title, scopes, the link,
# the code, the status, the keys, the footer): the QR code shows only where these fit too.
LINES_BESIDE_QR = 18
# The fewest lines the step area keeps on the smallest screen (it scrolls).
MIN_BODY_LINES = 3


class MouseButton(Button, can_focus=False):
    """Clickable, never focused: Enter belongs to the inputs."""


def open_sign_in(
    app: App,
    company_id: int,
    scopes: list[str] | tuple[str, ...] | None = None,
    on_done: Callable[[bool | None], None] | None = None,
    kind: str | None = None,
) -> None:
    """Push the sign-in dialog; `on_done(True)` only when the person signed in."""
    app.push_screen(SignInScreen(company_id, scopes=scopes, kind=kind), on_done)


async def sign_in(
    app: App, company_id: int, scopes: list[str] | tuple[str, ...] | None = None
) -> bool:
    """From a worker: push the dialog and wait; True only when the person signed in."""
    signed_in: bool | None = await app.push_screen_wait(SignInScreen(company_id, scopes=scopes))
    return bool(signed_in)


class SignInScreen(TypedFocus, ModalScreen[bool]):
    CSS_PATH = SCREENS_CSS
    AUTO_FOCUS = None
    # Letters here are the dialog's keys or text in its fields: never a screen switch or quit behind it.
    TYPING = True
    # Tab and Enter move from field to field as typed, however fast (ui/typed_keys.py): a burst
    # from a password manager put the password in the Email field, in clear text (walk C1).
    BINDINGS = [
        *TYPED_FOCUS_BINDINGS,
        Binding("escape", "cancel", "Cancel", id="cancel_sign_in"),
        Binding("d", "start('device')", "Device", id="sign_in_device"),
        Binding("b", "start('direct')", "Browser", id="sign_in_direct"),
        Binding("m", "start('mediated')", "Mediated", id="sign_in_mediated"),
        Binding("c", "copy_link", "Copy link", id="sign_in_copy_link"),
    ]

    def __init__(
        self,
        company_id: int,
        scopes: list[str] | tuple[str, ...] | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(id="sign-in")
        self.company_id = company_id
        self.scopes = list(scopes) if scopes else None
        self.kind = kind
        self.flow: Any = None
        self.offered: tuple[str, ...] = ()
        self.busy = False
        self.link: str | None = None  # the Device or Direct link shown, which `c` copies
        self.qr_lines = 0

    @property
    def agent(self) -> Any:
        return self.app.agent  # type: ignore[attr-defined]

    @property
    def company(self) -> Any:
        return self.agent.store.get_company(self.company_id)

    def compose(self) -> ComposeResult:
        company = self.company
        with Vertical(id="sign-in-dialog"):
            yield Static(
                Content.assemble(
                    "Sign in to ",
                    strong(company.name, 80),
                    ("  at ", "dim"),
                    safe_line_content(show_host(company.domain).line, 120),
                ),
                id="sign-in-title",
            )
            # A new grant replaces the old one: what it holds is asked for again with what is needed.
            asked = self.agent.signins.scopes_to_ask(company, self.scopes)
            scopes = " ".join(asked) if asked else "everything this kind of sign-in offers"
            yield Static(
                Content.assemble(("Scopes  ", "dim"), safe_line_content(scopes, 300)),
                id="sign-in-scopes",
            )
            yield VerticalScroll(id="sign-in-body")
            yield Static("", id="sign-in-status")
            yield Static(Content("Esc: cancel"), id="sign-in-help")
        yield Footer()

    async def on_mount(self) -> None:
        from poppy_tui.agent.signin.errors import SignInError

        company = self.company
        if self.scopes and self.agent.signins.covers(company, self.scopes):
            self.notify(f"Already signed in to {plain_line(company.name, 80)}.", markup=False)
            self.dismiss(True)
            return
        try:
            self.offered = self.agent.signins.offer(company).kinds()
        except SignInError as exc:
            self.fail(str(exc))
            return
        if not self.offered:
            self.fail(f"{company.name} offers no sign-in in its poppy.json.")
            return
        if self.kind is None and len(self.offered) == 1:
            self.kind = self.offered[0]
        if self.kind is not None:
            self.action_start(self.kind)
        else:
            await self.show_choices()

    # ---- keys and fitting -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":  # letters are text while a form takes them, focused or not yet
            return not self.busy and not self._typing() and parameters[0] in self.offered
        if action == "copy_link":
            return self.link is not None
        return True

    def action_copy_link(self) -> None:
        if self.link is None:
            return
        self.app.copy_to_clipboard(self.link)
        self.notify(
            "Link copied, through the terminal (a terminal that doesn't allow it copies nothing).",
            markup=False,
        )

    def on_resize(self) -> None:
        self._fit()

    def _changed(self) -> None:
        """After a step, status or keys change: the footer's keys, then the fit once laid out."""
        self.refresh_bindings()
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The step area takes what the screen leaves after the dialog's other lines, so the
        status and the keys under it are never below the screen; the QR code shows only where
        the screen has room for it and LINES_BESIDE_QR more."""
        if not self.is_mounted:
            return
        room = self.size.height - sum(footer.outer_size.height for footer in self.query(Footer))
        for qr in self.query("#sign-in-qr"):
            qr.display = room >= self.qr_lines + LINES_BESIDE_QR
        dialog = self.query_one("#sign-in-dialog")
        body = self.body()
        others = sum(
            w.outer_size.height + w.styles.margin.height for w in dialog.children if w is not body
        )
        spare = room - dialog.styles.gutter.height - others - body.styles.margin.height
        body.styles.max_height = max(MIN_BODY_LINES, spare)

    # ---- steps ----------------------------------------------------------------------------------

    def body(self) -> VerticalScroll:
        return self.query_one("#sign-in-body", VerticalScroll)

    async def set_body(self, *widgets: Any) -> None:
        """Replace the step shown; the old widgets are gone before the new ones (same ids) mount."""
        body = self.body()
        await body.remove_children()
        await body.mount_all(widgets)
        self._changed()

    def status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#sign-in-status", Static)
        # Cut, if ever, in its middle: a refusal's end says what to do (safety/error_line.py).
        status.update(Content(plain_error(text, 400)))
        status.set_class(error, "-error")
        self._changed()

    def fail(self, text: str) -> None:
        """This sign-in ended: why, and the keys to try again. Its fields take no more typing, so
        the letters are keys again."""
        self.busy = False
        for field in self.body().query(Input):
            field.disabled = True
        self.set_focus(None)
        self.status(text, error=True)
        self._show_keys()

    def _typing(self) -> bool:
        return any(not field.disabled for field in self.body().query(Input))

    def _show_keys(self) -> None:
        """The dialog's line of keys: Esc, and each kind offered once none is under way and no
        field takes the letters as text."""
        keys = ["Esc: cancel"]
        if self.link is not None:
            keys.append("c: copy the link")
        if (
            not self.busy
            and not self._typing()
            and (len(self.offered) > 1 or self.kind is not None)
        ):
            keys.extend(f"{KIND_LABELS[k][0]}: try {k}" for k in self.offered)
        self.query_one("#sign-in-help", Static).update(Content("   ".join(keys)))
        self._changed()

    async def show_choices(self) -> None:
        lines = [
            Content.assemble((f"{KIND_LABELS[k][0]}  ", "bold"), KIND_LABELS[k][1])
            for k in self.offered
        ]
        await self.set_body(
            Static(Content("How do you want to sign in?"), classes="sign-in-question"),
            *(Static(line, classes="sign-in-choice") for line in lines),
        )

    def action_start(self, kind: str) -> None:
        if self.busy or (self.offered and kind not in self.offered):
            return
        self.busy = True
        self.kind = kind
        self.link = None
        self.status(f"Checking {possessive(self.company.name)} authorization server…")
        self._show_keys()
        self.run_worker(self._begin(kind), group="sign-in", exclusive=True, exit_on_error=False)

    async def _begin(self, kind: str, refused: str | None = None) -> None:
        """Start `kind` with a new flow; `refused`: why the last Mediated try failed, said over
        the fresh form."""
        from poppy_tui.agent.signin.errors import SignInError

        if self.flow is not None:
            await self.flow.aclose()
        try:
            self.flow = await self.agent.signins.begin(self.company, kind, self.scopes)
            if kind == "device":
                await self._device()
            elif kind == "direct":
                await self._direct()
            else:
                await self._mediated_form(refused)
        except SignInError as exc:
            self.fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - the dialog must say it stopped, not hang
            self.fail(f"sign-in stopped: {type(exc).__name__}: {exc}")

    async def _device(self) -> None:
        from poppy_tui.agent.signin.qr import qr_text

        flow = self.flow
        await flow.start()
        widgets: list[Any] = []
        where = Content.assemble(
            strong(flow.company_name, 80),
            ("  at ", "dim"),
            safe_line_content(show_host(flow.company_domain).line, 120),
        )
        qr = None
        if flow.link is not None:
            widgets.append(
                Static(Content.assemble("Open this link from ", where, ":"), classes="sign-in-line")
            )
            widgets.append(Static(safe_line_content(flow.link, 500), id="sign-in-link"))
            host = flow.link_host
            if host is not None and host.warning:
                widgets.append(
                    Static(safe_line_content(host.warning, 300), classes="sign-in-warning")
                )
            qr = qr_text(flow.link)
        else:
            widgets.append(
                Static(
                    Content.assemble(
                        where,
                        " gave a sign-in link outside its own domain, so it is not shown. "
                        "Enter the code on the Company's own site.",
                    ),
                    classes="sign-in-line",
                )
            )
        # The code before the QR code: it is what the Company's page asks to compare.
        widgets.append(
            Static(Content.assemble("Code  ", strong(flow.user_code, 64)), id="sign-in-code")
        )
        if qr is not None:
            self.qr_lines = qr.count("\n") + 1
            widgets.append(Static(Text(qr, no_wrap=True), id="sign-in-qr"))
        self.link = flow.link
        await self.set_body(*widgets)
        self._show_keys()
        self.status(f"Waiting for you to confirm on {possessive(flow.company_name)} page…")
        self._finished(await flow.wait())

    async def _direct(self) -> None:
        from poppy_tui.agent.signin.flows import shown_host_of

        flow = self.flow
        url = await flow.start()
        host = shown_host_of(url)
        await self.set_body(
            Static(
                Content.assemble(
                    "Your browser opened "
                    if flow.browser_opened
                    else "Open this in your browser: ",
                    strong(possessive(flow.company_name), 82),
                    " sign-in page:",
                ),
                classes="sign-in-line",
            ),
            Static(safe_line_content(url, 2000), id="sign-in-link"),
            *(
                [Static(safe_line_content(host.warning, 300), classes="sign-in-warning")]
                if host is not None and host.warning
                else []
            ),
            Input(
                # Short enough for the box at 80 columns (walk K12: cut mid-sentence).
                placeholder="Browser can't come back? Paste the address it ended on",
                id="sign-in-paste",
            ),
        )
        self.link = url
        self._show_keys()
        self.status("Waiting for the browser to come back to poppy-tui…")
        self._finished(await flow.wait())

    async def _mediated_form(self, refused: str | None = None) -> None:
        flow = self.flow
        endpoint = flow.endpoint_shown  # as the browser and DNS read it, before anything is typed
        widgets: list[Any] = [
            Static(
                Content.assemble(
                    "Sent once to ",
                    strong(flow.company_name, 80),
                    " at ",
                    safe_line_content(endpoint.line, 120),
                    " and nowhere else; secrets are not kept.",
                ),
                classes="sign-in-line",
                id="sign-in-endpoint",
            )
        ]
        if endpoint.warning:
            widgets.append(
                Static(safe_line_content(endpoint.warning, 300), classes="sign-in-warning")
            )
        for index, field in enumerate(flow.fields):
            kept_secret = field.secret and not field.declared_secret
            widgets.append(
                Static(
                    Content.assemble(
                        safe_line_content(field.label, 100),
                        ("  (hidden, not kept: it reads as a password or a code)", "dim")
                        if kept_secret
                        else "",
                    ),
                    classes="sign-in-label",
                )
            )
            widgets.append(
                Input(password=field.secret, id=f"sign-in-field-{index}", classes="sign-in-field")
            )
        widgets.append(MouseButton("Sign in", id="sign-in-submit", variant="primary"))
        await self.set_body(*widgets)
        self.busy = False
        if refused is None:
            self.status("Fill in the fields, then Enter on the last one.")
        else:
            self.status(followed_by(refused, "try again"), error=True)
        self._show_keys()
        # Now, not after a refresh: a key typed as the form appears goes into its first field.
        self.set_focus(self.query_one("#sign-in-field-0", Input))

    async def _code_form(self, message: str) -> None:
        shown = message or "The Company sent you a one-time code."
        await self.set_body(
            Static(
                Content.assemble(
                    strong(self.flow.company_name, 80), " says: ", safe_line_content(shown, 300)
                ),
                classes="sign-in-line",
            ),
            Input(placeholder="One-time code", password=True, id="sign-in-code-input"),
        )
        self.busy = False
        self.status("Enter the code, then Enter.")
        self._show_keys()
        self.set_focus(self.query_one("#sign-in-code-input", Input))

    # ---- input ------------------------------------------------------------------------------------

    def enter_moves_focus_to(self, field: Input) -> tuple[Any, bool] | None:
        """Enter in a Mediated field before the last moves to the next one at once; on the last
        (and in the code and paste boxes) it submits, once the field has every key typed."""
        if not (field.id or "").startswith("sign-in-field-"):
            return None
        fields = list(self.query(".sign-in-field").results(Input))
        if field not in fields or field is fields[-1]:
            return None
        return fields[fields.index(field) + 1], False

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        event.stop()
        widget_id = event.input.id or ""
        if widget_id == "sign-in-paste":
            if event.value.strip():
                self.run_worker(
                    self._paste(event.value.strip()), group="sign-in-paste", exit_on_error=False
                )
        elif widget_id == "sign-in-code-input":
            code = event.value
            event.input.value = ""
            self.run_worker(
                self._submit_code(code), group="sign-in-send", exclusive=True, exit_on_error=False
            )
        elif widget_id.startswith("sign-in-field-"):
            fields = list(self.query(".sign-in-field").results(Input))
            if event.input is fields[-1]:
                self._submit_fields()
            else:
                fields[fields.index(event.input) + 1].focus()

    @on(Button.Pressed, "#sign-in-submit")
    def submit_pressed(self) -> None:
        self._submit_fields()

    def _submit_fields(self) -> None:
        if self.busy:
            return
        fields = list(self.query(".sign-in-field").results(Input))
        values = {field.name: fields[i].value for i, field in enumerate(self.flow.fields)}
        if not all(values.values()):
            self.status("Fill in every field.", error=True)
            return
        for widget in fields:  # the dialog keeps no copy of what was typed
            widget.value = ""
            widget.disabled = True
        self.busy = True
        self.run_worker(
            self._submit(values), group="sign-in-send", exclusive=True, exit_on_error=False
        )

    async def _submit(self, values: dict[str, str]) -> None:
        from poppy_tui.agent.signin.errors import SignInError
        from poppy_tui.agent.signin.flows import CodeRequired

        self.status(f"Signing in to {self.flow.company_name}…")
        try:
            result = await self.flow.submit(values)
        except SignInError as exc:
            # A fresh form, with why under it and the keys in it: the credentials went once, so
            # another try is another sign-in.
            self.busy = True
            self.run_worker(
                self._begin("mediated", refused=str(exc)),
                group="sign-in",
                exclusive=True,
                exit_on_error=False,
            )
            return
        finally:
            values.clear()
        if isinstance(result, CodeRequired):
            await self._code_form(result.message)
        else:
            self._finished(result)

    async def _submit_code(self, code: str) -> None:
        from poppy_tui.agent.signin.errors import CodeRejected, SignInError
        from poppy_tui.agent.signin.flows import CodeRequired

        try:
            result = await self.flow.submit_code(code)
        except CodeRejected as exc:  # the Company keeps the code step open: the code again
            self.status(followed_by(str(exc), "type the code again"), error=True)
            for field in self.query("#sign-in-code-input").results(Input):
                field.focus()
            return
        except SignInError as exc:
            self.fail(str(exc))
            return
        if isinstance(result, CodeRequired):
            await self._code_form(result.message)
        else:
            self._finished(result)

    async def _paste(self, url: str) -> None:
        from poppy_tui.agent.signin.errors import SignInError

        try:
            grant = await self.flow.complete(url)
        except SignInError as exc:
            self.status(str(exc), error=True)
            return
        self.workers.cancel_group(self, "sign-in")
        self._finished(grant)

    # ---- the end ------------------------------------------------------------------------------------

    def _finished(self, grant: Any) -> None:
        self.busy = False
        self.link = None
        who = f" as {plain_line(grant.account, 80)}" if grant.account else ""
        self.notify(
            f"Signed in to {plain_line(self.company.name, 80)}{who}, scopes {plain_line(' '.join(grant.scopes), 200)}.",
            markup=False,
        )
        self.dismiss(True)

    async def action_cancel(self) -> None:
        self.workers.cancel_group(self, "sign-in")
        if self.flow is not None:
            await self.flow.aclose()
        self.dismiss(False)

    async def on_unmount(self) -> None:
        if self.flow is not None:
            await self.flow.aclose()
