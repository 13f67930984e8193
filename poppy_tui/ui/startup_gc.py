"""Python's cyclic garbage collector, held off from the TUI's start until its first frame.

Starting the TUI imports Textual and builds the first screen: hundreds of thousands of objects
that all live on, so every collection the allocation counts trigger on the way (about fifty
young ones and a few older ones) finds next to nothing to free: ~7-10 ms of a ~300 ms first frame
(against the first-frame target in docs/benchmarks.md), more on a loaded machine. Nothing before
the first frame makes garbage that needs the cycle collector (reference counting still frees
everything else at once), so it is turned off then.

Once the frame is on screen the collector is back on, after `gc.freeze()` moves what start-up
built out of its view: those objects live as long as the app, and later collections (while the
person works) don't walk them again each time. Only a process that held the collector here
releases it (a test's app, with the collector on, is left alone).
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    """Turn the collector off until release() (if it is on)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release(freeze: bool = True) -> None:
    """The first frame is on screen, or the TUI didn't get there: the collector is back on.
    `freeze=False`: what was built is not moved out of the collector's view (nothing started)."""
    global _held
    if _held:
        _held = False
        if freeze:
            gc.freeze()
        gc.enable()


def held() -> bool:
    return _held
