"""The terms table keeps a term's name on one line at 80 columns ("price_difference.currenc" /
"y" before), and still folds a name longer than its column can ever be."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region

from poppy_tui.ui.widgets.terms_table import TERM_WIDTH_MAX, TermsTable

TERMS = {
    "order_id": "ord_7Hk2",
    "price_difference": {"amount": "70.00", "currency": "USD"},
    "replacement_sku": "stormline-insulated-m",
}


class TermsApp(App[None]):
    def __init__(self, terms) -> None:
        super().__init__()
        self.terms = terms

    def compose(self) -> ComposeResult:
        yield TermsTable(self.terms, id="terms")


async def rendered(terms, width: int) -> str:
    app = TermsApp(terms)
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        table = app.query_one("#terms")
        return "\n".join(
            s.text for s in table.render_lines(Region(0, 0, table.size.width, table.size.height))
        )


@pytest.mark.parametrize("width", [72, 80, 100])  # 72: the review's terms at 80 columns
async def test_term_names_are_not_split_mid_word(width):
    text = await rendered(TERMS, width)
    for name in ("price_difference.currency", "price_difference.amount", "replacement_sku"):
        assert name in text, text


async def test_a_name_longer_than_a_line_still_folds_inside_the_table():
    long_name = "x" * 120
    text = await rendered({long_name: "1"}, 80)
    assert long_name not in text and "x" * TERM_WIDTH_MAX in text
    assert text.count("x") == 120 and all(len(line) <= 80 for line in text.splitlines())
