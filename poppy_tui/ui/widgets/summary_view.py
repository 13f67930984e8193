"""The Company's summary, rendered by safety (links, images and HTML stay literal text)."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from poppy_tui.ui.safe import render_summary


class SummaryText(Static):
    """The summary itself. Only ever given safety's RenderedSummary.content."""

    DEFAULT_CLASSES = "summary-text"

    def __init__(self, summary: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_summary(summary)

    def show_summary(self, summary: str) -> None:
        self.rendered = render_summary(summary)
        self.update(self.rendered.content)


class SummaryView(VerticalScroll, can_focus=True):
    """The scrollable body of the review screen, where focus starts: findings first,
    then the summary, terms and request. Scrolling keys work here; nothing in it approves."""

    DEFAULT_CLASSES = "summary-view"
