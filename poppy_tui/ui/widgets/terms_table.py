"""The operation's terms as a two-column table that wraps instead of truncating."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from poppy_tui.protocol.timestamps import parse_rfc3339
from poppy_tui.ui.format import time_with_relative
from poppy_tui.ui.safe import terms_rows
from poppy_tui.ui.widgets.countdown import app_now


# A date-time the Company wrote in its own zone ("2026-12-05T10:00:00-08:00").
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$")


def _text(value: str, style: str = "") -> Text:
    # terms_rows has already made controls and invisibles visible; Text never parses markup.
    return Text(value, style=style, overflow="fold")


def _value(value: str, now: datetime) -> Text:
    """The Company's value as written, and for a date-time the same moment in poppy's one
    format (local, with its zone) and how far away it is."""
    text = _text(value)
    if _STAMP.match(value.strip()):
        try:
            moment = parse_rfc3339(value.strip())
        except ValueError:  # only shaped like a timestamp: shown as written
            return text
        text.append(f"\n= {time_with_relative(moment, now)}", style="dim")
    return text


TERM_WIDTH_MAX = 32


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
        # As wide as the longest name (up to TERM_WIDTH_MAX), so a name like
        # price_difference.currency isn't split mid-word at 80 columns; longer ones still fold.
        longest = max(len(key) for key, _ in self.rows)
        table.add_column("Term", overflow="fold", width=max(4, min(longest, TERM_WIDTH_MAX)))
        table.add_column("Value", overflow="fold", ratio=1)
        for key, value in self.rows:
            table.add_row(_text(key, "bold"), _value(value, app_now(self)))
        self.update(table)
