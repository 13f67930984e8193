"""The sizes the TUI is laid out for: 80x24 on purpose, and down to SMALLEST, where every screen
still says what it can't show (docs/tui.md, "Narrow terminals")."""

from __future__ import annotations

# Columns and lines of the smallest terminal the TUI supports: its screens are tested here too.
SMALLEST = (60, 15)
