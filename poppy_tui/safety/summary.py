"""Company text as Textual `Content`: never markup, never raw control bytes.

A plain `str` handed to Static, Label, Button, DataTable and friends is parsed as
markup, and injected `[@click=app.approve]` runs an action when clicked. Content
built here is literal: its only spans are the ones we make (bold, italic, and
the style of our visible tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content, Span

from poppy_tui.safety.company_name import NAME_MARK, company_label
from poppy_tui.safety.formatting import PLACEHOLDER_STYLE, FormattedText, format_summary
from poppy_tui.safety.sanitize import Sanitized, sanitize, sanitize_line

__all__ = [
    "RenderedSummary",
    "company_content",
    "render_summary",
    "safe_content",
    "safe_line_content",
]


@dataclass(frozen=True)
class RenderedSummary:
    content: Content
    plain: str
    flags: frozenset[str]
    formatted: bool = True  # False when shown as plain text ("unformatted" in flags)


def _content(text: str, spans: list[Span]) -> Content:
    # The text is already free of controls; stripping again would only shift spans.
    return Content(text, spans, strip_control_codes=False)


def render_summary(summary: str) -> RenderedSummary:
    """Render the Ops §3 subset of a summary. Never raises."""
    try:
        formatted: FormattedText = format_summary(summary)
    except Exception:  # noqa: BLE001 - format_summary already falls back; belt and braces
        formatted = FormattedText(
            "(this summary could not be shown)", (), frozenset({"unformatted"}), False
        )
    spans = [Span(start, end, style) for start, end, style in formatted.spans]
    return RenderedSummary(
        content=_content(formatted.text, spans),
        plain=formatted.text,
        flags=formatted.flags,
        formatted=formatted.formatted,
    )


def _from_sanitized(clean: Sanitized) -> Content:
    return _content(clean.text, [Span(start, end, PLACEHOLDER_STYLE) for start, end in clean.marks])


def safe_content(text: str) -> Content:
    """Any other multi-line Company string, literal and sanitised."""
    return _from_sanitized(sanitize(text))


def safe_line_content(text: str, max_chars: int) -> Content:
    """A one-line Company string (name, list cell), bounded with an explicit marker."""
    return _from_sanitized(sanitize_line(text, max_chars))


def company_content(
    name: object, domain: object, max_chars: int = 60, *, with_domain: bool = True
) -> Content:
    """A Company's name as Content, the Textual twin of `company_label`: bold, with
    "⚠" in front when it mixes scripts or hides characters, and the verified domain
    beside it (dim) unless the caller shows the domain right next to it already."""
    label = company_label(name, domain, max_chars)
    parts: list[Content | str | tuple[str, str]] = []
    if label.marked:
        parts.append((NAME_MARK + " ", "bold"))
    parts.append(safe_line_content("" if name is None else str(name), max_chars).stylize("bold"))
    if with_domain:
        parts += [
            "  ",
            safe_line_content("" if domain is None else str(domain), max(20, max_chars)).stylize(
                "dim"
            ),
        ]
    return Content.assemble(*parts)
