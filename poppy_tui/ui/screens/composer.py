"""Make a request without a script: pick a Company, one of its API operations or MCP tools,
fill in the inputs its schema describes, and send. An operation in the answer opens its review."""

from __future__ import annotations

import json
from typing import Any, Literal

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from poppy_tui.agent.store.records import CompanyRecord
from poppy_tui.ui.format import company_interfaces
from poppy_tui.ui.safe import json_content, plain_line, safe_content, safe_line_content
from poppy_tui.ui.schema_forms import (
    Action,
    FormError,
    FormField,
    api_actions,
    build_request,
    tool_actions,
)
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.company_select import CompanySelect

OUTCOME_TEXT = {
    "performed": "DONE — the Company performed the request.",
    "operation": "APPROVAL NEEDED — the Company returned an operation; nothing was done yet. Opening its review.",
    "not_performed": "NOT PERFORMED — the Company refused or failed the request.",
    "unknown": "OUTCOME UNKNOWN — no definite answer came back.",
}


# Below this many columns the operations list sits above the form instead of beside it.
NARROW_BELOW = 110


def _input_type(field: FormField) -> Literal["integer", "number", "text"]:
    if field.type == "integer":
        return "integer"
    return "number" if field.type == "number" else "text"


# What the right side says before anything is picked, and once a Company's list is shown.
PICK_COMPANY = "Pick a Company, then one of its operations or tools."
PICK_ACTION = "Press Enter on an operation or tool to fill in its request."
# A list entry's label and title: long ones wrap in the list instead of being cut.
LIST_LINE_MAX = 200


