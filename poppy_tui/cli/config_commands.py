"""`poppy-tui config check [PATH]`: whether a config file is valid, with the same one-line errors
every command gives for it (the file, the line, the key, the value and what is allowed)."""

from __future__ import annotations

from pathlib import Path

from poppy_tui.agent.config_file import ConfigError, read_settings
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.cli.context import config_file_of
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import emit, safe_line, to_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_config(args: argparse.Namespace) -> int:
    """Run before the home's config is read, so that a broken one (or another file) can be
    checked: that is what the command is for."""
    given = getattr(args, "path", None)
    path = (
        Path(given).expanduser().absolute()
        if given
        else config_file_of(args, resolve_paths(getattr(args, "home", None)))
    )
    as_json = getattr(args, "json", False)
    if (given or getattr(args, "config", None)) and not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    if not path.exists():
        said = f"{path}: no config file; every setting has its default"
        emit(to_json({"file": str(path), "valid": True, "settings": {}}) if as_json else said)
        return Exit.OK
    try:
        settings = read_settings(path)  # parsed and checked afresh: no remembered record
    except ConfigError as exc:
        if not as_json:
            raise
        emit(to_json({"file": str(path), "valid": False, "problem": str(exc)}))
        return Exit.USAGE
    if as_json:
        emit(to_json({"file": str(path), "valid": True, "settings": settings}))
    else:
        count = len(settings)
        emit(
            f"{safe_line(str(path), 500)}: valid ({count} setting{'' if count == 1 else 's'} set, "
            "the rest default)"
        )
    return Exit.OK
