"""Every finding about an operation, worst first, labelled in words (not colour alone)."""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

# The words are the review's, shared with `poppy-tui web` (agent/review_words.py).
from poppy_tui.agent.review_words import (  # noqa: F401 (imported from here too)
    SEVERITY_LABEL,
    badge_counts,
    checks_title,
    severity_label,
)


def finding_line(finding: Any) -> Content:
    # Here, not at the top: the inbox imports this module for badge_counts, before its first frame.
    from poppy_tui.ui.safe import safe_content, safe_line_content

    label = severity_label(finding.severity)
    # The message may quote the Company's text, so it goes through safe_content.
    parts: list[Content | str | tuple[str, str]] = [
        (label, "bold"),
        " ",
        safe_content(finding.message),
    ]
    if getattr(finding, "field", None):  # a terms path: the Company chose its keys
        parts += ["  ", safe_line_content(f"[{finding.field}]", 80).stylize("dim")]
    return Content.assemble(*parts)


class DiscrepancyPanel(Vertical):
    """Sits above the summary so it is read first. Findings come danger first from check_operation."""

    DEFAULT_CLASSES = "discrepancy-panel"

    def __init__(self, findings: Iterable[Any] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._findings = list(findings)

    def compose(self) -> ComposeResult:
        yield from self._lines()

    def _lines(self) -> list[Static]:
        lines = [Static(Content(checks_title(self._findings)), classes="discrepancy-title")]
        lines += [Static(finding_line(f), classes=f"finding -{f.severity}") for f in self._findings]
        return lines

    async def set_findings(self, findings: Iterable[Any]) -> None:
        self._findings = list(findings)
        self._set_border()
        await self.remove_children()
        await self.mount_all(self._lines())

    def on_mount(self) -> None:
        self._set_border()

    def _set_border(self) -> None:
        dangers, warnings = badge_counts(self._findings)
        self.set_class(dangers > 0, "-has-danger")
        self.set_class(dangers == 0 and warnings > 0, "-has-warning")
