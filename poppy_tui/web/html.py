"""Company text as HTML: sanitised by safety/ exactly as the TUI's, then escaped.

Every string a Company wrote reaches a template only through these helpers, as Markup built from
escaped pieces: the sanitiser's visible tokens (`\\x1b`, `⟨U+202E⟩`) in a span of their own, so a
Company can't pass off a typed token as ours (the TUI's reverse style, docs/safety.md); the
summary's emphasis, strong emphasis and lists (safety/formatting.py) as <em>, <strong> and line
breaks; links, images and HTML as the literal text they are. Jinja2 escapes anything else.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup, escape

from poppy_tui.safety.company_name import NAME_MARK, company_label
from poppy_tui.safety.formatting import BOLD, ITALIC, PLACEHOLDER_STYLE, format_summary
from poppy_tui.safety.sanitize import Sanitized, sanitize, sanitize_line

_TAGS = {BOLD: "strong", ITALIC: "em"}


def _spans_html(text: str, spans: list[tuple[int, int, str]]) -> Markup:
    """`text` with style spans (possibly nested or overlapping) as escaped segments, each wrapped
    in the tags of the styles over it. One sweep over the span edges: a hostile summary can hold
    hundreds of thousands of tokens."""
    edges: dict[int, list[tuple[str, int]]] = {0: [], len(text): []}
    for start, end, style in spans:
        if start < end:
            edges.setdefault(start, []).append((style, 1))
            edges.setdefault(end, []).append((style, -1))
    active = {PLACEHOLDER_STYLE: 0, BOLD: 0, ITALIC: 0}
    cuts = sorted(edges)
    out: list[str] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        for style, step in edges[start]:
            active[style] = active.get(style, 0) + step
        piece = str(escape(text[start:end]))
        if active[PLACEHOLDER_STYLE] > 0:
            piece = f'<span class="tok">{piece}</span>'
        for style in (ITALIC, BOLD):
            if active[style] > 0:
                piece = f"<{_TAGS[style]}>{piece}</{_TAGS[style]}>"
        out.append(piece)
    # Built from escape()d pieces and our own tags only.
    return Markup("".join(out))


def _sanitized(clean: Sanitized) -> Markup:
    return _spans_html(clean.text, [(s, e, PLACEHOLDER_STYLE) for s, e in clean.marks])


def text(value: Any) -> Markup:
    """Any multi-line Company string: sanitised, tokens marked, escaped."""
    return _sanitized(sanitize("" if value is None else str(value)))


def line(value: Any, max_chars: int = 200) -> Markup:
    """A one-line Company string (name, id, cell), cut with the sanitiser's marker."""
    return _sanitized(sanitize_line("" if value is None else str(value), max_chars))


def plain(value: Any, max_chars: int = 300) -> str:
    """A one-line string for an attribute or a title: sanitised (Jinja2 escapes it)."""
    return sanitize_line("" if value is None else str(value), max_chars).text


def summary(value: Any) -> Markup:
    """The Ops §3 subset of a summary, as the TUI renders it (safety/formatting.py)."""
    formatted = format_summary("" if value is None else str(value))
    return _spans_html(formatted.text, list(formatted.spans))


def company(name: Any, domain: Any, max_chars: int = 80, with_domain: bool = True) -> Markup:
    """A Company's name, marked ⚠ when it could pass for another, with its verified domain."""
    label = company_label(name, domain, max_chars)
    parts = []
    if label.marked:
        parts.append(
            Markup('<span class="mark" title="look-alike name">{} </span>').format(NAME_MARK)
        )
    parts.append(Markup('<strong class="company-name">{}</strong>').format(line(name, max_chars)))
    if with_domain:
        parts.append(Markup(' <span class="domain">{}</span>').format(line(domain, 120)))
    return Markup("").join(parts)


def company_warning(name: Any, domain: Any) -> str | None:
    return company_label(name, domain).warning or None


def json_text(value: Any) -> Markup:
    """Company JSON, pretty-printed, every string sanitised on the way to the page."""
    return text(json.dumps(value, indent=2, ensure_ascii=False, default=str))
