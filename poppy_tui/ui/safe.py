"""The only door through which Company text reaches a widget.

Everything a Company wrote (summary, terms, names, messages, tool descriptions, error
bodies) is shown through these helpers, never as a plain `str` handed to a widget:
Textual parses a plain str as markup, and `[@click=...]` in it runs app actions.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import TYPE_CHECKING, Any

from rich.text import Text

from poppy_tui.safety.company_name import company_label
from poppy_tui.safety.sanitize import sanitize_line

if TYPE_CHECKING:
    from poppy_tui.safety.discrepancies import (
        check_operation,
        diff_revisions,
        key_amount,
        terms_rows,
    )
    from poppy_tui.safety.summary import (
        company_content,
        render_summary,
        safe_content,
        safe_line_content,
    )

# Imported on first use (PEP 562): the checks and the summary renderer cost ~40 ms to import,
# and the inbox's first frame (cells of plain Text) needs neither (the first-frame target,
# docs/benchmarks.md).
_LAZY = {
    "check_operation": "poppy_tui.safety.discrepancies",
    "diff_revisions": "poppy_tui.safety.discrepancies",
    "key_amount": "poppy_tui.safety.discrepancies",
    "terms_rows": "poppy_tui.safety.discrepancies",
    "company_content": "poppy_tui.safety.summary",
    "render_summary": "poppy_tui.safety.summary",
    "safe_content": "poppy_tui.safety.summary",
    "safe_line_content": "poppy_tui.safety.summary",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "cell",
    "fit_line",
    "wrapped_first_line",
    "check_operation",
    "company_content",
    "company_label",
    "diff_revisions",
    "first_line",
    "json_content",
    "key_amount",
    "plain_line",
    "render_summary",
    "safe_content",
    "safe_line_content",
    "sanitize_line",
    "strong",
    "terms_rows",
]

# A cell is one line; the full text is always one key away (review, detail screens).
CELL_MAX = 200


_MARKER = re.compile(r"…\(\+(\d+) chars?\)$")  # "…(+1 char)", "…(+42 chars)"


def fit_line(text: str, width: int) -> str:
    """Sanitised, and at most `width` characters *including* the "…(+N chars)" marker that
    sanitize_line appends after its `max_chars`: columns have a fixed width.

    A marker is never longer than what it hides: when fewer characters are cut than the
    marker would take, a bare "…" says the line goes on."""
    first = sanitize_line(text, max(0, width))
    if "truncated" not in first.flags:
        return first.text
    budget = width
    shown = first.text
    for _ in range(4):  # the marker's length moves with N, so settle in a few steps
        shown = sanitize_line(text, max(0, budget)).text
        if len(shown) <= width or budget <= 0:
            break
        budget -= len(shown) - width
    found = _MARKER.search(shown)
    too_long = len(shown) > width  # the marker alone doesn't fit this narrow a column
    # A marker that would crowd out the text itself says less than the text: then a bare "…".
    crowding = found is not None and found.start() < len(found.group(0))
    if (
        found is not None
        and (too_long or crowding or int(found.group(1)) < len(found.group(0)))
        and width > 0
    ):
        # Cut one character short (whole tokens only) and end with a bare ellipsis.
        short = sanitize_line(text, width - 1)
        body = short.text[: short.marks[-1][0]] if short.marks else short.text[: width - 1]
        return body + "…"
    return shown[:width]


# Rows whose summaries share at least this much of a beginning are told apart by what follows it.
SHARED_START = 24
# Words kept before the point where two summaries part, so the change reads in context.
CONTEXT_BEFORE = 18


def shared_length(a: str, b: str) -> int:
    """How many characters `a` and `b` begin with alike: slices compared in C, halving the
    range each time (os.path.commonprefix walks character by character in Python)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:  # a[:low] == b[:low], a[:high + 1] != b[:high + 1]
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _start_after(line: str, shared: int) -> int:
    if shared < SHARED_START:
        return 0
    start = line.rfind(" ", 0, max(0, shared - CONTEXT_BEFORE)) + 1
    return start if start > 0 else 0


def first_lines_apart(summaries: list[str], count: int | None = None) -> list[str]:
    """Each summary's first line; where several begin alike, from a little before they differ,
    marked with a leading "…". The full text is one key away, on the review. With `count`, only
    the first `count` summaries' lines, still told apart from all of them (the first frame's
    rows against their whole list: comparing every pair of neighbours was ~1.5 ms of it)."""
    from bisect import bisect_left

    lines = [_first_line(s) for s in summaries]
    # Only the beginnings are compared: a cell shows a few hundred characters at most.
    heads = sorted({line[:400] for line in lines})
    # Sorted, the lines sharing the longest beginning with a line are its neighbours.
    wanted = lines if count is None else lines[:count]
    if 2 * len(wanted) >= len(heads):  # most of them: each neighbouring pair compared once
        between = [shared_length(heads[at], heads[at + 1]) for at in range(len(heads) - 1)]
        start_of = {
            head: _start_after(
                head, max(between[at - 1] if at > 0 else 0, between[at] if at < len(between) else 0)
            )
            for at, head in enumerate(heads)
        }
    else:  # a few: each compared with the heads before and after it
        start_of = {}
        for line in wanted:
            head = line[:400]
            at = bisect_left(heads, head)
            start_of[head] = _start_after(
                head,
                max(
                    shared_length(head, heads[at - 1]) if at > 0 else 0,
                    shared_length(head, heads[at + 1]) if at + 1 < len(heads) else 0,
                ),
            )
    out = []
    for line in wanted:
        start = start_of[line[:400]]
        out.append("…" + line[start:] if start else line)
    return out