class ComposerScreen(PoppyScreen):
    TITLE_TEXT = "New request"
    NAV_MODE = "compose"
    TYPING = True
    AUTO_FOCUS = "#composer-company"
    BINDINGS = [
        Binding("ctrl+s", "send", "Send", id="send_request", priority=True),
        Binding(
            "ctrl+g",
            "sign_in_and_resend",
            "Sign in, send again",
            id="sign_in_and_resend",
            priority=True,
        ),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self, company_id: int | None = None) -> None:
        super().__init__()
        self.initial_company_id = company_id
        self.company: CompanyRecord | None = None
        self.actions: list[Action] = []
        self.action: Action | None = None
        self.field_ids: dict[str, FormField] = {}
        self.last_result: Any = None
        # (company, action, built request, challenge) after a sign-in challenge: ctrl+g signs in, then resends.
        self.awaiting_sign_in: tuple[Any, Any, Any, Any] | None = None

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Horizontal(id="composer-company-row"):
            yield CompanySelect(
                prompt="Pick a Company",
                id="composer-company",
                preselect=self.initial_company_id,
                pick_only_one=True,
            )
        with Horizontal(id="composer-main"):
            yield OptionList(id="composer-actions")
            # Not focusable: Shift+Tab from the form must land on something you can see and use.
            with VerticalScroll(id="composer-right", can_focus=False):
                yield Static(Content(PICK_COMPANY), id="composer-title")
                yield Static(id="composer-description", classes="field-help")
                yield Vertical(id="composer-form")
                yield Button(Content("Send (ctrl+s)"), id="composer-send", disabled=True)
                yield Static(id="composer-result")
        yield PoppyFooter()

    def on_resize(self) -> None:
        # Narrow, the list goes above the form at full width: side by side at 80 columns both
        # were too thin to read ("/api/orders/{order_id}/exch" "anges").
        self.set_class(self.app.size.width < NARROW_BELOW, "-narrow")
        super().on_resize()

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < NARROW_BELOW, "-narrow")
        self.query_one("#composer-result").display = False
        self.refresh_data()

    def choose_company(self, company_id: int) -> None:
        """Pick this Company, as the Companies screen asks; the box and the screen then agree."""
        if not self.is_mounted:
            self.initial_company_id = company_id  # read by compose
            return
        self.refresh_data()
        if not self.query_one("#composer-company", CompanySelect).choose(company_id):
            # Not offered here (Talk lists only Companies with an agent).
            self.notify("That Company has no agent to talk to.", markup=False)

    def refresh_data(self) -> None:
        self.query_one("#composer-company", CompanySelect).show_companies(
            self.store.list_companies()
        )

    # ---- picking --------------------------------------------------------------------------

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "composer-company":
            return
        event.stop()
        if not isinstance(event.value, int):
            return
        self.company = self.store.get_company(event.value)
        self.load_actions(self.company)

    @work(group="composer-actions", exclusive=True)
    async def load_actions(self, company: CompanyRecord) -> None:
        listing = self.query_one("#composer-actions", OptionList)
        listing.clear_options()
        listing.add_option(Option(Content("Loading what this Company offers…"), disabled=True))
        actions: list[Action] = []
        problems: list[str] = []
        offered = company_interfaces(company)
        if "API" in offered:
            try:
                actions += api_actions(await self.agent.fetch_openapi(company))
            except Exception as exc:  # noqa: BLE001 - said on the screen; the other interface may still work
                problems.append(f"OpenAPI: {exc}")
        if "MCP" in offered:
            try:
                actions += tool_actions(await self.agent.list_tools(company))
            except Exception as exc:  # noqa: BLE001 - said on the screen; the other interface may still work
                problems.append(f"MCP: {exc}")
        self.actions = actions
        listing.clear_options()
        for index, action in enumerate(actions):
            listing.add_option(
                Option(
                    # The list wraps a long line itself: a cut at 60 characters hid a few, behind a
                    # marker longer than they were ("appli…(+3 chars)").
                    Content.assemble(
                        safe_line_content(action.label, LIST_LINE_MAX).stylize("bold"),
                        ("  needs approval" if action.needs_approval else "", "italic"),
                        "\n  ",
                        safe_line_content(action.title, LIST_LINE_MAX),
                    ),
                    id=str(index),
                )
            )
        if not actions:
            listing.add_option(
                Option(Content("This Company offers no API operations or tools."), disabled=True)
            )
        for problem in problems:
            self.notify(plain_line(problem), severity="error", markup=False, timeout=10)
        if actions:
            # Something highlighted from the start, so Enter and the arrows do what they show.
            listing.highlighted = 0
            listing.focus()
            self.query_one("#composer-title", Static).update(Content(PICK_ACTION))

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None:
            return
        await self.show_form(self.actions[int(event.option.id)])

    async def show_form(self, action: Action) -> None:
        self.action = action
        self.query_one("#composer-title", Static).update(
            Content.assemble(
                safe_line_content(action.label, 80).stylize("bold"),
                "  ",
                safe_line_content(action.title, 80),
            )
        )
        self.query_one("#composer-description", Static).update(safe_content(action.description))
        form = self.query_one("#composer-form", Vertical)
        await form.remove_children()
        self.field_ids = {}
        widgets: list[Widget] = []
        for index, f in enumerate(action.fields):
            widget_id = f"field-{index}"
            self.field_ids[widget_id] = f
            # Names, titles and types all come from the Company's schema.
            label = Content.assemble(
                safe_line_content(f.title or f.name, 60),
                (f"  {f.location} ", "dim"),
                safe_line_content(f.name, 60).stylize("dim") if f.title else "",
                safe_line_content(f"  {f.type}", 30).stylize("dim") if f.type else "",
                (" *required" if f.required else "", "bold"),
            )
            widgets.append(Static(label, classes="field-label"))
            if f.description:
                widgets.append(Static(safe_content(f.description), classes="field-help"))
            widgets.append(self._input_for(f, widget_id))
        if action.raw_body:
            widgets.append(
                Static(
                    Content("JSON body" if action.kind == "api" else "Arguments (JSON)"),
                    classes="field-label",
                )
            )
            widgets.append(TextArea("", id="composer-raw"))
        if not widgets:
            widgets.append(Static(Content("This takes no inputs."), classes="field-help"))
        await form.mount_all(widgets)
        self.query_one("#composer-send", Button).disabled = False
        first = next(iter(form.query("Input, Select, TextArea")), None)
        if first is not None:
            first.focus()

    def _input_for(self, f: FormField, widget_id: str) -> Widget:
        if f.enum or f.type == "boolean":
            values = list(f.enum) if f.enum else [True, False]
            return Select(
                [
                    (
                        safe_line_content(
                            json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v, 60
                        ),
                        v,
                    )
                    for v in values
                ],
                prompt="(leave out)" if not f.required else "Pick one",
                id=widget_id,
            )
        hint = f.example if f.example is not None else f.default
        placeholder = f"e.g. {hint}" if hint is not None else (f.type or "value")
        if f.type in ("object", "array"):
            placeholder += "  (JSON)"
        # Input placeholders are plain text (not markup), but a Company's example can still hold controls.
        return Input(placeholder=plain_line(placeholder, 80), type=_input_type(f), id=widget_id)

    # ---- sending --------------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for widget_id, f in self.field_ids.items():
            widget = self.query_one(f"#{widget_id}")
            if isinstance(widget, Select):
                out[f.key] = "" if widget.value is Select.NULL else widget.value
            elif isinstance(widget, Input):
                out[f.key] = widget.value
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "composer-send":
            self.action_send()

    def action_send(self) -> None:
        if self.company is None or self.action is None:
            self.notify("Pick a Company and an operation first.", markup=False)
            return
        raw = self.query("#composer-raw")
        raw_text = raw.first(TextArea).text if raw else ""
        try:
            built = build_request(self.action, self.values(), raw_text)
        except FormError as exc:
            self.notify(plain_line(exc), severity="error", markup=False)
            return
        self.send(self.company, self.action, built)

    @work(group="composer-send", exclusive=True)
    async def send(self, company: CompanyRecord, action: Action, built: Any) -> None:
        result_view = self.query_one("#composer-result", Static)
        result_view.display = True
        result_view.update(Content("Sending…"))
        self.query_one("#composer-send", Button).disabled = True
        try:
            if action.kind == "api":
                result = await self.agent.call_api(
                    company, action.method, built.path, built.body, origin="tui"
                )
            else:
                result = await self.agent.call_tool(
                    company, action.name, built.arguments, origin="tui"
                )
        except Exception as exc:  # noqa: BLE001 - said on the screen as the call's result
            result_view.update(Content.assemble(("FAILED — ", "bold"), safe_content(str(exc))))
            return
        finally:
            self.query_one("#composer-send", Button).disabled = False
        self.last_result = result
        head = OUTCOME_TEXT.get(result.outcome, result.outcome)
        status = f"  (HTTP {result.status})" if result.status is not None else ""
        parts: list[Content | str | tuple[str, str]] = [(head + status, "bold")]
        if result.detail:
            parts += ["\n", safe_content(result.detail)]
        challenge = getattr(result, "challenge", None)
        if challenge is not None and challenge.needs_sign_in:
            self.awaiting_sign_in = (company, action, built, challenge)
            parts += ["\n", ("Ctrl+G: sign in, then send this request again", "bold")]
        else:
            self.awaiting_sign_in = None
        self.refresh_bindings()
        if result.body is not None:
            parts += ["\n", json_content(result.body)]
        result_view.update(Content.assemble(*parts))
        if result.outcome == "operation" and result.operation_row is not None:
            self.poppy.open_review(result.operation_row)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "sign_in_and_resend":
            return self.awaiting_sign_in is not None
        return True

    def action_sign_in_and_resend(self) -> None:
        if self.awaiting_sign_in is not None:
            self.sign_in_and_resend(*self.awaiting_sign_in)

    @work(group="composer-sign-in", exclusive=True)
    async def sign_in_and_resend(
        self, company: CompanyRecord, action: Any, built: Any, challenge: Any
    ) -> None:
        from poppy_tui.ui.screens.signin import sign_in

        if await sign_in(self.app, company.id, list(challenge.scopes) or None):
            self.awaiting_sign_in = None
            self.send(self.agent.store.get_company(company.id), action, built)

    def action_back(self) -> None:
        # Opened as a mode (t / n), this screen is alone on its stack: back means the inbox.
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.poppy.action_show_inbox()
