"""Which home is a demo's, and whether its Company has stopped.

`poppy-tui --demo` serves its Company from its own process, on a loopback port that is gone once
the demo ends. Its home outlives it: README's two-window recipe points the CLI at it, and a person
may open it again with plain `poppy-tui`. An approval left there (the quit dialog's "quit without
sending it") can never be sent, and a sender that tried would say SENDING, retrying a port
nothing listens on, until the terms expire. The demo writes DEMO_FILE in its data folder when
it starts and again when it stops; a reader knows from it that the Company has stopped: stopped
was written, or the process that serves it is gone (killed before it could write it)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

DEMO_FILE = "demo.json"


@dataclass(frozen=True)
class DemoRun:
    base_url: str  # the demo Company's, as its home's store knows it
    pid: int
    started_at: str
    stopped_at: str | None = None

    @property
    def stopped(self) -> bool:
        return self.stopped_at is not None or not _alive(self.pid)

    def served(self, base_url: str) -> bool:
        """This demo's Company is the one at `base_url` (a trailing slash either side or not)."""
        return self.base_url.rstrip("/") == base_url.rstrip("/")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge, so not known to be gone
    except OSError:
        return False
    return True


def write_demo_run(data_dir: Path, run: DemoRun) -> None:
    path = data_dir / DEMO_FILE
    path.write_text(
        json.dumps(
            {
                "base_url": run.base_url,
                "pid": run.pid,
                "started_at": run.started_at,
                "stopped_at": run.stopped_at,
            }
        )
    )


def read_demo_run(data_dir: Path) -> DemoRun | None:
    """The demo that made this home, or None when it isn't a demo's home (or the file is
    unreadable: then nothing is said about it)."""
    try:
        data = json.loads((data_dir / DEMO_FILE).read_text())
        return DemoRun(
            str(data["base_url"]),
            int(data["pid"]),
            str(data["started_at"]),
            None if data.get("stopped_at") is None else str(data["stopped_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stopped_demo(data_dir: Path) -> DemoRun | None:
    """The demo that made this home, when its Company has stopped; else None."""
    run = read_demo_run(data_dir)
    return run if run is not None and run.stopped else None


def stopped_demo_line(run: DemoRun, company_name: str = "The demo Company") -> str:
    """One line for what can't be sent: why, and what to do instead (names are sanitised by
    the caller; the demo's own name and URL are ours)."""
    from poppy_tui.agent.store.connection import parse_stamp

    when = ""
    if run.stopped_at:
        try:
            when = " at " + parse_stamp(run.stopped_at).astimezone().strftime(
                "%Y-%m-%d %H:%M:%S %Z"
            )
        except ValueError:
            when = ""
    return (
        f"{company_name} ran in a demo that ended{when}, and has stopped: nothing here can be "
        "sent to it. Run 'poppy-tui --demo' for a fresh demo."
    )
