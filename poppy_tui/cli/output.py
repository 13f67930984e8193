"""What the command line prints: JSON shapes for scripts and plain text for people.

Everything a Company wrote is hostile until proven otherwise. Text meant for a terminal
goes through poppy_tui.safety.sanitize; JSON is dumped with ensure_ascii, which escapes
every control, bidi and non-ASCII character, so it is both terminal-safe and lossless
for a parser. The shapes here are documented in docs/cli.md: add fields, never rename.

Every command imports what it prints from here. This module writes it out (stdout for the
result, stderr for poppy-tui's own commentary); the parts are made beside it, by what they are:
- cli/safe_text.py: Company text made terminal-safe (safe_line, safe_block, company_block, to_json);
- cli/status_words.py: an operation's status in words, and its times;
- cli/list_output.py: one item of a list: a queue row (pending, history), a Company (companies list);
- cli/record_output.py: one operation in full (`show`, `show --json`), with its resource part
  (cli/resource_output.py) and its account part (cli/account_output.py).
They import none of this module, so nothing here imports in a circle.
"""

from __future__ import annotations

import json
import sys

from poppy_tui.cli.list_output import (
    company_interfaces,
    company_json,
    company_line,
    row_json,
    row_line,
    sign_in_json,
    sign_in_text,
)
from poppy_tui.cli.record_output import (
    ATTEMPT_TEXT,
    explanation_json,
    record_json,
    revision_json,
    show_text,
    waiting_line,
    where_it_stands,
)
from poppy_tui.cli.safe_text import (
    COMPANY_INDENT,
    FLAG_TEXT,
    LINE_CHARS,
    company_block,
    company_json_text,
    indented,
    safe_block,
    safe_line,
    to_json,
)
from poppy_tui.cli.status_words import (
    STATUS_TEXT,
    WAITING_SIGN_IN_TEXT,
    expiry_text,
    settled_expiry_text,
    stamp_text,
    status_name,
    status_text,
    utc_text,
)

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import TextIO
    from collections.abc import Iterable

__all__ = [
    "ATTEMPT_TEXT",
    "COMPANY_INDENT",
    "FLAG_TEXT",
    "LINE_CHARS",
    "STATUS_TEXT",
    "WAITING_SIGN_IN_TEXT",
    "company_block",
    "company_interfaces",
    "company_json",
    "company_json_text",
    "company_line",
    "emit",
    "emit_json_list",
    "expiry_text",
    "explanation_json",
    "indented",
    "json_line",
    "note",
    "note_wrapped",
    "record_json",
    "revision_json",
    "row_json",
    "row_line",
    "safe_block",
    "safe_line",
    "settled_expiry_text",
    "show_text",
    "sign_in_json",
    "sign_in_text",
    "stamp_text",
    "status_name",
    "status_text",
    "to_json",
    "utc_text",
    "waiting_line",
    "where_it_stands",
]


# One list item per line: compact (json's C encoder; indent runs its pure-Python one), ASCII.
json_line = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def emit_json_list(key: str, batches: Iterable[list[str]]) -> None:
    """`{"KEY": [...]}` on stdout with one item per line, each item a json_line text, written as
    the batches come: a long list (`pending --json` with 10,000 operations waiting) is neither
    indented by json's pure-Python encoder nor held whole in memory. Still one JSON object."""
    out = sys.stdout
    out.write(f"{{{json_line(key)}: [")
    separator = "\n  "
    for batch in batches:
        if batch:
            out.write(separator + ",\n  ".join(batch))
            separator = ",\n  "
    out.write("\n]}\n" if separator != "\n  " else "]}\n")
    out.flush()


def emit(text: str = "", stream: TextIO | None = None) -> None:
    print(text, file=stream or sys.stdout, flush=True)


def note(text: str) -> None:
    """poppy-tui's own commentary (progress, explanations): stderr, so stdout stays the result."""
    print(text, file=sys.stderr, flush=True)


def note_wrapped(text: str, indent: str = "  ") -> None:
    """`text` on stderr in lines that fit an 80-column terminal, each starting with `indent`
    (a line that wraps in the terminal breaks mid-word)."""
    import textwrap

    for line in textwrap.wrap(
        text,
        79,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    ):
        note(line)
