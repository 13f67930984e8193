"""Start-up stays cheap: heavy libraries load only where they are used (Harlequin's rule).

Checked in a fresh interpreter, since this test process has imported everything already.
"""

import subprocess
import sys

import pytest


def modules_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


@pytest.mark.parametrize(
    ("statement", "absent"),
    [
        ("import poppy_tui.agent.agent", {"mcp", "httpx2", "textual", "markdown_it"}),
        (
            "import poppy_tui.protocol.operation, poppy_tui.protocol.approval",
            {"textual", "httpx", "mcp"},
        ),
        ("import poppy_tui.agent.store", {"textual", "httpx", "mcp"}),
        ("import poppy_tui.ui.app", {"mcp", "httpx2"}),
        ("import poppy_tui.demo", {"textual"}),
    ],
)
def test_heavy_modules_stay_out(statement, absent):
    assert not (modules_after(statement) & absent)
