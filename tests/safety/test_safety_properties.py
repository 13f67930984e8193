"""Properties over arbitrary hostile input: nothing crashes, nothing dangerous gets out."""

from __future__ import annotations

import io
import os
import re
import unicodedata
from datetime import datetime, timedelta, timezone, UTC

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from poppy_tui.safety.discrepancies import (
    CODES,
    Finding,
    check_operation,
    diff_revisions,
    key_amount,
    terms_rows,
)
from poppy_tui.safety.formatting import _SKELETON_DROP
from poppy_tui.safety.sanitize import sanitize, sanitize_line
from poppy_tui.safety.summary import render_summary, safe_content, safe_line_content

FRAGMENTS = [
    "\x1b",
    "\x1b[",
    "\x1b[2J",
    "\x1b]8;;https://evil\x1b\\",
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b]0;t\x1b\\",
    "\x1bP",
    "\x1b_",
    "\x07",
    "\x08",
    "\r",
    "\x00",
    "\x7f",
    "\x85",
    "\x9b",
    "\x9c",
    "\x9d",
    "\x90",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200e",
    "\u061c",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u00ad",
    "\u2028",
    "\ud800",
    "\udfff",
    "\U000e0041",
    "\ufe0f",
    "\u3164",
    "\ue000",
    "\u0378",
    "[@click=app.quit]",
    "[link=https://x]",
    "[b]",
    "[/]",
    "]",
    "[",
    "*",
    "**",
    "_",
    "__",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "7) ",
    "  ",
    "    ",
    "\n",
    "\n\n",
    "\t",
    "\\",
    "# ",
    "> ",
    "`",
    "```",
    "<img src=x>",
    "&#x202e;",
    "&#27;",
    "![i](x)",
    "[a](b)",
    "$70.00",
    "$",
    "USD",
    "70",
    "€",
    "＄７０",
    "٧٠",
    "1,234.56",
    "ord_7Hk2",
    "October 8",
    "2026-10-08",
    "3 nights",
    "2 x",
    "qty: 4",
    "а",
    "ο",
    "Ⅰ",
    "K",
    "pаypal",
    "x",
    " ",
    ".",
    ",",
]

any_char_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=60)
hostile_text = st.one_of(
    any_char_text,
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), any_char_text), max_size=30).map("".join),
)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
json_value = st.recursive(
    json_scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(hostile_text, children, max_size=4)
    ),
    max_leaves=16,
)
terms_st = st.one_of(st.none(), st.dictionaries(hostile_text, json_value, max_size=6))
when = st.datetimes(
    min_value=datetime(2000, 1, 2),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))]),
)


@st.composite
def operations(draw, operation_id=None):
    expires = draw(when)
    return Operation(
        operation_id=operation_id or draw(st.sampled_from(["exc_1", "exc_2"])),
        revision=draw(st.sampled_from(["r1", "r2"])),
        summary=draw(hostile_text),
        expires_at=expires,
        expires_at_text=draw(st.one_of(st.just(expires.isoformat()), hostile_text)),
        terms=draw(terms_st),
    )


requests = st.one_of(
    st.none(),
    st.builds(ConversationRequest, st.just("https://c"), st.none(), st.just("m1"), hostile_text),
    st.builds(
        ApiRequest,
        st.sampled_from(["GET", "POST"]),
        st.one_of(
            st.just("https://api.example.com/orders/ord_7Hk2/exchanges?qty=2"),
            hostile_text.map(lambda p: "https://api.example.com/" + p),
            hostile_text,
        ),
        json_value,
    ),
    st.builds(
        McpRequest,
        st.just("https://m"),
        hostile_text,
        st.dictionaries(hostile_text, json_value, max_size=5),
    ),
)

_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def dangerous(ch: str) -> bool:
    """What must never reach the screen raw."""
    category = unicodedata.category(ch)
    if category == "Cc":
        return ch not in "\n\t"
    return category in ("Cf", "Cs", "Co", "Cn", "Zl", "Zp") or ord(ch) in _BIDI


def assert_clean(text: str) -> None:
    bad = [hex(ord(c)) for c in text if dangerous(c)]
    assert not bad, bad
    text.encode("utf-8")  # a lone surrogate would raise here


