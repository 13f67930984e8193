"""config.toml's settings as the program uses them (Config), built from checked settings.

The file's typed model, with its checks and errors, is config_model.py; the reading (and the
record of a file already checked) is config_file.py. Config is a plain frozen dataclass so that
building it costs no pydantic (the TUI builds it before its first frame); config_model's fields
and defaults are the same (tests/agent/test_config_model.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

# Imported from here too: re-exported by name.
from poppy_tui.agent.config_file import DESKTOP_CHOICES as DESKTOP_CHOICES
from poppy_tui.agent.config_file import KEY_STORAGE_CHOICES as KEY_STORAGE_CHOICES
from poppy_tui.agent.config_file import ConfigError as ConfigError
from poppy_tui.agent.config_file import check_settings, read_settings
from poppy_tui.agent.paths import Paths


@dataclass(frozen=True)
class NotificationSettings:
    """[notifications]: how the open TUI tells the person an operation or a send's end arrived."""

    toast: bool = True  # a toast in the TUI naming the Company and the amount
    bell: bool = True  # the terminal bell
    # A desktop notification as a terminal escape: OSC 9 (iTerm2, WezTerm, Windows Terminal,
    # ghostty), OSC 777 (VTE terminals, foot, urxvt), OSC 99 (kitty); "auto" picks by terminal.
    desktop: str = "auto"


@dataclass(frozen=True)
class Config:
    # Seconds after approving during which the approval can still be withdrawn; nothing is sent before.
    grace_seconds: float = 5.0
    # Approve is unavailable this long after a review screen opens or its terms change.
    arm_delay_seconds: float = 1.0
    # An expiry sooner than this is flagged as too short to read.
    min_read_seconds: float = 60.0
    theme: str = "textual-dark"
    # Binding id -> keys, e.g. {"approve" = "a"}; see the help screen for ids.
    keybindings: Mapping[str, str] = field(default_factory=dict)
    # Companies (domains or loopback URLs) to discover on start.
    companies: tuple[str, ...] = ()
    # Where the agent's signing key lives: the system keyring, or (opt-in) a 0600 file.
    key_storage: str = "keyring"
    request_timeout_seconds: float = 30.0
    # How long to keep resending an approval with no definite answer before reporting outcome unknown.
    retry_window_seconds: float = 600.0
    # Allow plain-http Companies on loopback addresses (the demo and tests). Never other hosts.
    allow_loopback: bool = True
    # What the log file keeps (agent/logfile.py); POPPY_TUI_LOG_LEVEL wins.
    log_level: str = "info"
    notifications: NotificationSettings = field(default_factory=NotificationSettings)


def parse_config(data: Mapping[str, Any], source: str = "config") -> Config:
    return config_from_settings(check_settings(data, source))


def config_from_settings(settings: Mapping[str, Any]) -> Config:
    """Config from settings already checked (config_file.check_settings)."""
    values = dict(settings)
    if "companies" in values:
        values["companies"] = tuple(values["companies"])
    if "keybindings" in values:
        values["keybindings"] = dict(values["keybindings"])
    if "notifications" in values:
        values["notifications"] = NotificationSettings(**values["notifications"])
    return Config(**values)


def load_config(paths: Paths) -> Config:
    return load_config_file(paths.config_file)


def load_config_file(path: Path, checked_dir: Path | None = None) -> Config:
    """The config at `path` (defaults when there is none); `checked_dir`: see read_settings."""
    return config_from_settings(read_settings(path, checked_dir))
