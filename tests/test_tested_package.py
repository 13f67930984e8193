"""The suite tests the package it means to: the checkout's when run in it, the installed wheel's
in .ci/run's installed runs (POPPY_TUI_TESTS_EXPECT=installed), where tests/ is a copy outside the
checkout so that pyproject's `pythonpath = ["."]` can't bring the checkout in."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.tested_package import PACKAGE

TESTS_ROOT = Path(__file__).resolve().parent.parent


def test_the_package_imported_is_the_one_this_run_tests():
    installed = Path(sysconfig.get_paths()["purelib"]).resolve()
    if os.environ.get("POPPY_TUI_TESTS_EXPECT") == "installed":
        assert PACKAGE.is_relative_to(installed), f"{PACKAGE} is not the installed wheel's"
        assert not (TESTS_ROOT / "poppy_tui").exists(), "a checkout beside the tests"
    else:
        assert PACKAGE == TESTS_ROOT / "poppy_tui", f"{PACKAGE} is not this checkout's"


def test_a_child_python_runs_the_same_package():
    from tests.cli.cli_support import subprocess_env

    child = subprocess.run(
        [sys.executable, "-c", "import poppy_tui; print(poppy_tui.__file__)"],
        env=subprocess_env(None),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=TESTS_ROOT,
    )
    assert Path(child.stdout.strip()).resolve().parent == PACKAGE, child.stderr
