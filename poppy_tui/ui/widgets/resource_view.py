"""The resource an operation changes, as read from the Company just now, under the terms.

"Now: what the Company's API says — not part of what you approve", with where and when it was
read under it, then the resource's fields as a table (sanitised like the terms: resource_rows),
the fields the terms name marked `▶` and bold, text that reads like a promise marked `⚠`, in
italics and said to bind nothing (safety/resource_claims.py); or one line: "Not read yet",
"No read offered: …" (nothing safe to read it with) or "Couldn't read it: …" (a failure or a
timeout). Folded to its title lines on a short terminal (80x24); the review's `toggle_resource`
key unfolds it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from poppy_tui.ui.safe import plain_line

NAMED_MARK = "▶ "
PROMISE_MARK = "⚠ "
KEY_WIDTH_MAX = 32


def clock_time(moment: datetime) -> str:
    """14:02:11, in local time: a read is from moments ago, so the time of day says when."""
    return moment.astimezone().strftime("%H:%M:%S")


# The section's first line: what it is, and what it is not (audit A48): the Company's API, now,
# never part of what the person approves.
HEAD_NOW = "Now: what the Company's API says — not part of what you approve"
HEAD_SETTLED = "Before the decision: what the Company's API said — not part of the deal"


def resource_title(read: Any, reading: bool = False, settled: bool = False) -> tuple[str, str]:
    """(the section's head, its second line: where from and when, in our words; the source is
    sanitised, source_label). `settled`: the decision has been carried out, so the read is of
    the resource before it, and it is not read again."""
    from poppy_tui.safety.resource_checks import source_label

    head = HEAD_SETTLED if settled else HEAD_NOW
    if read is None:
        return head, "reading it from the Company…" if reading else "not read yet"
    state = getattr(read, "state", "read" if read.ok else "failed")
    if state == "no_read_offered":
        return head, "no read offered" + (", looking again…" if reading else "")
    where = f" from {source_label(read.source)}" if read.source else ""
    detail = (
        f"read{where} at {clock_time(read.read_at)}"
        if read.ok
        else f"couldn't read it{where} at {clock_time(read.read_at)}"
    )
    return head, detail + (", reading it again…" if reading else "")


class ResourceView(Static):
    DEFAULT_CLASSES = "resource-view"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.read: Any = None
        self.named: frozenset[str] = frozenset()
        self.rows: list[tuple[str, str]] = []
        self.folded = False
        self.fold_key = "v"
        self.flagged: frozenset[str] = frozenset()

    def show_read(
        self,
        read: Any,
        named: frozenset[str],
        *,
        folded: bool,
        fold_key: str,
        flagged: frozenset[str] = frozenset(),
    ) -> None:
        from poppy_tui.safety.resource_checks import resource_rows

        self.read, self.named, self.folded, self.fold_key = read, named, folded, fold_key
        self.flagged = flagged
        self.rows = resource_rows(read.body) if read is not None and read.ok else []
        self.update(self._content())

    def _content(self) -> Content | Group:
        read = self.read
        if read is None:
            return Content.styled("Not read yet.", "dim")
        if not read.ok:
            why = plain_line(read.problem or "no answer", 300)
            if getattr(read, "state", "failed") == "no_read_offered":
                reason = plain_line(
                    (read.problem or "").removeprefix("no read offered").lstrip(": "), 300
                )
                return Content.assemble(("No read offered", "bold"), ": ", reason, ".").stylize(
                    "dim"
                )
            return Content.assemble(("Couldn't read it: ", "bold"), why)
        flagged = sum(1 for key, _ in self.rows if key in self.flagged)
        if self.folded:
            named = sum(1 for key, _ in self.rows if key in self.named)
            marks = f", {flagged} reading like a promise" if flagged else ""
            return Content.styled(
                f"{len(self.rows)} fields, {named} named by the terms{marks} "
                f"({self.fold_key} shows them)",
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
            promise = key in self.flagged
            # resource_rows has made controls and invisibles visible; Text never parses markup.
            mark = PROMISE_MARK if promise else NAMED_MARK if named else "  "
            field = Text(mark, style="bold")
            field.append(key, style="bold" if named or promise else "")
            shown = Text(value, style="italic" if promise else "bold" if named else "")
            if promise:
                shown.append("  (reads like a promise: binds nothing)", style="dim")
            shown.overflow = "fold"
            table.add_row(field, shown)
        legend = "The Company's API as read, not terms: ▶ the terms name it"
        if flagged:
            legend += ", ⚠ reads like a promise"
        return Group(Text(legend, style="dim"), table)
