"""The full record of one operation: every revision, decision, attempt and event. Read-only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from poppy_tui.agent.store.records import Status
from poppy_tui.ui.who_asked import asked_by_parts
from poppy_tui.ui.format import (
    interface_label,
    local_time,
    record_status_label,
    record_status_meaning,
)
from poppy_tui.ui.safe import (
    company_content,
    json_content,
    render_summary,
    safe_content,
    safe_line_content,
    strong,
)
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.outcome_view import progress_content
from poppy_tui.ui.widgets.request_view import RequestView
from poppy_tui.ui.widgets.terms_table import TermsTable

REVIEWABLE = (
    Status.PENDING,
    Status.WITHDRAWN,
    Status.APPROVED,
    Status.SENDING,
    Status.OUTCOME_UNKNOWN,
)


class HistoryDetailScreen(PoppyScreen):
    TITLE_TEXT = "Operation record"
    AUTO_FOCUS = "#detail-body"
    BINDINGS = [
        Binding("o", "open_review", "Open review", id="open_review"),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self, operation_row: int) -> None:
        super().__init__()
        self.operation_row = operation_row
        self.status: Status | None = None

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        yield VerticalScroll(id="detail-body", classes="detail-body", can_focus=True)
        yield PoppyFooter()

    async def on_mount(self) -> None:
        await self._build()

    def refresh_data(self) -> None:
        self.run_exclusive(self._build, "detail")

    async def _build(self) -> None:
        store = self.store
        record = store.get_operation(self.operation_row)
        self.status = record.status
        company = record.company
        body = self.query_one("#detail-body", VerticalScroll)
        scroll = body.scroll_y
        overview = Content.assemble(
            ("Company  ", "dim"),
            company_content(company.name, company.domain, 80, with_domain=False),
            ("  at ", "dim"),
            strong(company.domain, 80),
            "\n",
            ("Operation  ", "dim"),
            safe_line_content(record.operation_id, 80),
            ("   via ", "dim"),
            interface_label(record.interface),
            *asked_by_parts(store.asked_by(record.id)),  # ui/who_asked.py
            "\n",
            ("Status  ", "dim"),
            (record_status_label(record).upper(), "bold"),
            "  ",
            record_status_meaning(record),
            "\n",
            ("Created ", "dim"),
            local_time(record.created_at),
            ("   updated ", "dim"),
            local_time(record.updated_at),
        )
        if record.idempotency_key:
            overview += Content.assemble("\n", ("Idempotency-Key  ", "dim"), record.idempotency_key)
        widgets: list[Static] = [
            Static(overview, classes="detail-block"),
            Static(Content("What you asked for"), classes="section-title"),
            RequestView(record.request),
        ]
        revisions = store.revisions(record.id)
        widgets.append(Static(Content(f"Revisions ({len(revisions)})"), classes="section-title"))
        for number, revision in enumerate(revisions, 1):
            marks = []
            if revision.id == record.current.id:
                marks.append("current")
            if revision.id == record.approved_revision_id:
                marks.append("approved")
            widgets.append(
                Static(
                    Content.assemble(
                        (f"#{number}  ", "bold"),
                        safe_line_content(revision.revision, 80),
                        (f"  {', '.join(marks)}" if marks else "", "bold"),
                        ("\nreceived ", "dim"),
                        local_time(revision.received_at),
                        ("   seen ", "dim"),
                        local_time(revision.seen_at) if revision.seen_at else "never",
                        ("\nexpires ", "dim"),
                        local_time(revision.expires_at),
                        ("  as written: ", "dim"),
                        safe_line_content(revision.expires_at_text, 60).stylize("dim"),
                        "\n\n",
                        render_summary(revision.summary).content,
                    ),
                    classes="detail-block",
                )
            )
            widgets.append(TermsTable(revision.terms))
        by_revision = {r.id: r.revision for r in revisions}
        decisions = store.decisions(record.id)
        lines: list[Content | str | tuple[str, str]] = []
        for d in decisions:
            lines += [
                local_time(d.decided_at),
                "  ",
                (d.decision.replace("_", " "), "bold"),
                "  revision ",
                safe_line_content(by_revision.get(d.revision_id, "?"), 80),
                f"  by {d.actor}",
            ]
            if d.note:
                lines += ["  ", safe_content(d.note)]
            lines.append("\n")
        widgets += [
            Static(Content(f"Decisions ({len(decisions)})"), classes="section-title"),
            Static(
                Content.assemble(*lines) if lines else Content.styled("No decisions yet.", "dim")
            ),
            Static(Content("Attempts and outcome"), classes="section-title"),
            Static(progress_content(record, store.attempts(record.id))),
        ]
        events = store.events(record.id)
        lines = []
        for e in events:
            lines += [local_time(e.at), "  ", (e.kind, "bold")]
            if e.detail:
                lines += ["  ", safe_content(e.detail)]
            lines.append("\n")
        widgets += [
            Static(Content(f"Events ({len(events)})"), classes="section-title"),
            Static(Content.assemble(*lines) if lines else Content.styled("No events.", "dim")),
            Static(Content("Current revision as received"), classes="section-title"),
            Static(json_content(record.current.raw), classes="operation-json"),
        ]
        with self.app.batch_update():
            await body.remove_children()
            await body.mount_all(widgets)
        body.scroll_to(y=scroll, animate=False)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_review":
            return self.status in REVIEWABLE
        return True

    def action_open_review(self) -> None:
        self.poppy.open_review(self.operation_row)

    def action_back(self) -> None:
        self.app.pop_screen()
