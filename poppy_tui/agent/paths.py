"""Where poppy-tui keeps its files. POPPY_TUI_HOME (or --home) puts everything under one folder."""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

HOME_ENV = "POPPY_TUI_HOME"
APP_NAME = "poppy-tui"


class Paths(namedtuple("Paths", ("config_dir", "data_dir"))):
    """config_dir and data_dir (pathlib.Path each). A named tuple rather than a dataclass: every command
    resolves its paths, and the dataclasses module costs a short command a third of its time."""

    __slots__ = ()

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def database(self) -> Path:
        return self.data_dir / "poppy.db"

    @property
    def log_file(self) -> Path:
        """The log a person can attach to a bug report (agent/logfile.py); rotated beside it."""
        return self.data_dir / "poppy-tui.log"

    @property
    def key_file(self) -> Path:
        """Only used when the user opts in to the file fallback for the signing key."""
        return self.data_dir / "agent-key.pem"

    def ensure(self) -> Paths:
        for folder in (self.config_dir, self.data_dir):
            folder.mkdir(parents=True, exist_ok=True)
            try:
                os.chmod(folder, 0o700)
            except OSError:
                pass
        return self


def resolve_paths(home: str | os.PathLike[str] | None = None) -> Paths:
    home = home or os.environ.get(HOME_ENV)
    if home:
        root = Path(home).expanduser().resolve()
        return Paths(config_dir=root / "config", data_dir=root / "data")
    import platformdirs

    return Paths(
        config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
    )
