"""Everything the screens check about one stored revision: computed in agent/revision_checks.py
(the inbox reads them stored; the review screen checks afresh)."""

from __future__ import annotations

from poppy_tui.agent.revision_checks import UNREADABLE, Checked, check_record

__all__ = ["UNREADABLE", "Checked", "check_record"]
