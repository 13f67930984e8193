"""A home named by `--home PATH` or `POPPY_TUI_HOME=PATH` must already exist: a typo would
otherwise create an empty home, and the person would wonder where their Companies and operations
went. Both are refused the same way, with the fix in one line; `poppy-tui --demo` (which makes its
own home afresh each time) creates it, and at a terminal poppy-tui asks first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import TextIO
    from collections.abc import Callable, Mapping

HOME_ENV = "POPPY_TUI_HOME"


def named_home(
    given: str | None, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """The home the command line or the environment names, and how ('--home' or
    'POPPY_TUI_HOME'); None when neither does (the platform's folders). An empty
    POPPY_TUI_HOME is unset, as a shell's `POPPY_TUI_HOME= cmd` means."""
    if given is not None:
        return given, "--home"
    value = (os.environ if environ is None else environ).get(HOME_ENV)
    return (value, HOME_ENV) if value else None


def _demo_home_hint(path: Path) -> str:
    """A word for the README's two-window recipe run before the demo ever ran."""
    try:
        import platformdirs

        from poppy_tui.agent.paths import APP_NAME

        default = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "demo"
    except Exception:  # noqa: BLE001 - a hint only
        return ""
    if path == default.absolute():
        return " (it is the demo's home: it exists once 'poppy-tui --demo' runs, so start the demo first)"
    return ""


def require_existing_home(
    given: str | None,
    *,
    named: str = "--home",
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
    ask: Callable[[str], str] | None = None,
) -> None:
    """Nothing when `given` is None or an existing folder poppy-tui can use. A missing one is
    created only when a person at a terminal says so; without a terminal it is refused, with
    what to do instead. `named`: how the home was given ('--home', 'POPPY_TUI_HOME')."""
    if given is None:
        return
    said = "--home" if named == "--home" else f"{named}="
    if not given.strip():
        raise CliError(f"{named} is empty; give the folder of a poppy-tui home", Exit.USAGE)
    path = Path(given).expanduser().absolute()
    if path.is_dir():
        if not (path / "config").exists() and not os.access(path, os.W_OK | os.X_OK):
            raise CliError(
                f"{said}{path} can't hold a poppy-tui home: poppy-tui can't create folders in it; "
                "give a folder of your own (mkdir -p ~/some/folder)",
                Exit.USAGE,
            )
        return
    if path.exists():
        raise CliError(f"{said}{path} is not a folder", Exit.USAGE)
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    if stdin.isatty() and stderr.isatty():
        answer = (ask or input)(
            f"{said}{path} doesn't exist. Create a new, empty poppy-tui home there? [y/N] "
        )
        if answer.strip().lower() in ("y", "yes"):
            return
        raise CliError(f"{said}{path} doesn't exist; nothing was created", Exit.USAGE)
    raise CliError(
        f"{said}{path} doesn't exist{_demo_home_hint(path)}; check the path, or create the "
        f"folder first (mkdir -p {path}) to start a new, empty home there",
        Exit.USAGE,
    )
