"""Company text made safe for a terminal, the piece every line the command line prints is built
from: one line (`safe_line`), several (`safe_block`, `company_block`), indented so that a line at
column 0 is always poppy-tui's, and JSON dumped ASCII-escaped (`to_json`). Import these from
cli/output.py, like the rest of what the command line prints."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

# Company text is indented by this much, so a line that starts at column 0 is always poppy-tui's.
COMPANY_INDENT = "  "
LINE_CHARS = 200


def safe_line(text: object, max_chars: int = LINE_CHARS) -> str:
    """One line of untrusted text: controls, escapes and bidi tricks neutralised, newlines folded."""
    from poppy_tui.safety.sanitize import sanitize_line

    return sanitize_line("" if text is None else str(text), max_chars).text


# What each sanitiser flag means, in words a person can act on.
FLAG_TEXT = {
    "control": "control characters",
    "escape": "terminal escape sequences",
    "bidi": "text-direction controls",
    "invisible": "invisible characters",
    "markup": "markup that looks like an action or a link",
    "mixed_script": "words mixing alphabets (look-alike letters)",
}


def safe_block(text: object) -> tuple[str, list[str]]:
    """Several lines of untrusted text, and (in words) what the sanitiser had to neutralise."""
    from poppy_tui.safety.sanitize import sanitize

    result = sanitize("" if text is None else str(text))
    return result.text, [
        FLAG_TEXT.get(flag, flag) for flag in sorted(result.flags) if flag != "truncated"
    ]


def indented(text: str, prefix: str = COMPANY_INDENT) -> str:
    return "\n".join(
        prefix + line if line else prefix.rstrip() for line in text.splitlines() or [""]
    )


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, indent=2)


def company_block(name: str, text: object) -> str:
    """A Company's words, labelled with who said them and indented beneath.

    The label starts with our own words, not the Company's name: a name is Company text too,
    and at column 0 it could pass for a line of poppy-tui's.
    """
    body, flags = safe_block(text)
    lines = [f"message from {safe_line(name, 80)}:", indented(body)]
    if flags:
        lines.append(f"(poppy-tui neutralised in that text: {', '.join(flags)})")
    return "\n".join(lines)


def company_json_text(value: Any) -> str:
    """A Company's JSON answer for people: ASCII-escaped JSON, indented like other Company text."""
    return indented(to_json(value))
