"""What every poppy screen shares: the agent, the store, a title bar, refresh on change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from collections.abc import Callable, Coroutine

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker

from poppy_tui.ui.messages import StoreChanged
from poppy_tui.ui.typed_keys import TYPED_FOCUS_BINDINGS, TypedFocus

if TYPE_CHECKING:
    from poppy_tui.agent.store import Store
    from poppy_tui.ui.app import PoppyApp


# The rules of every screen but the inbox: parsed when the first of them is shown, not before the
# first frame (poppy.tcss has the inbox's and what all share). Absolute: Textual resolves a
# relative CSS_PATH against each subclass's module.
SCREENS_CSS = str(Path(__file__).resolve().parents[1] / "screens.tcss")


class TitleBar(Static):
    DEFAULT_CLASSES = "title-bar"


def nav_bar(app: PoppyApp, current: str | None, title: str, typing: bool) -> Content:
    """'poppy  i Inbox  h History …' with the screen you are on marked: the same keys go to the
    same screens from everywhere, and the bar says which ones they are."""
    from poppy_tui.ui.navigation import NAV_ITEMS

    parts: list[Content | str | tuple[str, str]] = [("poppy", "bold"), "  "]
    narrow = app.size.width < 100
    for mode, binding_id, default, label in NAV_ITEMS:
        key = app.key_for(binding_id, default)
        if narrow and label == "New request":
            label = "New"
        if mode == current:
            parts += [(f" {key} {label} ", "reverse bold"), " "]
        else:
            parts += [(f" {key}", "bold dim" if typing else "bold"), (f" {label} ", "dim"), " "]
    if current is None:
        parts += [("› ", "dim"), (title, "bold")]
    elif typing:
        parts.append(("(Esc first)" if narrow else "letters type here: Esc first", "dim italic"))
    return Content.assemble(*parts)


class PoppyScreen(TypedFocus, Screen):
    """Screens re-read the store when it changes (polled by the app) and when shown again.
    Tab, Shift+Tab and a focus-moving Enter move focus as typed (ui/typed_keys.py)."""

    BINDINGS = TYPED_FOCUS_BINDINGS
    TITLE_TEXT = "poppy"
    CSS_PATH: ClassVar[str | None] = SCREENS_CSS
    # The global key that shows this screen (navigation.NAV_ITEMS), None for screens opened from another.
    NAV_MODE: str | None = None
    # A screen where the person types: letters are text there, never a screen switch.
    TYPING = False

    def run_exclusive(
        self, work: Callable[[], Coroutine[Any, Any, None]], group: str
    ) -> Worker[None]:
        """Run an async method in a worker that replaces the group's running one (run_worker with
        exclusive=True; typed here, as mypy can't tell which of its kinds of work a method is)."""
        return self.run_worker(work, group=group, exclusive=True)

    @property
    def poppy(self) -> PoppyApp:
        return self.app  # type: ignore[return-value]

    @property
    def agent(self) -> Any:
        return self.poppy.agent

    @property
    def store(self) -> Store:
        return self.poppy.agent.store

    @property
    def reader(self) -> Any:
        """For lists read before the first frame: PoppyApp.reader (the store's read side)."""
        return self.poppy.reader

    def title_bar(self) -> ComposeResult:
        yield TitleBar(
            nav_bar(self.poppy, self.NAV_MODE, self.TITLE_TEXT, self.TYPING), id="title-bar"
        )

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
            self.fit_chrome()
            self.refresh_data()
        if self.poppy.painted:
            self.fit_to_size()

    def fit_to_size(self) -> None:
        """What a screen re-fits to a new size, width or height (after the first frame)."""

    def on_screen_resume(self) -> None:
        # Not before the first frame is on screen (the app refreshes every screen then):
        # first paint must not wait for SQLite.
        if self.poppy.painted:
            # A screen that was under another while the terminal was resized missed that resize.
            self.fit_chrome()
            self.call_after_refresh(self.refresh_data)

    def fit_chrome(self) -> None:
        """The title bar and footer as a fresh start at this width draws them ("New" and no
        palette hint at 80 columns), after a resize too."""
        for bar in self.query("#title-bar").results(TitleBar):
            bar.update(nav_bar(self.poppy, self.NAV_MODE, self.TITLE_TEXT, self.TYPING))
        from poppy_tui.ui.widgets.footer import PoppyFooter

        for footer in self.query(PoppyFooter):
            footer.fit()
