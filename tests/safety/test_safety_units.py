"""API details the corpus doesn't pin: rows, key amounts, diffs, fallbacks, speed, imports."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import timedelta

import pytest
from rich.console import Console
from textual.content import Content

from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.safety import discrepancies, formatting
from poppy_tui.safety.discrepancies import (
    check_operation,
    diff_revisions,
    format_path,
    key_amount,
    terms_rows,
)
from poppy_tui.safety.sanitize import Sanitized, mixed_script, sanitize, sanitize_line
from poppy_tui.safety.summary import (
    RenderedSummary,
    render_summary,
    safe_content,
    safe_line_content,
)
from tests.safety.safety_corpus import NOW
from tests.safety.test_safety_properties import assert_terminal_safe

CANONICAL_TERMS = {
    "order_id": "ord_7Hk2",
    "item_id": "itm_4Qa",
    "replacement_sku": "stormline-insulated-m",
    "price_difference": {"amount": "70.00", "currency": "USD"},
}
CANONICAL_SUMMARY = (
    "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), "
    "for $70.00 more, charged to the card used for the order."
)


def op(
    summary=CANONICAL_SUMMARY,
    terms=CANONICAL_TERMS,
    revision="r1",
    expires_in=3600,
    operation_id="exc_5Rt2",
):
    expires = NOW + timedelta(seconds=expires_in)
    return Operation(operation_id, revision, summary, expires, expires.isoformat(), terms)


def deep_list(levels: int, tail: str) -> str:
    return "".join("  " * i + f"- level{i}\n" for i in range(levels)) + tail


# --- sanitize -------------------------------------------------------------------


def test_sanitized_is_a_frozen_dataclass_with_text_and_flags():
    result = sanitize("a")
    assert isinstance(result, Sanitized)
    with pytest.raises(AttributeError):
        result.text = "b"  # type: ignore[misc]


def test_non_strings_do_not_crash():
    assert sanitize(None).text == ""  # type: ignore[arg-type]
    assert sanitize_line(42, 10).text == "42"  # type: ignore[arg-type]
    assert render_summary(None).plain == ""  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("paypal", False),
        ("p\u0430ypal", True),  # Cyrillic а
        ("\u0440\u0430ypal", True),
        ("Москва", False),
        ("Москва Shop", True),
        ("東京 Tower チケット", False),
        ("Ａcme", True),  # fullwidth and ASCII Latin in one name: a spoof, not CJK writing
        ("ＡＢＣ株式会社", False),
        ("\u212aelvin", True),
        ("café", False),
        ("$70.00", False),
        ("Αθήνα", False),
        ("Αthens", True),  # Greek capital alpha
        # From Unicode Script_Extensions (UTS #39), not from character names (docs/safety.md,
        # `mixed_script`):
        ("\u041c\u0430nzanita Outfitters", True),  # Cyrillic М and а
        ("\U0001d400cme", True),  # MATHEMATICAL BOLD CAPITAL A: script Common, a Latin look-alike
        ("\u2113oan", True),  # SCRIPT SMALL L, also Common
        ("\u13aapple", True),  # CHEROKEE LETTER GO, an A look-alike
        ("\u2160nvoice", True),  # ROMAN NUMERAL ONE
        ("らーめん Tokyo", False),  # ー has Script_Extensions {Hiragana, Katakana}
        ("삼성 Galaxy", False),  # Latin beside Korean is "highly restrictive"
        ("\u0391\u03b8\u03ae\u043da", True),  # Greek, Cyrillic and Latin
        ("Straße", False),
        ("\ufb01le", False),  # a ligature of two Latin letters is still Latin
        ("مرحبا", False),
    ],
)
def test_mixed_script(text, expected):
    assert mixed_script(text) is expected


def test_mixed_script_is_found_in_a_megabyte():
    # Speed is measured in tests/benchmarks, never asserted here.
    text = "pаypal " * 150_000
    assert "mixed_script" in sanitize(text).flags


# --- summary rendering ------------------------------------------------------------


def test_render_summary_returns_content_never_a_markup_string():
    rendered = render_summary("**b** [b]x[/b]")
    assert isinstance(rendered, RenderedSummary)
    assert isinstance(rendered.content, Content)
    assert rendered.content.plain == "b [b]x[/b]"
    assert [(s.start, s.end, s.style) for s in rendered.content.spans] == [(0, 1, "bold")]


def test_deeply_nested_lists_fall_back_to_plain_text_instead_of_dropping_content():
    # markdown-it stops at maxNesting and silently discards the rest; we must not.
    source = deep_list(30, "and we also charge $500.00 a month")
    rendered = render_summary(source)
    assert not rendered.formatted
    assert "unformatted" in rendered.flags
    assert rendered.plain == source
    assert "$500.00 a month" in rendered.plain


def test_hidden_tail_is_still_checked_against_the_terms():
    findings = check_operation(
        op(summary=deep_list(30, CANONICAL_SUMMARY + " Also $500.00 a month.")), None, now=NOW
    )
    assert ("danger", "summary_amount_not_in_terms") in [(f.severity, f.code) for f in findings]


def test_parser_failure_falls_back_to_sanitised_plain_text(monkeypatch):
    class Broken:
        def parse(self, text):
            raise RuntimeError("boom")

    formatting.format_summary.cache_clear()
    monkeypatch.setattr(formatting, "_get_parser", lambda: Broken())
    try:
        rendered = render_summary("**x** \x1b[2J")
    finally:
        formatting.format_summary.cache_clear()
    assert rendered.plain == "**x** \\x1b[2J"
    assert rendered.flags == {"unformatted", "control", "escape"}
    assert [(s.start, s.end, s.style) for s in rendered.content.spans] == [(6, 10, "reverse")]


def test_summaries_past_the_size_limit_show_as_plain_text():
    source = "**a** " * (formatting.MAX_MARKDOWN_CHARS // 6 + 1)
    rendered = render_summary(source)
    assert rendered.plain == source
    assert "unformatted" in rendered.flags


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("plain", "Pay $70.00 now. " * 65_536),
        ("escapes", "\x1b[31m" * 200_000),
        ("bidi", "\u202e" * 1_000_000),
        ("stars", "*a " * 333_333),
        ("list", "- a\n" * 250_000),
        ("brackets", "[@click=app.quit]" * 60_000),
        ("surrogates", "\ud800" * 1_000_000),
    ],
)
def test_a_megabyte_renders_and_checks(name, source):
    formatting.format_summary.cache_clear()
    rendered = render_summary(source)
    findings = check_operation(op(summary=source), None, now=NOW)
    assert len(rendered.plain) >= len(source) // 2
    assert all(f.severity in ("danger", "warning", "info") for f in findings)


def test_largest_formatted_summary_is_formatted():
    source = "- **a** *b*\n" * (formatting.MAX_MARKDOWN_CHARS // 12)
    formatting.format_summary.cache_clear()
    rendered = render_summary(source)
    assert rendered.formatted


def test_safe_content_styles_our_tokens_and_keeps_markup_literal():
    content = safe_content("[link=https://x]a\u202e")
    assert isinstance(content, Content)
    assert content.plain == "[link=https://x]a⟨U+202E⟩"
    assert [(s.start, s.end, s.style) for s in content.spans] == [(17, 25, "reverse")]
    line = safe_line_content("a\nb" + "c" * 50, 5)
    assert line.plain == "a⏎bcc…(+48 chars)"
    assert [(s.start, s.end) for s in line.spans] == [(1, 2), (5, 17)]


def test_the_terminal_oracle_detects_raw_escapes():
    # Without sanitising, Content lets these through; the property tests rely on catching that.
    for raw in ("\x1b]8;;https://evil\x1b\\x", "\x1b[2J", "\x9b2J"):
        buffer = io.StringIO()
        Console(file=buffer, force_terminal=True, color_system="truecolor").print(Content(raw))
        with pytest.raises(AssertionError):
            assert_terminal_safe(buffer.getvalue())


# --- findings -------------------------------------------------------------------


def test_company_values_in_messages_are_sanitised_and_bounded():
    request = ApiRequest(
        "POST",
        "https://api.example.com/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    hostile = "\x1b]0;pwned\x07" + "x" * 200
    terms = dict(CANONICAL_TERMS, replacement_sku=hostile)
    mismatch = [
        f
        for f in check_operation(op(terms=terms), request, now=NOW)
        if f.code == "request_mismatch"
    ]
    assert len(mismatch) == 1
    message = mismatch[0].message
    assert "\x1b" not in message and "\x07" not in message
    assert '"\\x1b]0;pwned\\x07' in message
    assert "…(+" in message  # long values are cut, visibly


def test_a_crashing_check_becomes_a_danger_finding_and_others_still_run(monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(discrepancies, "_check_money", explode)
    findings = check_operation(op(summary=CANONICAL_SUMMARY + "\u202e"), None, now=NOW)
    codes = [(f.severity, f.code) for f in findings]
    assert ("danger", "check_failed") in codes
    assert ("danger", "bidi_control") in codes
    assert ("warning", "id_not_in_summary") in codes


def test_findings_are_sorted_danger_first():
    findings = check_operation(
        op(summary="Exchange for $700.00 \u200b", terms=dict(CANONICAL_TERMS), expires_in=10),
        None,
        now=NOW,
    )
    severities = [f.severity for f in findings]
    assert severities == sorted(severities, key=["danger", "warning", "info"].index)
    assert severities[0] == "danger" and "warning" in severities


def test_naive_now_is_taken_as_utc():
    findings = check_operation(op(expires_in=-1), None, now=NOW.replace(tzinfo=None))
    assert "expired" in [f.code for f in findings]


def test_min_read_seconds_is_honoured():
    assert "expires_soon" in [
        f.code for f in check_operation(op(expires_in=100), None, now=NOW, min_read_seconds=120)
    ]
    assert "expires_soon" not in [
        f.code for f in check_operation(op(expires_in=100), None, now=NOW, min_read_seconds=60)
    ]


def test_terms_findings_are_capped_per_code():
    terms = {f"note{i}": "\u200b" for i in range(25)}
    findings = [
        f
        for f in check_operation(op(terms=terms), None, now=NOW)
        if f.code == "invisible_character"
    ]
    assert len(findings) == 11
    assert findings[-1].message == "…and 15 more fields with the same problem."


# --- display helpers --------------------------------------------------------------


def test_terms_rows_flattens_and_quotes_odd_keys():
    terms = {
        "order_id": "ord_7Hk2",
        "price_difference": {"amount": "70.00", "currency": "USD"},
        "price_difference.amount": "7.00",
        "items": [{"sku": "a", "qty": 2}, {"sku": "b\nc", "gift": True}],
        "note": None,
        "empty": {},
        "none": [],
        "x\u202e": "\u202evalue",
        "long": "y" * 5000,
    }
    assert terms_rows(terms) == [
        ("order_id", "ord_7Hk2"),
        ("price_difference.amount", "70.00"),
        ("price_difference.currency", "USD"),
        ('["price_difference.amount"]', "7.00"),
        ("items[0].sku", "a"),
        ("items[0].qty", "2"),
        ("items[1].sku", "b⏎c"),
        ("items[1].gift", "true"),
        ("note", "null"),
        ("empty", "{}"),
        ("none", "[]"),
        ('["x⟨U+202E⟩"]', "⟨U+202E⟩value"),
        ("long", "y" * 5000),
    ]
    assert terms_rows(None) == []


def test_format_path_keeps_nested_and_flat_keys_apart():
    assert format_path(("price_difference", "amount")) == "price_difference.amount"
    assert format_path(("price_difference.amount",)) == '["price_difference.amount"]'
    assert format_path(("items", 0, "0")) == 'items[0]["0"]'


@pytest.mark.parametrize(
    ("terms", "summary", "expected"),
    [
        (CANONICAL_TERMS, CANONICAL_SUMMARY, "USD 70.00"),
        (
            {
                "fee": {"amount": "2.00", "currency": "EUR"},
                "total": {"amount": "52.00", "currency": "EUR"},
            },
            "x",
            "EUR 52.00",
        ),
        ({"price": {"amount_minor": 1999, "currency": "USD"}}, "x", "USD 19.99"),
        ({"price": {"amount_minor": 1999, "currency": "JPY"}}, "x", "JPY 1999"),
        ({"amount": 70, "currency": "USD"}, "x", "USD 70"),
        ({"amount": "70.00", "currency": "US\u202eD"}, "x", "US⟨U+202E⟩D 70.00"),
        ({"sku": "a"}, "Pay $70.00 now", "$70.00"),
        (None, "Pay 70.00 USD now", "70.00 USD"),
        (None, "Pay $70.00 now, or $80.00 later", None),
        (None, "Nothing to pay", None),
        # What the person pays (docs/safety.md, "Which way money moves, and the amount shown"):
        # cancelling an "$18.00 a month" plan pays nothing.
        (
            {
                "subscription_id": "sub_6Tc1",
                "price": {"amount": "18.00", "currency": "USD"},
                "refund": {"amount": "0.00", "currency": "USD"},
            },
            "Cancel your plan (sub_6Tc1, $18.00 a month). This month isn't refunded.",
            None,
        ),
        (
            {
                "subscription_id": "sub_6Tc1",
                "price": {"amount": "18.00", "currency": "USD"},
                "refund": {"amount": "6.00", "currency": "USD"},
            },
            "Cancel your plan (sub_6Tc1, $18.00 a month); $6.00 is refunded.",
            "USD -6.00",  # money back: a negative payment
        ),
        (
            {"plan": "Coffee Club", "price": {"amount": "18.00", "currency": "USD"}},
            "Join the Coffee Club for $18.00 a month.",
            "USD 18.00 a month",
        ),
        (
            {"price_difference": {"amount": "0.00", "currency": "USD"}},
            "Exchange it at no extra cost.",
            "USD 0.00",
        ),
        (
            {"price_difference": {"amount": "-70.00", "currency": "USD"}},
            "Exchange it for $70.00 less, refunded to your card.",
            "USD -70.00",
        ),
    ],
)
def test_key_amount(terms, summary, expected):
    assert key_amount(op(summary=summary, terms=terms)) == expected


def test_diff_revisions_exact():
    before = op(
        summary="Pay $70\nto Bob",
        terms={"amount": {"amount": "70", "currency": "USD"}, "to": "bob", "n": 70},
    )
    after = op(
        summary="Pay $90\nto Bob",
        terms={"amount": {"amount": "90", "currency": "USD"}, "n": "70", "memo": "\u202ehi"},
        revision="r2",
    )
    diff = diff_revisions(before, after)
    assert diff.summary_diff == (
        "--- previous",
        "+++ current",
        "@@ -1,2 +1,2 @@",
        "-Pay $70",
        "+Pay $90",
        " to Bob",
    )
    assert [(c.path, c.kind, c.old, c.new) for c in diff.terms_changes] == [
        ("amount.amount", "changed", "70", "90"),
        ("to", "removed", "bob", None),
        ("n", "changed", "70", '"70"'),
        ("memo", "added", None, "⟨U+202E⟩hi"),
    ]
    assert diff.summary_changed and diff.terms_changed and not diff.expires_changed and diff.changed
    terms_changed = [
        f
        for f in check_operation(after, None, previous=before, now=NOW)
        if f.code == "terms_changed"
    ]
    assert terms_changed[0].message.startswith(
        "The terms changed since you last saw this: amount.amount 70 → 90;"
    )


def test_diff_of_identical_revisions_is_empty():
    diff = diff_revisions(op(), op(revision="r2"))
    assert not diff.changed and diff.summary_diff == () and diff.terms_changes == ()


def test_huge_summary_diff_is_summarised_not_computed():
    before = op(summary="a\n" * 15_000)
    after = op(summary="b\n" * 15_000, revision="r2")
    diff = diff_revisions(before, after)
    assert len(diff.summary_diff) == 1 and "too long" in diff.summary_diff[0]


# --- import hygiene ---------------------------------------------------------------


def test_headless_modules_do_not_import_textual_or_the_markdown_parser():
    code = (
        "import sys\n"
        "import poppy_tui.safety, poppy_tui.safety.sanitize, poppy_tui.safety.discrepancies\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'markdown_it')]\n"
        "assert not heavy, heavy\n"
        "from poppy_tui.safety import check_operation, sanitize\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert result.returncode == 0, result.stderr


def test_absurdly_deep_terms_do_not_crash_anything():
    terms: dict = {}
    node = terms
    for _ in range(5000):
        node["k"] = {}
        node = node["k"]
    node["amount"] = "5"
    operation = op(summary="Pay $5", terms=terms)
    codes = [f.code for f in check_operation(operation, None, now=NOW)]
    assert "check_failed" not in codes
    assert terms_rows(terms)[0][1] == "(nested too deeply to show)"
    assert key_amount(operation) == "$5"


# --- text as a reader takes it (compared, never shown) ---------------------------


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("$70\u200b0.00", "$700.00"),  # zero-width: nothing on a terminal
        ("1\u00ad050 $", "1050 $"),  # soft hyphen
        ("a\u202eb", "ab"),  # bidi control
        ("\x1b7\x1b8 $70", " $70"),  # ESC 7 / ESC 8 leave no digit behind
        ("\x1b[38;5;196m$70\x1b[0m", "$70"),  # CSI with its parameters
        ("\x1b]8;;https://x/99\x1b\\here\x1b]8;;\x1b\\", "here"),  # OSC 8 up to ST
        ("\x1b]0;title 99\x07rest", "rest"),  # OSC up to BEL
        ("\x9b31m$5", "$5"),  # 8-bit CSI
        ("$7\u28000", "$7 0"),  # a blank filler reads as a space
        ("a\x00b\rc", "a b c"),  # other controls separate
        ("plain $70.00", "plain $70.00"),
    ],
)
def test_reading_text_drops_invisibles_and_whole_escape_sequences(raw, read):
    from poppy_tui.safety.sanitize import reading_text

    assert reading_text(raw) == read


def test_an_unterminated_osc_swallows_only_its_own_line():
    from poppy_tui.safety.sanitize import reading_text

    assert reading_text("\x1b]0;evil $1\nPay $70.00") == "\nPay $70.00"


# --- what a revision is (Ops §3 "New terms"; docs/safety.md, classify_revision) ----------


def test_a_revision_that_only_moves_the_expiry_is_new_expiry_not_new_terms():
    from poppy_tui.safety.discrepancies import RevisionKind, classify_revision

    before = op(revision="r1", expires_in=600)
    later = op(revision="r2", expires_in=3600)
    assert classify_revision(before, later) is RevisionKind.NEW_EXPIRY
    assert classify_revision(before, later).label == "new expiry"
    assert not classify_revision(before, later).needs_rereading
    assert diff_revisions(before, later).kind is RevisionKind.NEW_EXPIRY


@pytest.mark.parametrize(
    ("previous", "current", "kind"),
    [
        (None, {}, "first"),
        ({}, {"revision": "r2", "summary": CANONICAL_SUMMARY + " Now."}, "new_terms"),
        ({}, {"revision": "r2", "terms": dict(CANONICAL_TERMS, item_id="itm_9Zz")}, "new_terms"),
        (
            {},
            {
                "revision": "r2",
                "terms": dict(CANONICAL_TERMS, item_id="itm_9Zz"),
                "expires_in": 9000,
            },
            "new_terms",
        ),
        ({}, {"revision": "r2"}, "same_content"),
        ({}, {}, "unchanged"),
        ({}, {"expires_in": 9000}, "reused"),
        ({}, {"revision": "r2", "operation_id": "exc_OTHER"}, "other_operation"),
    ],
)
def test_classify_revision(previous, current, kind):
    from poppy_tui.safety.discrepancies import RevisionKind, classify_revision

    assert classify_revision(
        None if previous is None else op(**previous), op(**current)
    ) is RevisionKind(kind)
    assert RevisionKind(kind).needs_rereading == (
        kind in ("new_terms", "reused", "other_operation")
    )