def wrapped_first_line(text: str, width: int, lines: int, indent: int = 0) -> str:
    """The summary's first line wrapped to `width` over at most `lines` lines (the first line
    `indent` shorter). A line too long for them keeps its beginning and its end, the middle
    left out behind a visible marker: a summary's end is usually what changes ("… to Tue, Dec 8
    at 2:00 PM"), and cutting the end hid exactly that at 80 columns. The newlines are ours, so
    what is measured here is what the cell shows."""
    line = _first_line(text)
    width = max(1, width)
    budget = width * lines - indent
    if lines >= 2 and width >= 20:
        whole = _wrap_fitting(line, width, lines, indent)
        if whole is not None:
            return whole
        elided = _wrap_ends(line, width, lines, indent)
        if elided is not None:
            return elided
    for _ in range(6):
        shown = fit_line(line, max(1, budget))
        wrapped = textwrap.wrap(
            " " * indent + shown,
            width,
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [""]
        if len(wrapped) <= lines:
            return "\n".join(wrapped)[indent:] if indent else "\n".join(wrapped)
        budget -= max(1, len(wrapped[-1]) + (len(wrapped) - lines - 1) * width)
    return shown[: max(1, width - indent)]


# A move's destination: "… from <where it is> to <where it goes> …".
_MOVE = re.compile(r" from \S.{0,200}? to (?=\S)")


def _wrap_fitting(line: str, width: int, lines: int, indent: int) -> str | None:
    """`line` sanitised and wrapped, if all of it fits in `lines` lines of `width`; else None."""
    if len(line) > width * lines * 2:  # more than it could ever show, even rendered as it is
        return None
    shown = sanitize_line(line, width * lines)
    if "truncated" in shown.flags:
        return None
    wrapped = textwrap.wrap(
        " " * indent + shown.text, width, break_long_words=True, break_on_hyphens=False
    )
    if len(wrapped) > lines:
        return None
    return "\n".join(wrapped)[indent:] if indent else "\n".join(wrapped)


def _wrap_ends(line: str, width: int, lines: int, indent: int) -> str | None:
    """For a move ("… from A to B …") too long for its lines: the beginning over the first lines
    and, after "…", the destination over the rest ("… to Tue, Dec 8 at 2:00 PM …"), A and the
    middle left out. None for any other line: its end is cut as usual (an exchange's new item
    comes early and shows). Whole words; each part sanitised on its own, bounded."""
    move = _MOVE.search(line, 0, 4000)
    if move is None:
        return None
    tail_lines = max(1, lines // 2)
    head_lines = lines - tail_lines
    head_room = width * head_lines - indent
    tail_room = width * tail_lines - 2  # "… " starts the destination's first line
    if move.start() < head_room // 2:
        return None  # the move begins early: the usual cut at the end shows its destination
    head = sanitize_line(line[: head_room * 2], head_room * 4).text[:head_room]
    if " " in head:
        head = head.rsplit(" ", 1)[0]  # whole words only
    destination = line[move.end() - 3 :]
    tail = sanitize_line(destination[: tail_room * 2], tail_room * 4).text
    whole_tail = len(destination) <= tail_room * 2 and tail
    for _ in range(4 * (head_lines + tail_lines) + 8):
        head_wrapped = textwrap.wrap(
            " " * indent + head, width, break_long_words=True, break_on_hyphens=False
        )
        if len(head_wrapped) > head_lines:  # shorten the beginning by its last word
            head = (
                head.rsplit(" ", 1)[0] if " " in head.strip() else head[: max(1, len(head) - width)]
            )
            continue
        shown_tail = (
            tail
            if tail == whole_tail and len(tail) <= tail_room
            else tail[: tail_room - 1].rstrip() + "…"
        )
        tail_wrapped = textwrap.wrap(
            "… " + shown_tail, width, break_long_words=True, break_on_hyphens=False
        )
        if len(tail_wrapped) > tail_lines:  # shorten the destination from its end
            tail = tail[: max(1, len(tail) - 4)].rsplit(" ", 1)[0]
            continue
        text = "\n".join(head_wrapped + tail_wrapped)
        return text[indent:] if indent else text
    return None


def cell(text: Any, max_chars: int = CELL_MAX) -> Text:
    """A DataTable cell: DataTable parses str cells as Rich markup, so hand it Text."""
    return Text(fit_line("" if text is None else str(text), max_chars), no_wrap=True)


def _first_line(text: str) -> str:
    """The first line with anything on it, found without splitting a (possibly huge) summary."""
    start = 0
    while True:
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line.strip() or end < 0:
            return line.strip()
        start = end + 1


def first_line(text: str, max_chars: int):
    """The summary's first line as safe Content; the marker counts what the line has left."""
    from poppy_tui.safety.summary import safe_line_content

    return safe_line_content(_first_line(text), max_chars)


def first_line_text(text: str, max_chars: int) -> Text:
    return cell(_first_line(text), max_chars)


def plain_line(text: Any, max_chars: int = 300) -> str:
    """For notify(..., markup=False): toasts are literal but don't neutralise escape codes."""
    return sanitize_line("" if text is None else str(text), max_chars).text


def plain_error(text: Any, max_chars: int = 600) -> str:
    """An error for a toast or status line: cut, if ever, in its middle, so the fix at its end
    stays whole (safety/error_line.py)."""
    from poppy_tui.safety.error_line import error_line

    return error_line(text, max_chars)


def strong(text: str, max_chars: int):
    """A Company-supplied name or amount on one line, in bold."""
    from poppy_tui.safety.summary import safe_line_content

    return safe_line_content(text, max_chars).stylize("bold")


def json_content(value: Any):
    """Company JSON, pretty-printed, every string sanitised on the way to the screen."""
    from poppy_tui.safety.summary import safe_content

    return safe_content(json.dumps(value, indent=2, ensure_ascii=False, default=str))
