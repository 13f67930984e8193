"""config.toml's settings as a typed model (pydantic): every key, its type, default and allowed
values, stated once. The file is read into `ConfigFile`, whose errors are turned into one line that
names the file, the line, the key, the value and what is allowed (`config_error`); the JSON Schema
shipped with the package for editors (config.schema.json, docs/configuration.md) is generated
from it (`json_schema`; tests/agent/test_config_model.py checks the shipped file is current).

Importing pydantic and building the model costs a short command several times its own work, so
this module is imported only when a config file has to be parsed: config_file.py remembers the
settings of a file already checked while the file is unchanged (its docstring has the figures),
and Config (config.py) is a plain dataclass built from those settings.
"""

from __future__ import annotations

import json
import re
import typing
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class InvalidConfig(ValueError):
    """What is wrong with a config file, in one line (config_file.py raises it as ConfigError)."""


class _Table(BaseModel):
    # Strict: a TOML string "5" is not a number and 1 is not true; an unknown key is an error (a
    # typo such as grace_second must not be silently ignored); NaN and infinities are refused.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


NonEmpty = Annotated[str, Field(min_length=1)]


class NotificationsTable(_Table):
    """[notifications]: how the open TUI tells the person an operation arrived or a send ended."""

    toast: bool = Field(True, description="A toast in the TUI naming the Company and the amount.")
    bell: bool = Field(True, description="The terminal bell (once per batch).")
    desktop: Literal["auto", "osc9", "osc777", "osc99", "off"] = Field(
        "auto",
        description="A desktop notification as a terminal escape: OSC 9 (iTerm2, WezTerm, "
        "Windows Terminal, ghostty), OSC 777 (VTE terminals, foot, urxvt), OSC 99 (kitty); "
        "auto picks by terminal, off inside tmux or screen.",
    )


class ConfigFile(_Table):
    """poppy-tui's config.toml (docs/configuration.md). Every setting is optional."""

    grace_seconds: float = Field(
        5.0,
        ge=0,
        le=3600,
        description="After you approve, how long the approval can still be withdrawn in the TUI. "
        "Nothing is sent to the Company before this ends.",
    )
    arm_delay_seconds: float = Field(
        1.0,
        ge=0,
        le=30,
        description="Approve stays unavailable this long after a review screen opens or its "
        "terms change.",
    )
    min_read_seconds: float = Field(
        60.0,
        ge=0,
        le=86400,
        description="An operation that expires sooner than this after it arrives is flagged as "
        "too short to read.",
    )
    theme: NonEmpty = Field("textual-dark", description="The TUI's colours: a Textual theme name.")
    keybindings: dict[str, NonEmpty] = Field(
        default_factory=dict,
        description='TUI keys by binding id, e.g. decline = "x" (the help screen lists the ids).',
    )
    companies: list[NonEmpty] = Field(
        default_factory=list,
        description="Companies (domains or loopback URLs) discovered when the TUI opens.",
    )
    key_storage: Literal["keyring", "file"] = Field(
        "keyring",
        description="Where the agent's signing key lives: the system keyring, or (opt-in) a "
        "0600 file in the data folder.",
    )
    request_timeout_seconds: float = Field(
        30.0,
        ge=1,
        le=600,
        description="How long a Company may stay silent before a request counts as timed out.",
    )
    retry_window_seconds: float = Field(
        600.0,
        ge=1,
        le=7 * 86400,
        description="After approval, how long to keep resending the same approval without a "
        "definite answer before the outcome is unknown.",
    )
    allow_loopback: bool = Field(
        True,
        description="Allow plain-http Companies on loopback addresses (the demo and tests).",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info",
        description="What the log file (poppy-tui locate log) keeps; POPPY_TUI_LOG_LEVEL wins.",
    )
    # A frozen model: one default instance serves every file that leaves the table out.
    notifications: NotificationsTable = Field(
        NotificationsTable(), description="How the open TUI notifies."
    )


def check_settings(
    data: dict[str, Any], source: str = "config", text: str | None = None
) -> dict[str, Any]:
    """The settings in `data` (a parsed config.toml) that the file sets, checked and normalised
    (numbers as floats). Raises InvalidConfig naming the file, the line (found in `text`, the
    file's text, when given), the key, the value and what is allowed."""
    try:
        checked = ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, source, text) from None
    return checked.model_dump(exclude_unset=True)


