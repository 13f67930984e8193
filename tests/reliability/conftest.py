"""Shared helpers for the reliability suite: real processes, real files, real servers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a child Python that imports poppy_tui from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def run_child(script: str, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(**env),
        cwd=str(REPO),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private POPPY_TUI_HOME for one test."""
    root = tmp_path / "home"
    root.mkdir()
    return root
