"""Write the README screenshots: python -m tests.ui.make_screenshots [OUTPUT_DIR]

Same sample data, frozen clock and frozen stored times as the snapshot tests, so the
SVGs only change when the screens do.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Awaitable, Callable

from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import (
    FIXED_NOW,
    build_sample,
    freeze_times,
    open_agent,
    steady,
    without_reads,
)

SIZE = (120, 36)
DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "screenshots"


NARROW = (80, 24)


async def shoot(
    store: Store,
    name: str,
    initial_screen: str,
    output: Path,
    before: Callable[..., Awaitable[None]] | None = None,
    size: tuple[int, int] = SIZE,
) -> Path:
    agent = open_agent(store.path, arm_delay_seconds=0)  # the real Agent on the sample's file
    app = PoppyApp(without_reads(agent), initial_screen=initial_screen, clock=lambda: FIXED_NOW)
    try:
        async with app.run_test(size=size) as pilot:
            await steady(pilot)
            if before is not None:
                await before(pilot)
                await steady(pilot)
            return Path(app.save_screenshot(f"{name}.svg", str(output)))
    finally:
        agent.store.close()


async def main(output: Path) -> list[Path]:
    # Screens show local time; the screenshots show it as UTC wherever they are made.
    os.environ["TZ"] = "UTC"
    time.tzset()
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "poppy.db"
        with Store.open(path) as store:
            rows = build_sample(store)
        freeze_times(path)
        with Store.open(path) as store:

            async def press_approve(pilot) -> None:
                await pilot.press("a")

            async def press_decline(pilot) -> None:
                await pilot.press("d")

            return [
                await shoot(store, "inbox", "inbox", output),
                await shoot(store, "review", f"review:{rows['flight']}", output),
                await shoot(store, "review-hostile", f"review:{rows['hostile']}", output),
                await shoot(store, "confirm", f"review:{rows['jacket']}", output, press_approve),
                await shoot(store, "history", "history", output),
                await shoot(store, "companies", "companies", output),
                await shoot(store, "help", "help", output),
                await shoot(store, "decline", f"review:{rows['jacket']}", output, press_decline),
                # The same screens in an 80x24 terminal, laid out for it.
                await shoot(store, "inbox-80x24", "inbox", output, size=NARROW),
                await shoot(store, "review-80x24", f"review:{rows['flight']}", output, size=NARROW),
                await shoot(store, "history-80x24", "history", output, size=NARROW),
            ]


if __name__ == "__main__":
    for written in asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)):
        print(written)
