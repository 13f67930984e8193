"""A review in a small window says what it can't show (docs/tui.md, "Narrow terminals"): while
the summary and the terms have not all been on screen, a line under the scrolling part says how
many more lines are below, and the confirmation says that part of them was not on screen
(approving stays possible: the person may know the terms). A part of ReviewScreen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from poppy_tui.ui.screens.confirm_approve import SHORT_BELOW_LINES

if TYPE_CHECKING:
    from poppy_tui.ui.widgets.summary_view import SummaryView


# At most this many looks again, 50 ms apart, for a layout still catching up with the revision
# shown (a few seconds; a widget that never fits its content's height is not looked at for ever).
LAYOUT_LOOKS = 60


class ReviewFit(Screen):
    """A base of ReviewScreen: `summary_seen`, and the "more below" line (#review-more)."""

    summary_seen = False  # the end of the terms (or of the summary) has been on screen

    def _follow_fit(self) -> None:
        """Called once mounted: look again whenever the body scrolls or changes size."""
        view = self._body()
        self.watch(view, "scroll_y", self._fit_later, init=False)
        self.watch(view, "virtual_size", self._fit_later, init=False)

    def is_short(self) -> bool:
        """Below 24 lines: the fixed header and banner leave the body a few lines, and what is
        below them is said (at 80x24 and more the body shows the findings and the summary)."""
        return self.app.size.height < SHORT_BELOW_LINES

    def on_resize(self) -> None:
        self._fit_later()  # a new size shows more or less of the body

    def _body(self) -> SummaryView:
        from poppy_tui.ui.widgets.summary_view import SummaryView

        return self.query_one("#summary-view", SummaryView)

    fit_pending = False  # a look is scheduled (tests wait for it to settle)
    _layout_looks = 0  # looks again while the layout catches up, since the revision was shown

    def _fit_later(self, *_: object) -> None:
        self.fit_pending = True
        self.call_after_refresh(self.check_fit)

    def new_revision_shown(self) -> None:
        """New terms are unread again, wherever the body was scrolled."""
        self.summary_seen = False
        self._layout_looks = 0
        self._fit_later()

    def check_fit(self) -> None:
        self.fit_pending = False
        if not self.is_mounted or not self.is_current:
            return  # under a dialog nothing of it moves: the line stays as it was
        view = self._body()
        end = self.query_one("#terms")
        if not end.display:
            # No terms: the summary is the end. Terms shown but with no region on screen are
            # below the view (or not laid out yet): not seen, whatever the summary's place.
            end = self.query_one("#summary")
        visible = view.region
        # Nothing is seen before the revision is shown and laid out: until then the terms are
        # the one-line placeholder they are built with, and under load a look came first (even
        # after a refresh, with their new content not yet laid out) and "saw" them end.
        revision_shown = getattr(self, "shown_revision_id", None) is not None
        laid_out = revision_shown and _laid_out(end)
        if revision_shown and not laid_out and self._layout_looks < LAYOUT_LOOKS:
            self._layout_looks += 1
            self.set_timer(0.05, self.check_fit)  # look again once the layout has caught up
        if (
            laid_out
            and visible.height > 0
            and end.region.bottom <= visible.bottom
            and end.region.height > 0
        ):
            self.summary_seen = True
        more = self.query_one("#review-more", Static)
        hidden = max(0, view.virtual_size.height - int(view.scroll_y) - view.size.height)
        shown = self.is_short() and not self.summary_seen and hidden > 0
        text = f"↓ {hidden} more lines below: the summary and terms go on (PgDn)" if shown else ""
        if str(more.render()) != text:
            more.update(Content(text))
        if more.display != shown:
            more.display = shown
            self._fit_later()  # the body is a line shorter (or longer) now: count again


def _laid_out(widget: Widget) -> bool:
    """Whether the widget's place on screen is for the content it has now: the height its
    content takes at its width is the height it was given (public Widget.get_content_height)."""
    width = widget.content_size.width
    if width <= 0:
        return False
    wanted = widget.get_content_height(widget.content_size, widget.app.size, width)
    return wanted == widget.content_size.height
