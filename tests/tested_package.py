"""The poppy_tui the tests import, and so test: this checkout's (pyproject's `pythonpath = ["."]`)
or an installed wheel's (.ci/run's runs on the other Pythons, from a copy of tests/ outside the
checkout, where nothing of the checkout can be imported). Tests that read the package's own source
read it here, so that they check the code that is tested."""

from __future__ import annotations

from pathlib import Path

import poppy_tui

PACKAGE = Path(poppy_tui.__file__).resolve().parent
