"""The MCP server's place in the layers, and what `poppy-tui --help` must not pay for."""

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
        # --help and every other command build the parser: no MCP SDK, no Textual, no MCP server.
        (
            "import poppy_tui.cli.main; from poppy_tui.cli.parser import build_parser; build_parser()",
            {"mcp", "textual", "poppy_tui.mcp_server", "poppy_tui.agent.agent", "shtab"},
        ),
        # The MCP server uses agent/ and safety/ only: never the UI, the CLI or Textual.
        ("import poppy_tui.mcp_server.server", {"textual", "poppy_tui.ui", "poppy_tui.cli"}),
    ],
)
def test_heavy_modules_stay_out(statement, absent):
    loaded = modules_after(statement)
    assert not {m for m in loaded if m in absent or any(m.startswith(a + ".") for a in absent)}
