"""A review in a small window says what it can't show (docs/tui.md, "Narrow terminals"): while
the summary and the terms have not all been on screen, a line under the scrolling part says how
many more lines are below, and the confirmation says that part of them was not on screen
(approving stays possible: the person may know the terms). A part of ReviewScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

if TYPE_CHECKING:
    from poppy_tui.ui.widgets.summary_view import SummaryView


class ReviewFit(Screen):
    """A base of ReviewScreen: `summary_seen`, and the "more below" line (#review-more)."""

    summary_seen = False  # the end of the terms (or of the summary) has been on screen

    def _follow_fit(self) -> None:
        """Called once mounted: look again whenever the body scrolls or changes size."""
        view = self._body()
        self.watch(view, "scroll_y", self._fit_later, init=False)
        self.watch(view, "virtual_size", self._fit_later, init=False)
        self.watch(view, "size", self._fit_later, init=False)

    def _body(self) -> SummaryView:
        from poppy_tui.ui.widgets.summary_view import SummaryView

        return self.query_one("#summary-view", SummaryView)

    def _fit_later(self, *_: object) -> None:
        self.call_after_refresh(self.check_fit)

    def new_revision_shown(self) -> None:
        """New terms are unread again, wherever the body was scrolled."""
        self.summary_seen = False
        self._fit_later()

    def check_fit(self) -> None:
        if not self.is_mounted:
            return
        view = self._body()
        end = self.query_one("#terms")
        if not end.display or end.region.height == 0:
            end = self.query_one("#summary")
        visible = view.region
        if visible.height > 0 and end.region.bottom <= visible.bottom and end.region.height > 0:
            self.summary_seen = True
        more = self.query_one("#review-more", Static)
        hidden = max(0, view.virtual_size.height - int(view.scroll_y) - view.size.height)
        shown = not self.summary_seen and hidden > 0
        text = f"↓ {hidden} more lines below: the summary and terms go on (PgDn)" if shown else ""
        if str(more.render()) != text:
            more.update(Content(text))
        more.display = shown
