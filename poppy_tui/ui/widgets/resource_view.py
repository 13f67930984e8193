"""The resource an operation changes, as read from the Company just now, under the terms.

"Now (read from GET /api/orders/ord_7Hk2 at 14:02:11)", then the resource's fields as a table
(sanitised like the terms: resource_rows), the fields the terms name marked `▶` and bold, or one
line saying why it couldn't be read. Folded to its title line on a short terminal (80x24); the
review's `toggle_resource` key unfolds it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from poppy_tui.ui.safe import plain_line

NAMED_MARK = "▶ "
KEY_WIDTH_MAX = 32


def clock_time(moment: datetime) -> str:
    """14:02:11, in local time: a read is from moments ago, so the time of day says when."""
    return moment.astimezone().strftime("%H:%M:%S")


def resource_title(read: Any, reading: bool = False, settled: bool = False) -> str:
    """The section's title line, in our words; the source is sanitised (source_label).
    `settled`: the decision has been carried out, so the read is of the resource before it."""
    from poppy_tui.safety.resource_checks import source_label

    now = "Before the decision" if settled else "Now"
    if read is None:
        return f"{now}: reading it from the Company…" if reading else f"{now}: not read"
    if not read.source:
        return f"{now}: nothing to read"
    title = f"{now} (read from {source_label(read.source)} at {clock_time(read.read_at)})"
    return title + (", reading it again…" if reading else "")


class ResourceView(Static):
    DEFAULT_CLASSES = "resource-view"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.read: Any = None
        self.named: frozenset[str] = frozenset()
        self.rows: list[tuple[str, str]] = []
        self.folded = False
        self.fold_key = "v"

    def show_read(self, read: Any, named: frozenset[str], *, folded: bool, fold_key: str) -> None:
        from poppy_tui.safety.resource_checks import resource_rows

        self.read, self.named, self.folded, self.fold_key = read, named, folded, fold_key
        self.rows = resource_rows(read.body) if read is not None and read.ok else []
        self.update(self._content())

    def _content(self) -> Content | Table:
        read = self.read
        if read is None:
            return Content.styled("Not read yet.", "dim")
        if not read.ok:
            why = plain_line(read.problem or "no answer", 300)
            if not read.source:
                return Content.styled(f"Nothing to read it from: {why}.", "dim")
            return Content.assemble(("couldn't read it: ", "bold"), why)
        if self.folded:
            named = sum(1 for key, _ in self.rows if key in self.named)
            return Content.styled(
                f"{len(self.rows)} fields, {named} named by the terms ({self.fold_key} shows them)",
                "dim",
            )
        if not self.rows:
            return Content.styled("The Company returned an empty object.", "dim")
        table = Table(expand=True, show_edge=False, pad_edge=False, show_header=False)
        longest = max(len(key) for key, _ in self.rows) + len(NAMED_MARK)
        table.add_column("Field", overflow="fold", width=max(6, min(longest, KEY_WIDTH_MAX)))
        table.add_column("Value", overflow="fold", ratio=1)
        for key, value in self.rows:
            named = key in self.named
            # resource_rows has made controls and invisibles visible; Text never parses markup.
            field = Text(NAMED_MARK if named else "  ", style="bold")
            field.append(key, style="bold" if named else "")
            table.add_row(field, Text(value, style="bold" if named else "", overflow="fold"))
        return table
