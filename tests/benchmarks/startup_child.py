"""One cold start of the TUI, headless: the same steps as `poppy-tui` (open the Agent on the
home's store, build PoppyApp, run it), reporting when the first frame is on screen.

usage: startup_child.py HOME  -> prints one JSON line, then exits
"""

from __future__ import annotations

import json
import sys
import time

T0 = time.perf_counter()

from poppy_tui.agent.agent import Agent  # noqa: E402
from poppy_tui.agent.config import load_config  # noqa: E402
from poppy_tui.agent.paths import resolve_paths  # noqa: E402
from poppy_tui.ui import _start_time  # noqa: E402
from poppy_tui.ui.app import PoppyApp  # noqa: E402


class Measured(PoppyApp):
    def on_ready(self) -> None:  # runs before PoppyApp.on_ready (Textual walks the MRO)
        self._bench = {
            "ready_ms_since_main": (time.perf_counter() - T0) * 1000,
            "process_age_ms": _start_time.process_age_ms(),
        }
        self.call_later(self._report)

    def _report(self) -> None:
        self._bench["app_startup_ms"] = (
            self.startup_ms
        )  # PoppyApp's own figure (from its first import)
        print(json.dumps(self._bench), flush=True)
        self.exit()


def main() -> None:
    paths = resolve_paths(sys.argv[1])
    agent = Agent.open(paths, load_config(paths))
    try:
        Measured(agent).run(headless=True, size=(120, 36))
    finally:
        import asyncio

        asyncio.run(agent.aclose())


if __name__ == "__main__":
    main()
