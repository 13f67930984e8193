"""config.toml read into its typed model (agent/config_model.py): one-line errors naming the file,
the line, the key, the value and what is allowed; the shipped JSON Schema is the model's, and
agrees with it on what a file may say; Config (the plain dataclass the program uses) has the
model's fields and defaults."""

from __future__ import annotations

import dataclasses
import json
import tomllib
import zlib

import jsonschema
import pytest

from poppy_tui.agent import config_file
from poppy_tui.agent.config import Config, ConfigError, NotificationSettings, load_config_file
from poppy_tui.agent.config_file import SCHEMA_FILE, read_settings
from poppy_tui.agent.config_file import check_settings
from poppy_tui.agent.config_model import ConfigFile, NotificationsTable, schema_text


def test_the_shipped_schema_is_the_models():
    assert SCHEMA_FILE.read_text() == schema_text(), (
        "config.toml's model changed: python -m poppy_tui.agent.config_model > "
        "poppy_tui/agent/config.schema.json, then set config_file.MODEL_VERSION to its CRC-32"
    )


def test_the_schema_refers_to_nothing():
    assert "$ref" not in SCHEMA_FILE.read_text() and "$defs" not in SCHEMA_FILE.read_text()


def test_the_model_version_is_the_shipped_schemas():
    # Remembered settings are used only under the model that made them (config_file._recall).
    assert zlib.crc32(SCHEMA_FILE.read_bytes()) == config_file.MODEL_VERSION


def test_the_choices_named_elsewhere_are_the_models():
    import typing

    def choices(field) -> tuple[str, ...]:
        return typing.get_args(field.annotation)

    assert choices(ConfigFile.model_fields["key_storage"]) == config_file.KEY_STORAGE_CHOICES
    assert choices(ConfigFile.model_fields["log_level"]) == config_file.LOG_LEVEL_CHOICES
    assert choices(NotificationsTable.model_fields["desktop"]) == config_file.DESKTOP_CHOICES


def test_config_has_the_models_fields_and_defaults():
    names = set(config_file.SETTING_NAMES)
    assert names == set(ConfigFile.model_fields) == {f.name for f in dataclasses.fields(Config)}
    assert (
        set(config_file.NOTIFICATION_NAMES)
        == set(NotificationsTable.model_fields)
        == {f.name for f in dataclasses.fields(NotificationSettings)}
    )
    defaults = ConfigFile().model_dump()
    built = dataclasses.asdict(Config())
    assert {**built, "companies": list(built["companies"])} == defaults


def _problem(text: str) -> str:
    with pytest.raises(ConfigError) as refused:
        check_settings(tomllib.loads(text), "/home/ana/config.toml", text)
    message = str(refused.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "grace_second = 5\n",
            ":1: unknown setting 'grace_second'; known settings: allow_loopback,",
        ),
        (
            "\n# mine\ngrace_seconds = 9999\n",
            ":3: grace_seconds must be between 0 and 3600, got 9999",
        ),
        (
            "retry_window_seconds = 0.5\n",
            ":1: retry_window_seconds must be between 1 and 604800, got 0.5",
        ),
        ("grace_seconds = -1\n", ":1: grace_seconds must be between 0 and 3600, got -1"),
        ("grace_seconds = '5'\n", ":1: grace_seconds must be a number of seconds, got '5'"),
        ("grace_seconds = true\n", ":1: grace_seconds must be a number of seconds, got true"),
        ("arm_delay_seconds = nan\n", ":1: arm_delay_seconds must be a number of seconds, got nan"),
        ("min_read_seconds = inf\n", ":1: min_read_seconds must be a number of seconds, got inf"),
        ("key_storage = 'floppy'\n", ":1: key_storage must be one of keyring, file, got 'floppy'"),
        (
            "log_level = 'loud'\n",
            ":1: log_level must be one of debug, info, warning, error, got 'loud'",
        ),
        ("allow_loopback = 1\n", ":1: allow_loopback must be true or false, got 1"),
        ("theme = ''\n", ":1: theme must be a theme name, got ''"),
        (
            "companies = 'a.example'\n",
            ":1: companies must be a list of domains or URLs, got 'a.example'",
        ),
        (
            "companies = ['a.example', '']\n",
            ":1: companies must be a list of domains or URLs; entry 2 is ''",
        ),
        (
            "[keybindings]\napprove = 1\n",
            ":2: [keybindings] must map binding ids to key names (strings) (approve = 1)",
        ),
        (
            "keybindings = 'x'\n",
            ":1: [keybindings] must map binding ids to key names (strings), got 'x'",
        ),
        (
            "notifications = 3\n",
            ":1: [notifications] must be a table (toast, bell, desktop), got 3",
        ),
        (
            "theme = 'nord'\n\n[notifications]\nbell = false\ndesktop = 'beep'\n",
            ":5: notifications.desktop must be one of auto, osc9, osc777, osc99, off, got 'beep'",
        ),
        ("notifications.toast = 3\n", ":1: notifications.toast must be true or false, got 3"),
        (
            "notifications = { bell = 'no' }\n",
            ":1: notifications.bell must be true or false, got 'no'",
        ),
        (
            "[notifications]\nfoo = 1\n",
            ":2: unknown setting notifications.foo; known: bell, desktop, toast",
        ),
        # A key set inside another table is unknown there, on its own line.
        ("[keybindings]\nx = 'y'\n[other]\nz = 1\n", ":3: unknown setting 'other'"),
    ],
)
def test_an_error_names_the_file_line_key_value_and_what_is_allowed(text, said):
    message = _problem(text)
    assert message.startswith("/home/ana/config.toml" + said), message