# SAFETY_FUZZ_SCALE=20 for a long local run; the default keeps the suite fast.
_SCALE = float(os.environ.get("SAFETY_FUZZ_SCALE", "1"))
FAST = settings(
    max_examples=int(300 * _SCALE), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SLOW = settings(
    max_examples=int(150 * _SCALE),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FAST
@given(hostile_text)
def test_sanitize_output_is_clean_idempotent_and_flags_are_honest(text):
    result = sanitize(text)
    assert_clean(result.text)
    again = sanitize(result.text)
    assert again.text == result.text
    assert again.flags <= {"markup", "mixed_script"}
    assert ("control" in result.flags) == any(
        unicodedata.category(c) == "Cc" and c not in "\n\t" for c in text
    )
    assert ("bidi" in result.flags) == any(ord(c) in _BIDI for c in text)
    for start, end in result.marks:
        assert 0 <= start < end <= len(result.text)


@FAST
@given(hostile_text, st.integers(min_value=0, max_value=40))
def test_sanitize_line_is_one_bounded_clean_line(text, max_chars):
    result = sanitize_line(text, max_chars)
    assert_clean(result.text)
    assert "\n" not in result.text and "\t" not in result.text
    if "truncated" in result.flags:
        marker = re.search(r"…\(\+(\d+) chars?\)$", result.text)
        assert marker is not None
        assert marker.group().endswith("char)") == (marker.group(1) == "1")  # "+1 char", "+2 chars"
        assert len(result.text) - len(marker.group()) <= max_chars
        assert int(marker.group(1)) >= 1
    else:
        assert len(result.text) <= max_chars
        assert result.text == sanitize_line(text, 10**9).text


def _console_output(content) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=True, color_system="truecolor", width=60, legacy_windows=False
    )
    console.print(content)
    return buffer.getvalue()


_OUR_SGR = re.compile(r"\x1b\[[0-9;]*m")


def assert_terminal_safe(output: str) -> None:
    # Only SGR styling we asked for (bold, italic, reverse) may remain; no OSC,
    # no cursor movement, no other escape, no C1, no BEL.
    rest = _OUR_SGR.sub("", output)
    assert "\x1b" not in rest
    assert not any("\x80" <= c <= "\x9f" or c == "\x07" for c in rest)


@SLOW
@given(hostile_text)
def test_render_summary_never_raises_and_emits_nothing_dangerous(summary):
    rendered = render_summary(summary)
    plain = rendered.content.plain
    assert plain == rendered.plain
    assert_clean(plain)
    for span in rendered.content.spans:
        assert 0 <= span.start <= span.end <= len(plain)
        assert span.style in ("bold", "italic", "reverse")
    # Nothing the Company wrote is lost: rendering only removes markers and whitespace.
    assert _SKELETON_DROP.sub("", plain) == _SKELETON_DROP.sub("", sanitize(summary).text)
    assert_terminal_safe(_console_output(rendered.content))


@FAST
@given(hostile_text, st.integers(min_value=0, max_value=30))
def test_safe_content_helpers_emit_nothing_dangerous(text, max_chars):
    for content in (safe_content(text), safe_line_content(text, max_chars)):
        assert_clean(content.plain)
        assert_terminal_safe(_console_output(content))


def _assert_findings(findings: list[Finding]) -> None:
    ranks = {"danger": 0, "warning": 1, "info": 2}
    assert [ranks[f.severity] for f in findings] == sorted(ranks[f.severity] for f in findings)
    for finding in findings:
        assert finding.code in CODES
        assert finding.code != "check_failed", finding.message
        assert_clean(finding.message)
        if finding.field is not None:
            assert_clean(finding.field)
        assert "\n" not in finding.message


@SLOW
@given(
    operations(),
    requests,
    st.one_of(st.none(), operations()),
    st.one_of(st.none(), when),
    st.integers(0, 600),
)
def test_check_operation_never_raises_or_gives_up(operation, request, previous, now, min_read):
    findings = check_operation(
        operation, request, previous=previous, now=now, min_read_seconds=min_read
    )
    _assert_findings(findings)


@SLOW
@given(operations(operation_id="exc_1"), operations(operation_id="exc_1"))
def test_display_helpers_are_total_and_clean(previous, current):
    amount = key_amount(current)
    if amount is not None:
        assert_clean(amount)
    for key, value in terms_rows(current.terms):
        assert_clean(key)
        assert_clean(value)
        assert "\n" not in key + value
    diff = diff_revisions(previous, current)
    for line in diff.summary_diff:
        assert_clean(line)
    for change in diff.terms_changes:
        for text in (change.path, change.old or "", change.new or ""):
            assert_clean(text)
    assert diff.changed == (
        previous.summary != current.summary
        or previous.expires_at != current.expires_at
        or diff.terms_changed
    )


@FAST
@given(hostile_text)
def test_reading_text_holds_nothing_hidden_and_is_stable(text):
    from poppy_tui.safety.sanitize import reading_text

    read = reading_text(text)
    assert not (sanitize(read).flags & {"control", "escape", "bidi", "invisible"})
    assert reading_text(read) == read
    assert len(read) <= len(text)


@FAST
@given(hostile_text, hostile_text, st.integers(min_value=0, max_value=80))
def test_company_labels_are_clean_and_always_carry_the_domain(name, domain, max_chars):
    from poppy_tui.safety.company_name import NAME_MARK, company_label
    from poppy_tui.safety.sanitize import mixed_script

    label = company_label(name, domain, max_chars)
    for text in (label.text, label.possessive, label.warning or ""):
        assert_clean(text)
        assert "\n" not in text
    assert label.text.endswith(f" ({label.domain})")
    assert label.marked_name.startswith(NAME_MARK + " ") == label.marked
    if mixed_script(name):
        assert label.marked


@SLOW
@given(operations(operation_id="exc_1"), operations(operation_id="exc_1"))
def test_only_changed_summary_or_terms_are_new_terms(previous, current):
    from poppy_tui.safety.discrepancies import RevisionKind, classify_revision

    kind = classify_revision(previous, current)
    diff = diff_revisions(previous, current)
    content_changed = diff.summary_changed or diff.terms_changed
    if previous.revision != current.revision:
        assert (kind is RevisionKind.NEW_TERMS) == content_changed
        assert (kind is RevisionKind.NEW_EXPIRY) == (not content_changed and diff.expires_changed)
    else:
        assert kind in (RevisionKind.UNCHANGED, RevisionKind.REUSED)
        assert (kind is RevisionKind.REUSED) == diff.changed
