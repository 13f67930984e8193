"""The Companies poppy has discovered, what they offer, and a way to add one."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import DataTable, Input, Static

from poppy_tui.agent.store.records import CompanyRecord
from poppy_tui.ui.format import company_interfaces, local_time
from poppy_tui.ui.safe import CELL_MAX, cell, company_label, plain_line
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.tables import TABLE_CHROME, remaining_width, set_columns


# Each layout keeps the sign-in state on screen: it decides whether a request works.
COLUMNS = (
    ("name", "Company", 30),
    ("domain", "Domain", 24),
    ("interfaces", "Interfaces", 24),
    ("operations", "Operations v2", 13),
    ("signed_in", "Signed in", 0),  # takes what the others leave: the kind and every scope
)
# From this wide the base URL and when it was discovered join, and the sign-in has a width of its own.
FULL_FROM = 200
FULL_COLUMNS = (
    ("name", "Company", 30),
    ("domain", "Domain", 24),
    ("interfaces", "Interfaces", 24),
    ("operations", "Operations v2", 13),
    ("signed_in", "Signed in", 44),
    ("discovered", "Discovered", 23),
    ("url", "Base URL", 0),
)
# Narrower than this: who, where, what it offers and whether you are signed in, nothing scrolling sideways.
COMPACT_BELOW = 160
COMPACT_COLUMNS = (
    ("name", "Company", 22),
    ("domain", "Domain", 0),
    ("interfaces", "Interfaces", 14),
    ("operations", "Ops v2", 6),
    ("signed_in", "Signed in", 9),
)
# From this wide the compact layout has room for whole names and "conversation" spelt out.
ROOMY_FROM = 100
ROOMY_COLUMNS = (
    ("name", "Company", 30),
    ("domain", "Domain", 0),
    ("interfaces", "Interfaces", 22),
    ("operations", "Ops v2", 6),
    ("signed_in", "Signed in", 9),
)


def _layout(width: int) -> tuple[tuple[str, str, int], ...]:
    if width < COMPACT_BELOW:
        return ROOMY_COLUMNS if width >= ROOMY_FROM else COMPACT_COLUMNS
    return FULL_COLUMNS if width >= FULL_FROM else COLUMNS


class CompaniesScreen(PoppyScreen):
    TITLE_TEXT = "Companies"
    NAV_MODE = "companies"
    AUTO_FOCUS = "#companies-table"
    BINDINGS = [
        Binding("t", "talk_to", "Talk to it", id="talk_to_company"),
        Binding("plus", "add", "Add a Company", id="add_company"),
        Binding("s", "sign_in", "Sign in", id="sign_in_company"),
        Binding("o", "sign_out", "Sign out", id="sign_out_company"),
        Binding("escape", "leave_add", "Leave the box", id="leave_add_company"),
    ]

    def __init__(self) -> None:
        super().__init__(id="companies")
        self.companies: list[CompanyRecord] = []

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with Horizontal(id="companies-add"):
            yield Input(
                placeholder="Add a Company: its domain, or a loopback URL for a local one  (+)",
                id="add-company",
            )
        yield DataTable(id="companies-table", cursor_type="row", zebra_stripes=True)
        yield Static(
            # A line each, under 76 columns: run together, "s/o:" ended a line at 80 columns and
            # its meaning began the next.
            Content(
                "Enter: make a request to the selected Company   t: talk to its agent\n"
                "s: sign in at it   o: sign out\n"
                "A Company without operations v2 asks for approval on its own site instead."
            ),
            id="companies-help",
            classes="empty",
        )
        yield PoppyFooter()

    def refresh_data(self) -> None:
        from poppy_tui.agent.store.sign_ins import list_sign_ins

        self.companies = self.store.list_companies()
        sign_ins = list_sign_ins(self.store)
        table = self.query_one("#companies-table", DataTable)
        cursor = table.cursor_row
        compact = self.app.size.width < COMPACT_BELOW
        columns = _layout(self.app.size.width)
        flexible = next(k for k, _, w in columns if w == 0)
        rest = remaining_width(
            self.app.size.width,
            (w for k, _, w in columns if k != flexible),
            minimum=15 if compact else 30,
            chrome=4 if compact else TABLE_CHROME,
        )
        set_columns(table, [(k, label, rest if k == flexible else w) for k, label, w in columns])
        table.clear()
        for company in self.companies:
            offers = company_interfaces(company)
            if (
                self.app.size.width < ROOMY_FROM
            ):  # "conversation" is what Talk talks to: the row fits 80
                offers = ["Talk" if label == "conversation" else label for label in offers]
            sign_in = sign_ins.get(company.id)
            values = {
                "name": company_label(
                    company.name, company.domain, CELL_MAX
                ).marked_name,  # ⚠; cell() cuts
                "domain": company.domain,
                "interfaces": ", ".join(offers) or "none",
                "discovered": local_time(company.discovered_at),
                "url": company.base_url,
                "signed_in": ("yes" if sign_in else "no") if compact else _signed_in_text(sign_in),
            }
            supports = Text(
                "yes" if company.supports_operations else "no",
                style="" if company.supports_operations else "dim",
            )
            table.add_row(
                *(
                    supports if k == "operations" else cell(values[k], rest if k == flexible else w)
                    for k, _, w in columns
                ),
                key=str(company.id),
            )
        if self.companies:
            table.move_cursor(row=min(cursor, len(self.companies) - 1))
        self.query_one("#companies-help").display = bool(self.companies)

    def selected(self) -> CompanyRecord | None:
        table = self.query_one("#companies-table", DataTable)
        if not self.companies or table.cursor_row >= len(self.companies):
            return None
        return self.companies[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        company = self.selected()
        if company is not None:
            self.poppy.compose_for(company.id)

    def action_talk_to(self) -> None:
        company = self.selected()
        if company is not None:
            self.poppy.talk_to(company.id)

    def action_sign_in(self) -> None:
        company = self.selected()
        if company is not None:
            from poppy_tui.ui.screens.signin import open_sign_in

            open_sign_in(self.app, company.id, on_done=lambda _: self.refresh_data())

    @work(group="sign-out", exclusive=True)
    async def action_sign_out(self) -> None:
        company = self.selected()
        if company is None:
            return
        result = await self.agent.signins.sign_out(company)
        name = plain_line(company.name, 80)
        if not result.was_signed_in:
            self.notify(f"Not signed in to {name}.", markup=False)
        elif result.revoked:
            self.notify(f"Signed out of {name}; the Company revoked the sign-in.", markup=False)
        else:
            self.notify(
                f"Signed out of {name} here, but the Company could not be told ({plain_line(result.detail, 200)}). "
                "Disconnect poppy-tui on its site.",
                severity="warning",
                markup=False,
                timeout=15,
            )
        self.refresh_data()

    def action_add(self) -> None:
        self.query_one("#add-company").focus()

    def action_leave_add(self) -> None:
        self.query_one("#companies-table").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_add":
            return self.focused is not None and self.focused.id == "add-company"
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.add_company(text)

    @work(group="add-company", exclusive=True)
    async def add_company(self, text: str) -> None:
        try:
            company: Any = await self.agent.add_company(text)
        except Exception as exc:  # noqa: BLE001 - said in a toast: discovery errors name the field (they may quote the Company)
            self.notify(
                f"Could not add {plain_line(text)}: {plain_line(exc)}",
                severity="error",
                markup=False,
                timeout=10,
            )
            return
        self.query_one("#add-company", Input).value = ""
        label = company_label(company.name, company.domain, 80)
        self.notify(
            f"Added {label.text}." + (f" {label.warning}" if label.warning else ""),
            markup=False,
            severity="warning" if label.marked else "information",
        )
        self.refresh_data()
        self.query_one("#companies-table").focus()


def _signed_in_text(record: Any) -> str:
    if record is None:
        return "no"
    return f"{record.kind}: {' '.join(record.scopes) or 'no scopes'}"
