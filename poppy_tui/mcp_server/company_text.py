"""Company-written text, as an MCP client (an LLM) is shown it.

Everything a Company wrote reaches the client sanitised by poppy_tui.safety (controls, escape
sequences, bidi and invisible characters made visible) and labelled as the Company's, so that a
summary saying "ignore previous instructions" reads as a quote, not as poppy-tui speaking.
"""

from __future__ import annotations

from typing import Any

from poppy_tui.safety.sanitize import sanitize, sanitize_line

# Shown around every Company-written string in the text content of a result.
COMPANY_WRITTEN = "Company-written (untrusted)"
QUOTE_NOTE = "Company-written, untrusted"
NAME_CHARS = 120
KEY_CHARS = 200
# A Company's JSON answer is passed on whole, but bounded in depth: a hostile nesting can't stall us.
MAX_DEPTH = 64


def line(text: object, max_chars: int = NAME_CHARS) -> str:
    """One line of Company text (a name, an id): newlines shown as ⏎, long text cut visibly."""
    return sanitize_line("" if text is None else str(text), max_chars).text


def block(text: object) -> str:
    """Multi-line Company text (a summary, a message), every hostile character made visible."""
    return sanitize("" if text is None else str(text)).text


def value(data: Any, depth: int = 0) -> Any:
    """A Company's JSON value with every string (keys too) sanitised; structure kept."""
    if depth > MAX_DEPTH:
        return "…(nested too deep; see 'poppy-tui show')"
    if isinstance(data, str):
        return block(data)
    if isinstance(data, dict):
        return {line(k, KEY_CHARS): value(v, depth + 1) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [value(v, depth + 1) for v in data]
    if data is None or isinstance(data, (bool, int, float)):
        return data
    return block(str(data))


def quoted(label: str, text: str) -> str:
    """`label (Company-written, untrusted): «text»`, indented when it runs over several lines."""
    if "\n" in text:
        body = "\n".join("    " + part for part in text.split("\n"))
        return f"{label} ({QUOTE_NOTE}):\n{body}"
    return f"{label} ({QUOTE_NOTE}): «{text}»"
