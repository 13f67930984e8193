"""config.toml: validated strictly, with errors that name the file, the key and the fix."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from poppy_tui.agent.paths import Paths

KEY_STORAGE_CHOICES = ("keyring", "file")


class ConfigError(ValueError):
    pass


DESKTOP_CHOICES = ("auto", "osc9", "osc777", "osc99", "off")


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
    notifications: NotificationSettings = field(default_factory=NotificationSettings)


_NUMBER_BOUNDS = {
    "grace_seconds": (0.0, 3600.0),
    "arm_delay_seconds": (0.0, 30.0),
    "min_read_seconds": (0.0, 86400.0),
    "request_timeout_seconds": (1.0, 600.0),
    "retry_window_seconds": (1.0, 7 * 86400.0),
}


def parse_config(data: Mapping[str, Any], source: str = "config") -> Config:
    known = {f.name for f in fields(Config)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown setting {key!r}; known settings: {', '.join(sorted(known))}")
        if key in _NUMBER_BOUNDS:
            low, high = _NUMBER_BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{source}: {key} must be a number of seconds, got {value!r}")
            if not low <= value <= high:
                raise ConfigError(f"{source}: {key} must be between {low:g} and {high:g}, got {value!r}")
            values[key] = float(value)
        elif key == "theme":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: theme must be a theme name, got {value!r}")
            values[key] = value
        elif key == "keybindings":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
            ):
                raise ConfigError(f"{source}: [keybindings] must map binding ids to key names (strings)")
            values[key] = dict(value)
        elif key == "companies":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"{source}: companies must be a list of domains or URLs")
            values[key] = tuple(value)
        elif key == "key_storage":
            if value not in KEY_STORAGE_CHOICES:
                raise ConfigError(f"{source}: key_storage must be one of {', '.join(KEY_STORAGE_CHOICES)}, got {value!r}")
            values[key] = value
        elif key == "notifications":
            values[key] = _parse_notifications(value, source)
        elif key == "allow_loopback":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: allow_loopback must be true or false")
            values[key] = value
    return Config(**values)


def _parse_notifications(value: Any, source: str) -> NotificationSettings:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [notifications] must be a table (toast, bell, desktop)")
    known = {f.name for f in fields(NotificationSettings)}
    for key, item in value.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown setting notifications.{key}; known: {', '.join(sorted(known))}")
        if key in ("toast", "bell") and not isinstance(item, bool):
            raise ConfigError(f"{source}: notifications.{key} must be true or false")
        if key == "desktop" and item not in DESKTOP_CHOICES:
            raise ConfigError(f"{source}: notifications.desktop must be one of {', '.join(DESKTOP_CHOICES)}, got {item!r}")
    return NotificationSettings(**value)


def load_config(paths: Paths) -> Config:
    return load_config_file(paths.config_file)


def load_config_file(path: Path) -> Config:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(f"{path}: can't be read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: is not valid TOML ({exc})") from None
    return parse_config(data, str(path))
