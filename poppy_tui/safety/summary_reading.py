"""The summary as the User reads it, for comparing with the terms. No Textual."""

from __future__ import annotations

from functools import lru_cache

from poppy_tui.safety.extract import normalize_for_compare
from poppy_tui.safety.formatting import format_summary
from poppy_tui.safety.sanitize import reading_text


@lru_cache(maxsize=16)  # check_operation and key_amount read the same summary, once
def _summary_check_text(summary: str) -> str:
    """The summary as the User reads it: formatted, invisibles and whole escape
    sequences taken out first (see `reading_text`), so neither a zero-width space
    inside "$70\u200b0" nor the "8" of an ESC 8 is read as an amount of its own.
    Any token left is a separator."""
    formatted = format_summary(reading_text(summary))
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
