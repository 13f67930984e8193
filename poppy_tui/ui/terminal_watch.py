"""Noticing that the TUI's terminal is gone.

Closing a terminal window, or losing an ssh or tmux connection, sends SIGHUP, which ends the TUI.
A terminal can also vanish without one: a pseudo-terminal whose other end is closed by a program
that never made it the TUI's controlling terminal (a test or benchmark harness, a crashed
multiplexer). Textual's input thread then reads end-of-file in a loop (textual 8.2,
drivers/linux_driver.py), at most of a core, and the TUI would never end. The app's half-second
store poll also asks the terminal whether it hung up: one poll() call, nothing read.
"""

from __future__ import annotations

import os
import select


def watchable_terminal(fd: int) -> bool:
    """True when `fd` is a terminal whose hang-up poll() can report (not on Windows)."""
    try:
        return hasattr(select, "poll") and os.isatty(fd)
    except OSError:
        return False


def terminal_hung_up(fd: int) -> bool:
    """The terminal on `fd` hung up (its other end closed) or the descriptor is no longer open."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)  # a hang-up and an error are reported whatever is asked
    try:
        events = poller.poll(0)
    except OSError:
        return False
    return any(mask & (select.POLLHUP | select.POLLNVAL) for _, mask in events)
