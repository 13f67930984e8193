"""Fixtures for the reliability suite: real processes, real files, real servers."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private POPPY_TUI_HOME for one test (config/ and data/ below it)."""
    root = tmp_path / "home"
    (root / "config").mkdir(parents=True)
    (root / "data").mkdir(parents=True)
    return root
