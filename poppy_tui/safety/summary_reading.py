"""The summary as the User reads it, for comparing with the terms. No Textual."""

from __future__ import annotations

from poppy_tui.safety.extract import normalize_for_compare
from poppy_tui.safety.formatting import format_summary


def _summary_check_text(summary: str) -> str:
    """The summary as the User reads it, with our visible tokens as separators."""
    formatted = format_summary(summary)
    text = formatted.text
    placeholders = sorted(formatted.placeholder_spans)
    if placeholders:
        pieces: list[str] = []
        last = 0
        for start, end in placeholders:
            if start < last:
                continue
            pieces.append(text[last:start])
            pieces.append(" ")
            last = end
        pieces.append(text[last:])
        text = "".join(pieces)
    return normalize_for_compare(text)
