"""The operation's terms as a two-column table that wraps instead of truncating."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from poppy_tui.ui.safe import terms_rows


def _text(value: str, style: str = "") -> Text:
    # terms_rows has already made controls and invisibles visible; Text never parses markup.
    return Text(value, style=style, overflow="fold")


class TermsTable(Static):
    DEFAULT_CLASSES = "terms-table"

    def __init__(self, terms: dict[str, Any] | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_terms(terms)

    def show_terms(self, terms: dict[str, Any] | None) -> None:
        self.rows = terms_rows(terms) if terms is not None else []
        if terms is None:
            self.update(Content("The Company sent no terms, only the summary."))
            return
        if not self.rows:
            self.update(Content("The terms are empty."))
            return
        table = Table(expand=True, show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("Term", overflow="fold", ratio=1)
        table.add_column("Value", overflow="fold", ratio=2)
        for key, value in self.rows:
            table.add_row(_text(key, "bold"), _text(value))
        self.update(table)
