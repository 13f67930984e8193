"""The Ops §3 "Formatting" subset of a summary, as text plus style spans. No Textual.

Only emphasis, strong emphasis, paragraphs and lists are rendered. Links, images,
HTML, headings, code, tables and entities stay literal source text, because
their parser rules are never enabled. Each text token is sanitised after parsing,
so the visible tokens cannot interact with Markdown syntax.

Kept free of Textual so the discrepancy checks can read the summary exactly as
the User will see it (emphasis markers can split "$7*0*" into what reads "$70").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from poppy_tui.safety.sanitize import sanitize

__all__ = ["FormattedText", "MAX_MARKDOWN_CHARS", "PLACEHOLDER_STYLE", "format_summary"]

# Styles, as Textual style strings. Tokens we insert get their own style so a
# Company can't pass off typed "⟨U+202E⟩" as ours, or hide a real one.
BOLD = "bold"
ITALIC = "italic"
PLACEHOLDER_STYLE = "reverse"

# markdown-it-py costs ~10-30 µs per delimiter or list item, so a hostile 1 MB
# summary would take seconds. Ops §3 allows showing the text as is; past this
# size we do, which keeps rendering linear.
MAX_MARKDOWN_CHARS = 32 * 1024

BULLET = "• "

# What rendering may remove or add: whitespace, emphasis and list markers, list
# numbers (renumbered from `start`). Everything else must survive, in order.
_SKELETON_DROP = re.compile(r"[\s*_+\-.)0-9•]+")

Span3 = tuple[int, int, str]


@dataclass(frozen=True)
class FormattedText:
    text: str
    spans: tuple[Span3, ...]
    flags: frozenset[str]  # sanitiser flags, plus "unformatted" when shown as plain text
    formatted: bool

    @property
    def placeholder_spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((s, e) for s, e, style in self.spans if style == PLACEHOLDER_STYLE)


_parser: Any = None


def _get_parser() -> Any:
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt

        # "zero" has only paragraphs and text. Never enable entity (&#x202e;
        # would decode to a bidi control), link, image, html, heading, code or
        # table. "normalize" is off so a raw CR or NUL reaches the sanitiser and
        # shows as \x0d / \x00 instead of being turned into a newline or U+FFFD.
        md = MarkdownIt("zero").enable(["emphasis", "list"])
        md.disable("normalize")
        _parser = md
    return _parser


class _Unsupported(Exception):
    pass


class _Builder:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.pos = 0
        self.spans: list[Span3] = []
        self.flags: set[str] = set()

    def emit(self, text: str, style: str | None = None) -> None:
        if not text:
            return
        if style:
            self.spans.append((self.pos, self.pos + len(text), style))
        self.pieces.append(text)
        self.pos += len(text)

    def emit_company_text(self, text: str, continuation: str) -> None:
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if index:
                self.emit("\n" + continuation)
            if not line:
                continue
            clean = sanitize(line)
            self.flags |= clean.flags
            base = self.pos
            self.emit(clean.text)
            for start, end in clean.marks:
                self.spans.append((base + start, base + end, PLACEHOLDER_STYLE))

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class _List:
    __slots__ = ("ordered", "number", "indent", "first", "top")

    def __init__(self, ordered: bool, number: int, indent: str, top: bool) -> None:
        self.ordered = ordered
        self.number = number
        self.indent = indent
        self.first = True
        self.top = top


class _Item:
    __slots__ = ("continuation", "started")

    def __init__(self, continuation: str) -> None:
        self.continuation = continuation
        self.started = False


def _render_tokens(tokens: list[Any]) -> _Builder:
    out = _Builder()
    lists: list[_List] = []
    items: list[_Item] = []
    for index, token in enumerate(tokens):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            ordered = kind == "ordered_list_open"
            start = token.attrs.get("start", 1) if ordered else 1
            try:
                number = int(start)
            except (TypeError, ValueError):
                number = 1
            indent = items[-1].continuation if items else ""
            if items:
                items[-1].started = True
            lists.append(_List(ordered, number, indent, top=not items))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            if not lists:
                raise _Unsupported(kind)
            current = lists[-1]
            if out.pos:
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                loose = (
                    following is not None
                    and following.type == "paragraph_open"
                    and not following.hidden
                )
                blank = (current.first and current.top) or (loose and not current.first)
                out.emit("\n\n" if blank else "\n")
            marker = f"{current.number}. " if current.ordered else BULLET
            current.number += 1
            current.first = False
            out.emit(current.indent + marker)
            items.append(_Item(current.indent + " " * len(marker)))
        elif kind == "list_item_close":
            items.pop()
        elif kind == "paragraph_open":
            if items and not items[-1].started:
                items[-1].started = True  # continues the marker's line
            else:
                if out.pos:
                    out.emit("\n" if token.hidden else "\n\n")
                if items:
                    out.emit(items[-1].continuation)
        elif kind == "paragraph_close":
            pass
        elif kind == "inline":
            _render_inline(out, token.children or [], items[-1].continuation if items else "")
        else:
            raise _Unsupported(kind)
    return out


def _render_inline(out: _Builder, children: list[Any], continuation: str) -> None:
    open_at: list[tuple[str, int]] = []
    for child in children:
        kind = child.type
        if kind == "text":
            out.emit_company_text(child.content, continuation)
        elif kind in ("em_open", "strong_open"):
            open_at.append((ITALIC if kind == "em_open" else BOLD, out.pos))
        elif kind in ("em_close", "strong_close"):
            if not open_at:
                raise _Unsupported(kind)
            style, start = open_at.pop()
            if out.pos > start:
                out.spans.append((start, out.pos, style))
        else:
            raise _Unsupported(kind)
    while open_at:
        style, start = open_at.pop()
        if out.pos > start:
            out.spans.append((start, out.pos, style))


def _plain(summary: str, reason_flag: bool) -> FormattedText:
    clean = sanitize(summary)
    flags = set(clean.flags)
    if reason_flag:
        flags.add("unformatted")
    spans = tuple((s, e, PLACEHOLDER_STYLE) for s, e in clean.marks)
    return FormattedText(clean.text, spans, frozenset(flags), formatted=False)


# Small: the approval screen and the checks ask for the same few summaries,
# and a hostile one can be megabytes.
@lru_cache(maxsize=8)
def format_summary(summary: str) -> FormattedText:
    """The summary as the User sees it. Never raises: any surprise shows plain text.

    Plain text is also used past MAX_MARKDOWN_CHARS, and whenever the parser
    dropped content (markdown-it silently discards blocks nested deeper than
    maxNesting), which the skeleton comparison below detects.
    """
    if not isinstance(summary, str):
        summary = "" if summary is None else str(summary)
    if len(summary) > MAX_MARKDOWN_CHARS:
        return _plain(summary, True)
    try:
        whole = sanitize(summary)
        tokens = _get_parser().parse(summary)
        built = _render_tokens(tokens)
        text = built.text
        if _SKELETON_DROP.sub("", text) != _SKELETON_DROP.sub("", whole.text):
            return _plain(summary, True)
        flags = frozenset(built.flags | whole.flags)
        return FormattedText(text, tuple(sorted(built.spans)), flags, formatted=True)
    except Exception:  # noqa: BLE001 - hostile input must never break the approval screen
        try:
            return _plain(summary, True)
        except Exception:  # noqa: BLE001
            return FormattedText(
                "(this summary could not be shown)", (), frozenset({"unformatted"}), False
            )
