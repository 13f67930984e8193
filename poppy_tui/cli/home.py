"""`--home PATH` names a home that must already exist: a typo would otherwise create an empty
home, and the person would wonder where their Companies and operations went."""

from __future__ import annotations

import sys
from pathlib import Path

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import TextIO
    from collections.abc import Callable


def require_existing_home(
    given: str | None,
    *,
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
    ask: Callable[[str], str] | None = None,
) -> None:
    """Nothing when `given` is None or an existing folder. A missing one is created only when a
    person at a terminal says so; without a terminal it is refused, with what to do instead."""
    if given is None:
        return
    if not given.strip():
        raise CliError("--home is empty; give the folder of a poppy-tui home", Exit.USAGE)
    path = Path(given).expanduser().absolute()
    if path.is_dir():
        return
    if path.exists():
        raise CliError(f"--home {path} is not a folder", Exit.USAGE)
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    if stdin.isatty() and stderr.isatty():
        answer = (ask or input)(
            f"--home {path} doesn't exist. Create a new, empty poppy-tui home there? [y/N] "
        )
        if answer.strip().lower() in ("y", "yes"):
            return
        raise CliError(f"--home {path} doesn't exist; nothing was created", Exit.USAGE)
    raise CliError(
        f"--home {path} doesn't exist; check the path, or create the folder first (mkdir -p {path}) "
        "to start a new, empty home there",
        Exit.USAGE,
    )
