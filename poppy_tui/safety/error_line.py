"""Error lines cut in the middle, never at the end. An error line's beginning says what went
wrong and its end, most often, what to do ("…, or opt in to a private key file: set key_storage
= "file""); cut at its end, the fix went missing at exactly the word the reader needed (walk C3).
Each part is sanitised as any other line (safety/sanitize.py): it may quote a Company."""

from __future__ import annotations

from poppy_tui.safety.sanitize import sanitize_line

# Where the end part begins, when one of these is in it: the fix is a clause of its own.
CLAUSE_BREAKS = ("; ", ": ", ". ", " or ")


def _width(ch: str) -> int:
    return len(sanitize_line(ch, 16).text)


def _fitting(chars: str, room: int) -> int:
    """How many of `chars`, in order, fit in `room` once sanitised (tokens whole)."""
    used = count = 0
    for ch in chars:
        width = _width(ch)
        if used + width > room:
            break
        used += width
        count += 1
    return count


def error_line(text: object, max_chars: int) -> str:
    """`text` on one line, at most `max_chars` long: whole when it fits, else its beginning,
    "…(+N chars)…", and its end from the start of its last clause, given half the room."""
    text = "" if text is None else str(text)
    whole = sanitize_line(text, max_chars)
    if "truncated" not in whole.flags:
        return whole.text
    marker_room = len(f"…(+{len(text)} chars)…")
    room = max(20, max_chars - marker_room)
    tail_count = _fitting(reversed(text), room // 2)  # type: ignore[arg-type]
    window = text[len(text) - tail_count :]
    # From the start of its last clause that still leaves a third of the room, when there is one.
    best = 0
    for brk in CLAUSE_BREAKS:
        at = window.find(brk)
        while at >= 0:
            start = at + len(brk)
            if len(window) - start >= room // 3 and (best == 0 or start < best):
                best = start
            at = window.find(brk, at + 1)
    tail_text = window[best:]
    tail = sanitize_line(tail_text, room).text
    head_count = _fitting(text[: len(text) - len(tail_text)], room - len(tail))
    head = sanitize_line(text[:head_count], room).text
    hidden = len(text) - head_count - len(tail_text)
    return f"{head}…(+{hidden} chars)…{tail}"