def test_without_the_text_the_error_names_the_file():
    with pytest.raises(ConfigError, match=r"^config: grace_seconds must be between"):
        check_settings({"grace_seconds": 10**6})


def test_what_a_file_sets_is_what_is_kept():
    text = 'grace_seconds = 2\ncompanies = ["a.example"]\n[notifications]\nbell = false\n'
    assert check_settings(tomllib.loads(text)) == {
        "grace_seconds": 2.0,
        "companies": ["a.example"],
        "notifications": {"bell": False},
    }


def test_a_file_is_read_into_config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('grace_seconds = 2\ncompanies = ["a.example"]\nlog_level = "debug"\n')
    config = load_config_file(path)
    assert config.grace_seconds == 2.0 and config.companies == ("a.example",)
    assert config.log_level == "debug" and config.notifications == NotificationSettings()


GOOD = [
    "",
    "grace_seconds = 2.5\narm_delay_seconds = 0\n",
    'companies = ["manzanita.example"]\n[keybindings]\ndecline = "x"\n',
    '[notifications]\ntoast = true\nbell = false\ndesktop = "osc777"\n',
    'key_storage = "file"\nallow_loopback = false\nlog_level = "warning"\n',
]
BAD = [
    "grace_second = 5\n",
    "grace_seconds = 3601\n",
    "request_timeout_seconds = 0\n",
    "grace_seconds = '5'\n",
    "allow_loopback = 'yes'\n",
    "key_storage = 'floppy'\n",
    "theme = ''\n",
    "companies = ['']\n",
    "[keybindings]\napprove = ''\n",
    "[notifications]\ndesktop = 'beep'\n",
    "[notifications]\nfoo = true\n",
    "notifications = 1\n",
]


@pytest.mark.parametrize(("text", "valid"), [(t, True) for t in GOOD] + [(t, False) for t in BAD])
def test_the_schema_and_the_model_agree(text, valid):
    """What editors check (the schema, with the Draft 7 validator it names, and with a Draft 4 one,
    the newest some TOML tools read) is what poppy-tui checks."""
    data = tomllib.loads(text)
    schema = json.loads(SCHEMA_FILE.read_text())
    for validator in (jsonschema.validators.validator_for(schema), jsonschema.Draft4Validator):
        validator.check_schema(schema)
        errors = list(validator(schema).iter_errors(data))
        assert (not errors) is valid, (validator, errors)
    if valid:
        check_settings(data)
    else:
        with pytest.raises(ConfigError):
            check_settings(data)


def test_the_docs_example_is_valid(tmp_path):
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    example = docs.split("## Example", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "config.toml"
    path.write_text(example)
    assert read_settings(path)["grace_seconds"] == 10.0
