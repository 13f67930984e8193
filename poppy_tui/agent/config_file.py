"""Reading and checking config.toml, without building Config (config.py does that).

Checking is split from building so that a command that only needs the file to be valid
(`pending`, `history`: a broken config is still a usage error there) imports neither tomllib
nor dataclasses: together they cost more than the rest of such a command (the per-command
targets, docs/benchmarks.md).

The settings of a file already checked are remembered in the data folder (config-checked.json),
under the file's identity and change stamp (device, inode, size, mtime and ctime, in
nanoseconds), and read from there while the stamp is unchanged. Any write to the file changes its
ctime, which no program can set back. A file changed in the last two seconds is not remembered,
so two edits within one tick of the filesystem's clock can't share a stamp ("racy" entries, as
git's index calls them). Any trouble with that file only means parsing config.toml again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Mapping


class ConfigError(ValueError):
    pass


KEY_STORAGE_CHOICES = ("keyring", "file")
DESKTOP_CHOICES = ("auto", "osc9", "osc777", "osc99", "off")
# The names of Config's and NotificationSettings' fields (tests/agent/test_config.py checks they agree).
SETTING_NAMES = (
    "grace_seconds",
    "arm_delay_seconds",
    "min_read_seconds",
    "theme",
    "keybindings",
    "companies",
    "key_storage",
    "request_timeout_seconds",
    "retry_window_seconds",
    "allow_loopback",
    "notifications",
)
NOTIFICATION_NAMES = ("toast", "bell", "desktop")
CHECKED_FILE = "config-checked.json"
_CHECKED_VERSION = 1
_SETTLED_NS = 2_000_000_000  # a file changed more recently than this is not remembered

_NUMBER_BOUNDS = {
    "grace_seconds": (0.0, 3600.0),
    "arm_delay_seconds": (0.0, 30.0),
    "min_read_seconds": (0.0, 86400.0),
    "request_timeout_seconds": (1.0, 600.0),
    "retry_window_seconds": (1.0, 7 * 86400.0),
}


def check_settings(data: Mapping[str, Any], source: str = "config") -> dict[str, Any]:
    """The settings in `data` (a parsed config.toml), checked and normalised: numbers as floats,
    companies as a tuple, notifications as a dict. Raises ConfigError naming the key and the fix."""
    known = set(SETTING_NAMES)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(
                f"{source}: unknown setting {key!r}; known settings: {', '.join(sorted(known))}"
            )
        if key in _NUMBER_BOUNDS:
            low, high = _NUMBER_BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{source}: {key} must be a number of seconds, got {value!r}")
            if not low <= value <= high:
                raise ConfigError(
                    f"{source}: {key} must be between {low:g} and {high:g}, got {value!r}"
                )
            values[key] = float(value)
        elif key == "theme":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: theme must be a theme name, got {value!r}")
            values[key] = value
        elif key == "keybindings":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
            ):
                raise ConfigError(
                    f"{source}: [keybindings] must map binding ids to key names (strings)"
                )
            values[key] = dict(value)
        elif key == "companies":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"{source}: companies must be a list of domains or URLs")
            values[key] = tuple(value)
        elif key == "key_storage":
            if value not in KEY_STORAGE_CHOICES:
                raise ConfigError(
                    f"{source}: key_storage must be one of {', '.join(KEY_STORAGE_CHOICES)}, got {value!r}"
                )
            values[key] = value
        elif key == "notifications":
            values[key] = _check_notifications(value, source)
        elif key == "allow_loopback":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: allow_loopback must be true or false")
            values[key] = value
    return values


def _check_notifications(value: Any, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [notifications] must be a table (toast, bell, desktop)")
    for key, item in value.items():
        if key not in NOTIFICATION_NAMES:
            raise ConfigError(
                f"{source}: unknown setting notifications.{key}; known: {', '.join(sorted(NOTIFICATION_NAMES))}"
            )
        if key in ("toast", "bell") and not isinstance(item, bool):
            raise ConfigError(f"{source}: notifications.{key} must be true or false")
        if key == "desktop" and item not in DESKTOP_CHOICES:
            raise ConfigError(
                f"{source}: notifications.desktop must be one of {', '.join(DESKTOP_CHOICES)}, got {item!r}"
            )
    return dict(value)


def read_settings(path: Path, checked_dir: Path | None = None) -> dict[str, Any]:
    """The checked settings of the config file at `path` ({} when there is none). With
    `checked_dir` (the data folder), a file checked before is not parsed again while unchanged."""
    try:
        stamp = _stamp(os.stat(path))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: can't be read ({exc.strerror or exc})") from None
    remembered = checked_dir / CHECKED_FILE if checked_dir is not None else None
    if remembered is not None:
        settings = _recall(remembered, path, stamp)
        if settings is not None:
            return settings
    try:
        raw = path.read_bytes()
        after = _stamp(os.stat(path))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: can't be read ({exc.strerror or exc})") from None
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: is not valid TOML ({exc})") from None
    settings = check_settings(data, str(path))
    if (
        remembered is not None
        and after == stamp
        and time.time_ns() - max(stamp[3], stamp[4]) > _SETTLED_NS
    ):
        _remember(remembered, path, stamp, settings)
    return settings


def _stamp(status: os.stat_result) -> list[int]:
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def _recall(remembered: Path, path: Path, stamp: list[int]) -> dict[str, Any] | None:
    try:
        entry = json.loads(remembered.read_bytes())
        if (
            entry["version"] != _CHECKED_VERSION
            or entry["file"] != str(path)
            or entry["stamp"] != stamp
        ):
            return None
        # Checked again (it is cheap): the file in the data folder is ours, but not proof.
        return check_settings(entry["settings"], str(path))
    except (OSError, ValueError, KeyError, TypeError, ConfigError):
        return None


def _remember(remembered: Path, path: Path, stamp: list[int], settings: dict[str, Any]) -> None:
    entry = {"version": _CHECKED_VERSION, "file": str(path), "stamp": stamp, "settings": settings}
    temporary = remembered.with_name(f".{remembered.name}.{os.getpid()}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(entry, out)
        os.replace(temporary, remembered)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
