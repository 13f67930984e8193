"""Injected markup in a summary must not run actions in a real Textual app."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from poppy_tui.safety.summary import render_summary, safe_line_content

HOSTILE = (
    "**Approve?** [@click=app.approve]Approve[/] [@click=app.quit]Quit[/] [link=https://x]docs"
)


class Probe(App):
    def __init__(self, widget: Static) -> None:
        super().__init__()
        self.widget = widget
        self.ran: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def action_approve(self) -> None:
        self.ran.append("approve")

    async def action_quit(self) -> None:
        self.ran.append("quit")


async def _click_words(pilot, plain: str) -> None:
    """Click the first cell of every word and every cell of "Approve"/"Quit"/"docs",
    where a parsed tag would have put its clickable text."""
    cells = {0} | {i + 1 for i, ch in enumerate(plain) if ch in " ]"}
    for word in ("Approve", "Quit", "docs", "Acme"):
        start = plain.find(word)
        while start != -1:
            cells.update(range(start, start + len(word)))
            start = plain.find(word, start + 1)
    for x in sorted(c for c in cells if c < len(plain)):
        await pilot.click("#summary", offset=(x, 0))
    await pilot.pause()


async def test_markup_in_a_rendered_summary_runs_no_action():
    rendered = render_summary(HOSTILE)
    assert isinstance(rendered.content, Content)
    app = Probe(Static(rendered.content, id="summary"))
    async with app.run_test(size=(120, 5)) as pilot:
        shown = app.query_one("#summary", Static).render()
        assert "[@click=app.approve]Approve[/]" in shown.plain
        await _click_words(pilot, rendered.plain)
        assert app.ran == []
        assert app.is_running


async def test_markup_in_a_safe_line_runs_no_action():
    content = safe_line_content("[@click=app.approve]Acme[/]", 40)
    app = Probe(Static(content, id="summary"))
    async with app.run_test(size=(80, 3)) as pilot:
        await _click_words(pilot, content.plain)
        assert app.ran == []


async def test_control_the_same_string_as_markup_does_run_the_action():
    # Proves the probe can see an action: a plain str is parsed as markup.
    app = Probe(Static("[@click=app.approve]Approve[/]", id="summary"))
    async with app.run_test(size=(80, 3)) as pilot:
        await pilot.click("#summary", offset=(2, 0))
        await pilot.pause()
        assert app.ran == ["approve"]
