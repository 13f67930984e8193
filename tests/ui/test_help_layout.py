"""Help: every key fits its column on one line ("up/down/pgup/p" / "gdn" wrapped at 160 columns)
and the binding ids line up in one column down the whole help, at 80x24 and 160x48."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import Static

from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.help import HelpScreen, binding_groups
from tests.ui.ui_sample import screen_up, wait_for

LONG_KEYS = ("up/down/pgup/pgdn", "enter (in a field)", "enter (in the box)")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_keys_stay_whole_and_ids_line_up(store, size, make_agent):
    app = PoppyApp(make_agent())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.painted)
        await pilot.press("question_mark")
        await screen_up(pilot, HelpScreen)
        tables = list(app.screen.query(".help-keys").results(Static))
        assert tables
        lines = []
        for static in tables:
            lines += [
                strip.text
                for strip in static.render_lines(
                    Region(0, 0, static.size.width, static.size.height)
                )
            ]
    text = "\n".join(lines)
    for keys in LONG_KEYS:
        assert keys in text, (keys, text)
    ids = [binding.id for _, bindings, _ in binding_groups() for binding in bindings if binding.id]
    columns = {
        line.rindex(binding_id)
        for line in lines
        for binding_id in ids
        if line.rstrip().endswith(" " + binding_id)
    }
    assert len(columns) == 1, columns  # one column for every section's ids
