"""What every poppy screen shares: the agent, the store, a title bar, refresh on change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from poppy_tui.ui.messages import StoreChanged

if TYPE_CHECKING:
    from poppy_tui.agent.store import Store
    from poppy_tui.ui.app import PoppyApp


class TitleBar(Static):
    DEFAULT_CLASSES = "title-bar"


class PoppyScreen(Screen):
    """Screens re-read the store when it changes (polled by the app) and when shown again."""

    TITLE_TEXT = "poppy"

    @property
    def poppy(self) -> "PoppyApp":
        return self.app  # type: ignore[return-value]

    @property
    def agent(self) -> Any:
        return self.poppy.agent

    @property
    def store(self) -> "Store":
        return self.poppy.agent.store

    def title_bar(self) -> ComposeResult:
        yield TitleBar(Content.assemble(("poppy", "bold"), "  ·  ", self.TITLE_TEXT), id="title-bar")

    def refresh_data(self) -> None:
        """Re-read what this screen shows. Cheap: called on every store change."""

    def on_store_changed(self, message: StoreChanged) -> None:
        self.refresh_data()

    def on_resize(self) -> None:
        # Tables give their summary column what the others leave, so a new width re-lays them;
        # a resize that keeps the width (several arrive at start-up) changes nothing.
        width = self.app.size.width
        changed, self._laid_out_width = width != getattr(self, "_laid_out_width", None), width
        if self.poppy.painted and changed:
            self.refresh_data()

    def on_screen_resume(self) -> None:
        # Not before the first frame is on screen (the app refreshes every screen then):
        # first paint must not wait for SQLite.
        if self.poppy.painted:
            self.call_after_refresh(self.refresh_data)
