"""Helpers for running poppy-tui as a real program, shared by the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import poppy_tui

# The package the tests import, so a subprocess runs the same code (a checkout or an install).
PACKAGE_ROOT = str(Path(poppy_tui.__file__).resolve().parent.parent)


@dataclass
class Run:
    code: int
    out: str
    err: str


def subprocess_env(home: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POPPY_TUI_")}
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if home is not None:
        env["POPPY_TUI_HOME"] = str(home)
    env.update(extra)
    return env


def run_process(*argv: str, home: Path | None, timeout: float = 60, **extra_env: str) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "poppy_tui", *argv],
        env=subprocess_env(home, **extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def start_process(*argv: str, home: Path | None, **extra_env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "poppy_tui", *argv],
        env=subprocess_env(home, **extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
