"""The TUI as `poppy-tui` starts it, on a chosen first screen: for pty benchmarks of screens
the command line has no flag for (history). usage: tui_child.py HOME SCREEN"""

from __future__ import annotations

import sys

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.cli.commands import run_tui

if __name__ == "__main__":
    paths = resolve_paths(sys.argv[1])
    agent = Agent.open(paths, load_config(paths))
    try:
        run_tui(agent, initial_screen=sys.argv[2])
    finally:
        import asyncio

        asyncio.run(agent.aclose())
