"""A TUI whose terminal vanishes without SIGHUP ends by itself. Such a terminal is a pseudo-
terminal whose other end is closed by a program that never made it the TUI's controlling
terminal (harnesses do this): Textual's input thread then reads end-of-file in a loop, at most
of a core, and the TUI used to run on for ever."""

from __future__ import annotations

import os
import sys

from poppy_tui.ui.terminal_watch import terminal_hung_up, watchable_terminal
from tests.ui.test_first_frame import home_with_three_operations, read_until, start_in_pty


def test_the_tui_ends_when_its_terminal_hangs_up_without_sighup(tmp_path):
    home, env = home_with_three_operations(tmp_path)
    # A session of its own without a controlling terminal: closing the master sends no SIGHUP.
    proc, master = start_in_pty([sys.executable, "-m", "poppy_tui", "--home", str(home)], env)
    try:
        # Past the first frame, the store poll running: the start-up warning (the fail keyring
        # can't sign) is said after the network preparation, which follows the first frame.
        read_until(master, ["Manzanita", "Approvals can't"])
        os.close(master)
        master = -1
        # Generous: the poll runs every half second; the old code never ended at all.
        assert proc.wait(30) is not None
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_terminal_is_watched_and_reports_its_hang_up_only_once_its_other_end_closed():
    master, slave = os.openpty()
    try:
        assert watchable_terminal(slave)
        assert not terminal_hung_up(slave)
        os.close(master)
        master = -1
        assert terminal_hung_up(slave)
    finally:
        if master >= 0:
            os.close(master)
        os.close(slave)


def test_a_pipe_is_not_a_watched_terminal():
    read_end, write_end = os.pipe()
    try:
        assert not watchable_terminal(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)
