"""Reading config.toml, without building Config (config.py does that) and, while the file is
unchanged, without parsing it.

The file is read into the typed model of config_model.py (pydantic), which states every setting's
type and allowed values. Importing pydantic and building that model costs a short command several
times its own work, so the settings of a file already checked are remembered in the data folder
(config-checked.json), under the file's identity and change stamp (device, inode, size, mtime and
ctime, in nanoseconds) and the model's version, and read from there while both are unchanged. Any
write to the file changes its ctime, which no program can set back. A file changed in the last two seconds is not remembered, so two edits
within one tick of the filesystem's clock can't share a stamp ("racy" entries, as git's index
calls them). Any trouble with that file only means parsing config.toml again. The record is ours
(the data folder is the person's, mode 0700, beside the store and the key): it is read back as
the settings the model produced, checked only for its shape.

What the record saves, measured (CPU time of `poppy-tui pending --json` with a config.toml of two
settings, median of 30 rounds, 2026-12-07): nothing pending, 39 ms with the record and 174 ms
parsing with the model each time (40 ms and 49 ms before the model, with the record and with
tomllib and hand-written checks alone); 10,000 pending, 99 ms and 234 ms (100 ms and 106 ms).
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
LOG_LEVEL_CHOICES = ("debug", "info", "warning", "error")
# The names of Config's and NotificationSettings' fields, which are config_model's too
# (tests/agent/test_config_model.py checks the three agree).
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
    "log_level",
    "notifications",
)
NOTIFICATION_NAMES = ("toast", "bell", "desktop")
CHECKED_FILE = "config-checked.json"
# The JSON Schema generated from config_model.py, shipped for editors (docs/configuration.md).
SCHEMA_FILE = Path(__file__).with_name("config.schema.json")
_CHECKED_VERSION = 2
# The shipped JSON Schema's CRC-32 (zlib.crc32 of config.schema.json): the model's version. A
# change to the model changes the schema, which a test makes you regenerate and this number with
# it, so settings remembered under an older model are parsed again.
MODEL_VERSION = 471481016
_SETTLED_NS = 2_000_000_000  # a file changed more recently than this is not remembered


def check_settings(
    data: Mapping[str, Any], source: str = "config", text: str | None = None
) -> dict[str, Any]:
    """The settings in `data` (a parsed config.toml), checked by the model (config_model.py).
    Raises ConfigError naming the file, the line (when `text` is given), the key and the fix."""
    from poppy_tui.agent import config_model

    try:
        return config_model.check_settings(dict(data), source, text)
    except config_model.InvalidConfig as exc:
        raise ConfigError(str(exc)) from None


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
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: is not valid TOML ({exc})") from None
    settings = check_settings(data, str(path), text)
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
            or entry["model"] != MODEL_VERSION
            or entry["file"] != str(path)
            or entry["stamp"] != stamp
        ):
            return None
        settings = entry["settings"]
        if not _shaped(settings):
            return None
        return dict(settings)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _shaped(settings: Any) -> bool:
    """Whether a remembered record holds settings as the model writes them: known names only."""
    if not isinstance(settings, dict) or not set(settings) <= set(SETTING_NAMES):
        return False
    notifications = settings.get("notifications", {})
    return isinstance(notifications, dict) and set(notifications) <= set(NOTIFICATION_NAMES)


def _remember(remembered: Path, path: Path, stamp: list[int], settings: dict[str, Any]) -> None:
    entry = {
        "version": _CHECKED_VERSION,
        "model": MODEL_VERSION,
        "file": str(path),
        "stamp": stamp,
        "settings": settings,
    }
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
