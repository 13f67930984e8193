"""What the demo's TUI says when its start went wrong: the pre-TUI text is hidden behind the TUI,
so the inbox itself says the sign-in failed (with the key that signs in) or that the operations
arrived already expired. Run as a person runs it, in a pseudo-terminal."""

from __future__ import annotations

import pytest

from cli_support import Terminal
from poppy_tui.cli.exit_codes import Exit

OPENING = "Opening the inbox"


@pytest.mark.slow
def test_three_wrong_passwords_are_said_in_the_inbox(home):
    from poppy_tui.demo.accounts.users import DEMO_USERNAME

    terminal = Terminal("--demo", home=home, columns=120, lines=30)
    try:
        terminal.read_until(r"Press Enter")
        terminal.press(b"\r")
        for attempt in range(1, 4):  # each prompt waited for by its count: the n-th shows
            terminal.read_until(r"(?s)" + r"Email: .*" * attempt)
            terminal.press(DEMO_USERNAME.encode() + b"\r")
            terminal.read_until(r"(?s)" + r"Password \(not shown\): .*" * attempt)
            terminal.press(b"not-the-password\r")
            terminal.read_until(
                r"(?s)" + r"match an account.*" * attempt, flat=True
            )  # wrapped at 80
        terminal.read_until(OPENING)
        terminal.read_until(r"The demo's sign-in failed", after=OPENING)
        terminal.read_until(r"Ctrl\+G: sign in", after=OPENING)
        terminal.press(b"q")
        assert terminal.wait() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
    assert "Traceback" not in terminal.text


@pytest.mark.slow
def test_operations_that_arrived_expired_are_said_in_the_inbox(home):
    terminal = Terminal(
        "--demo", "--no-accounts", "--faults", "expired", home=home, columns=120, lines=30
    )
    try:
        terminal.read_until(OPENING)
        terminal.read_until(r"3 demo operations arrived already expired", after=OPENING)
        terminal.read_until(r"fault\), so nothing of them waits here", after=OPENING)
        terminal.press(b"q")
        assert terminal.wait() == Exit.OK, terminal.text[-3000:]
    finally:
        terminal.close()