def config_error(exc: ValidationError, source: str, text: str | None) -> InvalidConfig:
    """The first problem pydantic found, as one line: `FILE:LINE: what is wrong and what is
    allowed, got VALUE`."""
    error = exc.errors(include_url=False)[0]
    loc = tuple(str(part) for part in error["loc"])
    line = _line_of(text, loc) if text is not None else None
    where = f"{source}:{line}" if line is not None else source
    return InvalidConfig(f"{where}: {_problem(loc, error['type'], _Shown(error.get('input')))}")


class _Shown:
    """A value as the file wrote it: TOML's true and false, Python's repr otherwise."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        return repr(self.value)


def _bounds(name: str) -> tuple[float, float]:
    low = high = None
    for constraint in ConfigFile.model_fields[name].metadata:
        low = getattr(constraint, "ge", low)
        high = getattr(constraint, "le", high)
    assert low is not None and high is not None, f"{name} has no bounds"
    return float(low), float(high)


def _problem(loc: tuple[str, ...], kind: str, value: Any) -> str:
    name = loc[0]
    if kind == "extra_forbidden":
        if len(loc) == 1:
            known = ", ".join(sorted(ConfigFile.model_fields))
            return f"unknown setting {name!r}; known settings: {known}"
        known = ", ".join(sorted(NotificationsTable.model_fields))
        return f"unknown setting {'.'.join(loc)}; known: {known}"
    if name == "keybindings":
        detail = f" ({loc[1]} = {value!r})" if len(loc) > 1 else f", got {value!r}"
        return f"[keybindings] must map binding ids to key names (strings){detail}"
    if name == "companies":
        if len(loc) > 1:
            return (
                f"companies must be a list of domains or URLs; entry {int(loc[1]) + 1} is {value!r}"
            )
        return f"companies must be a list of domains or URLs, got {value!r}"
    if name == "notifications" and len(loc) == 1:
        return f"[notifications] must be a table (toast, bell, desktop), got {value!r}"
    key = ".".join(loc[:2]) if name == "notifications" else name
    field = (
        NotificationsTable.model_fields[loc[1]]
        if name == "notifications"
        else ConfigFile.model_fields[name]
    )
    if typing.get_origin(field.annotation) is Literal:
        choices = ", ".join(str(choice) for choice in typing.get_args(field.annotation))
        return f"{key} must be one of {choices}, got {value!r}"
    if field.annotation is bool:
        return f"{key} must be true or false, got {value!r}"
    if name == "theme":
        return f"theme must be a theme name, got {value!r}"
    if kind in ("greater_than_equal", "less_than_equal"):
        low, high = _bounds(name)
        return f"{key} must be between {low:g} and {high:g}, got {value!r}"
    return f"{key} must be a number of seconds, got {value!r}"


_TABLE = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY = re.compile(
    r"\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
)


def _key_parts(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def _line_of(text: str, loc: tuple[str, ...]) -> int | None:
    """The line (from 1) where the key at `loc` is set, or its table begins: `[notifications]`
    then `desktop = ...`, or `notifications.desktop = ...`, or an inline table's key. TOML's
    parser keeps no positions, so the lines are read for keys and table headers."""
    table: tuple[str, ...] = ()
    best: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = _key_parts(header.group(1))
            if table == loc[: len(table)] and best is None:
                best = number  # the table holding the key, if the key's own line is not found
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        path = table + _key_parts(key.group(1))
        if path == loc[: len(path)]:
            if len(path) >= len(loc):
                return number
            best = number  # an inline table or array holding it
    return best


def json_schema() -> dict[str, Any]:
    """The JSON Schema of config.toml, as shipped in config.schema.json: Draft 7, with the
    [notifications] table written in place rather than referred to, and only keywords Draft 4
    has too (type, properties, additionalProperties, enum, minimum, maximum, minLength, items),
    so that every editor's validator reads it alike (taplo's among them)."""
    schema = ConfigFile.model_json_schema()
    tables = schema.pop("$defs", {})

    def inlined(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return {**inlined(tables[reference.removeprefix("#/$defs/")]), **inlined(rest)}
            return {key: inlined(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inlined(item) for item in node]
        return node

    return {"$schema": "http://json-schema.org/draft-07/schema#", **inlined(schema)}


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if (
    __name__ == "__main__"
):  # python -m poppy_tui.agent.config_model > poppy_tui/agent/config.schema.json
    print(schema_text(), end="")
