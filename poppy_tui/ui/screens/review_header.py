"""The review's fixed header, above and outside the scrolling summary so no summary can imitate
it: the Company as the store's company record names it (name, where it was discovered, its base
URL, a warning where the name looks like another), the operation (its ID, which revision of how
many, the interface it came by, when it was received, who asked, whose account it belongs to),
and the countdown to its expiry. A part of ReviewScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from poppy_tui.agent.store.records import OperationRecord
from poppy_tui.safety.account_owner import owner_line
from poppy_tui.ui.format import interface_label, local_time
from poppy_tui.ui.safe import company_content, company_label, safe_line_content, strong
from poppy_tui.ui.who_asked import asked_by_parts
from poppy_tui.ui.widgets.countdown import Countdown


class ReviewHeader(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        store: Any

        def _change_kind(self) -> str | None: ...

    def _show_header(self, record: OperationRecord) -> None:
        """The header's lines for the revision the review shows (record.current)."""
        current = record.current
        company = record.company
        revisions = self.store.revisions(record.id)
        self.query_one("#company-line", Static).update(
            Content.assemble(
                ("Company  ", "dim"),
                company_content(
                    company.name, company.domain, 80, with_domain=False
                ),  # the domain follows
                ("   discovered at  ", "dim"),
                strong(company.domain, 80),
                ("   ", ""),
                safe_line_content(company.base_url, 80).stylize("dim"),
                "" if company.supports_operations else "   (does not advertise operations v2)",
                "\n" + warning
                if (warning := company_label(company.name, company.domain).warning)
                else "",
            )
        )
        number = next((i for i, r in enumerate(revisions, 1) if r.id == current.id), len(revisions))
        what = self._change_kind()
        of = f"  ({number} of {len(revisions)}" + (
            f", {what} only)" if what == "new expiry" else ")"
        )
        self.query_one("#operation-line", Static).update(
            Content.assemble(
                ("Operation  ", "dim"),
                safe_line_content(record.operation_id, 80),
                ("   revision  ", "dim"),
                safe_line_content(current.revision, 80),
                (of, "dim"),
                # A line of its own: run on, it wrapped at 80 columns wherever the IDs' lengths put
                # the edge, "via" / "MCP" among others (Textual breaks at any space, no-break ones too).
                ("\nvia ", "dim"),
                interface_label(record.interface),
                ("   received ", "dim"),
                local_time(current.received_at),
                *asked_by_parts(self.store.asked_by(record.id)),  # ui/who_asked.py
                # Returned signed in: the account's (Ops 3), and which one, where known.
                *(
                    (("\nbelongs to ", "dim"), owner_line(record.account))
                    if record.account_owned
                    else ()
                ),
            )
        )
        self.query_one("#review-expiry", Countdown).set_target(current.expires_at)
