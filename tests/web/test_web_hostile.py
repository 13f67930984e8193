"""The hostile-summary corpus (tests/safety/corpus) through the page: every input the sanitiser and
the summary renderer are tested with becomes a Company's summary (the strict Company writes it
into its own: "Cancel booking bk_N (<input>)…"), is queued through the agent, and is read back
from the list and the review as a browser gets them.

What must hold on every page: only our own tags and attributes (no tag, attribute, link or image of
the Company's), no control, bidi or invisible character in the HTML at all (each is a visible
token), and the summary reads exactly as the TUI renders it (safety/formatting.py: emphasis, lists,
and everything else literal)."""

from __future__ import annotations

import html as html_module
import re
import unicodedata
from html.parser import HTMLParser

import pytest

from poppy_tui.safety.formatting import format_summary
from tests.safety.safety_corpus import cases, expand
from tests.web.web_support import Browserless, new_booking, queue

OUR_TAGS = {
    "html", "head", "meta", "title", "link", "script", "body", "header", "main", "footer", "a",
    "span", "div", "section", "p", "h1", "h2", "h3", "strong", "em", "table", "thead", "tbody",
    "tr", "th", "td", "dl", "dt", "dd", "pre", "nav", "form", "input", "button", "ul", "li",
    "code", "kbd", "br", "details", "summary",
}  # fmt: skip
OUR_ATTRIBUTES = {
    "lang", "charset", "name", "content", "rel", "href", "src", "defer", "class", "id", "role",
    "aria-label", "aria-labelledby", "aria-live", "data-live", "data-revision", "data-status",
    "data-until", "data-expired", "data-ticking", "data-arm", "scope", "method", "action", "type",
    "value", "title",
}  # fmt: skip
# The corpus's megabyte inputs test the sanitiser's speed; a Company's answer that large is refused
# before it is an operation (agent/net/http.py bounds what it reads).
MAX_INPUT = 200_000


def corpus_inputs() -> list[tuple[str, str]]:
    found = []
    for name in ("sanitize", "sanitize_line", "render"):
        for case in cases(name):
            text = expand(case["input"])
            # A lone surrogate can't be sent as UTF-8 by the strict Company's JSON (tests/safety
            # shows it sanitised as ⟨U+D800⟩).
            if len(text) <= MAX_INPUT and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
                found.append((f"{name}:{case['id']}", text))
    return found


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.links: set[str] = set()
        self.summary: list[str] = []
        self._in_summary = 0

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for key, value in attrs:
            self.attributes.add(key)
            if key in ("href", "src", "action"):
                self.links.add(value or "")
        if self._in_summary:
            self._in_summary += 1 if tag != "br" else 0
        elif tag == "div" and ("class", "summary") in attrs:
            self._in_summary = 1

    def handle_endtag(self, tag):
        if self._in_summary:
            self._in_summary -= 1

    def handle_data(self, data):
        if self._in_summary:
            self.summary.append(data)


def forbidden_characters(text: str) -> set[str]:
    return {
        f"U+{ord(ch):04X}"
        for ch in text
        if (ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn"))
    }


def check_page(text: str) -> Page:
    page = Page()
    page.feed(text)
    assert page.tags <= OUR_TAGS, page.tags - OUR_TAGS
    assert page.attributes <= OUR_ATTRIBUTES, page.attributes - OUR_ATTRIBUTES
    assert all(
        re.fullmatch(r"/(static/[a-z]+\.(js|css)|op/\d+(/[a-z/]+)?|unpair)?", link)
        for link in page.links
    ), page.links
    assert not forbidden_characters(text)
    return page


@pytest.fixture(scope="module")
def queued(web_home, travel):
    found = []
    for label, text in corpus_inputs():
        booking = new_booking(travel, text)
        found.append((label, text, booking, queue(web_home, f"/bookings/{booking}/cancel")))
    return found


def test_every_hostile_summary_reads_as_the_tui_renders_it(web, queued):
    browser = Browserless(web)
    try:
        browser.pair("reader")
        listing = browser.get("/")
        assert listing.status_code == 200
        check_page(listing.text)
        for label, text, booking, row in queued:
            answer = browser.get(f"/op/{row}")
            assert answer.status_code == 200, label
            page = check_page(answer.text)
            summary = f"Cancel booking {booking} ({text}). No fee is charged."
            assert "".join(page.summary) == format_summary(summary).text, label
            # Our visible tokens are marked as ours, as the TUI's reverse style marks them.
            rendered = format_summary(summary)
            marked = "".join(re.findall(r'<span class="tok">(.*?)</span>', answer.text))
            for start, end in rendered.placeholder_spans:
                token = html_module.escape(rendered.text[start:end], quote=False)
                assert token in marked, (label, token)
    finally:
        browser.close()
