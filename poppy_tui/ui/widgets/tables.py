"""DataTable columns with explicit widths.

Textual 8.2 measures rows added after the first paint only when idle, and keeps serving the
header it already rendered at the old widths, so headers stayed misaligned until something
else redrew the table. Explicit widths never change on their own; and each cell is cut to
its width by the sanitiser, with its visible "…(+N chars)" marker, never silently by the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.widgets import DataTable

Column = tuple[str, str, int]  # key, label, content width in cells

# Padding, border and scrollbar around a table's cells in our layouts.
TABLE_CHROME = 6


def set_columns(table: DataTable, columns: Sequence[Column]) -> bool:
    """Make the table's columns these; True if they had to be rebuilt (which drops the rows)."""
    current = tuple(
        (str(key.value), column.label.plain, column.width) for key, column in table.columns.items()
    )
    if current == tuple(columns):
        return False
    table.clear(columns=True)
    for key, label, width in columns:
        # Text, not str: DataTable parses a str label as Rich markup, whose emoji replacement
        # imports Rich's table of every emoji name (~3 ms, on the first frame's path).
        table.add_column(Text(label), width=width, key=key)
    return True


def remaining_width(
    total: int, others: Iterable[int], minimum: int = 20, chrome: int = TABLE_CHROME
) -> int:
    """What a flexible column gets of `total` cells after the other columns and every cell's padding."""
    widths = list(others)
    return max(minimum, total - sum(widths) - 2 * (len(widths) + 1) - chrome)
