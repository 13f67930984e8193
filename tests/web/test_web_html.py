"""web/html.py: Company text as HTML, through safety/ as the TUI shows it, then escaped."""

from __future__ import annotations

from poppy_tui.web import html


def test_a_look_alike_name_is_marked_beside_its_domain():
    shown = str(html.company("Маnzanita Outfitters", "manzanita.example"))
    assert '<span class="mark"' in shown and "⚠" in shown
    assert "manzanita.example" in shown
    assert html.company_warning("Маnzanita Outfitters", "manzanita.example")
    plain = str(html.company("Manzanita Outfitters", "manzanita.example"))
    assert "⚠" not in plain and html.company_warning("Manzanita Outfitters", "x.example") is None


def test_the_summary_has_emphasis_and_lists_only():
    shown = str(
        html.summary("**Pay** *now*\n\n- one\n- two [link](https://evil.example) <img src=x>")
    )
    assert "<strong>Pay</strong> <em>now</em>" in shown
    assert "• one" in shown and "• two" in shown
    assert "[link](https://evil.example)" in shown and "&lt;img src=x&gt;" in shown
    assert "<a" not in shown and "<img" not in shown


def test_hidden_characters_are_our_marked_tokens_and_a_typed_token_is_not():
    shown = str(html.line("a\u202eb \x1b[2J ⟨U+202E⟩", 200))
    assert '<span class="tok">⟨U+202E⟩</span>b' in shown
    assert '<span class="tok">\\x1b</span>[2J' in shown
    # The Company typed "⟨U+202E⟩" itself: shown, but not as one of ours.
    assert shown.endswith(" ⟨U+202E⟩")


def test_quotes_and_angle_brackets_are_escaped_everywhere():
    for made in (html.text, html.line, html.summary, html.json_text):
        shown = str(made('"><script>alert(1)</script>'))
        assert "<script>" not in shown and "&lt;script&gt;" in shown
