"""An error line is cut, when it must be, in its middle: the fix at its end stays whole (walk C3:
`set key_storage = "fi…(+69 chars)` cut at exactly the word the reader needed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from poppy_tui.safety.error_line import error_line
from poppy_tui.safety.sanitize import sanitize_line

FIX = 'or opt in to a private key file: set key_storage = "file" in config.toml'


def test_a_long_error_keeps_its_beginning_and_its_fix():
    text = "API: No usable keyring for the agent's signing key: " + "x" * 300 + " " + FIX
    line = error_line(text, 160)
    assert len(line) <= 160
    assert line.startswith("API: No usable keyring")
    assert line.endswith('set key_storage = "file" in config.toml')
    assert "…(+" in line and "chars)…" in line


def test_a_line_that_fits_is_whole():
    assert error_line("can't use /proc: not a folder", 100) == "can't use /proc: not a folder"


def test_hostile_text_is_sanitised_in_both_parts():
    text = "\x1b]52;c;ZXZpbA==\x07" * 50 + "; fix: \u202eexe.txt"
    line = error_line(text, 80)
    assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
    assert line.endswith(sanitize_line("fix: \u202eexe.txt", 80).text)


@given(st.text(min_size=0, max_size=2000), st.integers(min_value=40, max_value=400))
def test_never_longer_than_asked_and_never_a_raw_control(text, room):
    line = error_line(text, room)
    assert len(line) <= room
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in line)


@pytest.mark.parametrize("room", [60, 200, 1000])
def test_the_end_survives_whatever_the_room(room):
    text = "a" * 5000 + "; run poppy-tui signin shop"
    assert error_line(text, room).endswith("; run poppy-tui signin shop"[-(room // 3) :])
