"""config.toml's checked settings are remembered in the data folder while the file and the model
are unchanged (agent/config_file.py): an edit is always seen, a broken file is always refused."""

from __future__ import annotations

import dataclasses
import json
import os
import time

import pytest

from poppy_tui.agent import config_file
from poppy_tui.agent.config import Config, ConfigError, NotificationSettings, load_config_file
from poppy_tui.agent.config_file import (
    CHECKED_FILE,
    NOTIFICATION_NAMES,
    SETTING_NAMES,
    read_settings,
)


def test_setting_names_are_configs_fields():
    assert set(SETTING_NAMES) == {f.name for f in dataclasses.fields(Config)}
    assert set(NOTIFICATION_NAMES) == {f.name for f in dataclasses.fields(NotificationSettings)}


@pytest.fixture
def settled(monkeypatch):
    """Files count as settled at once (instead of two seconds after their last change)."""
    monkeypatch.setattr(config_file, "_SETTLED_NS", -(10**18))


def write(path, text):
    path.write_text(text)
    return path


def test_a_checked_file_is_read_from_the_record_until_it_changes(tmp_path, settled, monkeypatch):
    config = write(
        tmp_path / "config.toml",
        'grace_seconds = 2\ncompanies = ["a.example"]\n[notifications]\nbell = false\n',
    )
    first = load_config_file(config, tmp_path)
    assert (tmp_path / CHECKED_FILE).is_file()
    assert (
        first.grace_seconds == 2.0
        and first.companies == ("a.example",)
        and first.notifications.bell is False
    )

    import tomllib

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    with monkeypatch.context() as patch:
        patch.setattr(tomllib, "loads", no_parsing)
        assert load_config_file(config, tmp_path) == first  # from the record, the same Config

    write(config, "grace_seconds = 3\n")  # same size and all: the stamp (ctime, mtime) differs
    assert load_config_file(config, tmp_path).grace_seconds == 3.0


def test_a_broken_edit_is_refused_after_a_good_one_was_remembered(tmp_path, settled):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    read_settings(config, tmp_path)
    write(config, "grace_seconds = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        read_settings(config, tmp_path)


def test_a_file_changed_just_now_is_not_remembered(tmp_path):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    assert read_settings(config, tmp_path) == {"grace_seconds": 2.0}
    assert not (
        tmp_path / CHECKED_FILE
    ).exists()  # two edits within one clock tick could share a stamp


def test_an_old_file_is_remembered(tmp_path):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    real_ns = time.time_ns
    later = real_ns() + 5_000_000_000
    try:
        time.time_ns = lambda: later  # type: ignore[assignment]
        read_settings(config, tmp_path)
    finally:
        time.time_ns = real_ns  # type: ignore[assignment]
    assert json.loads((tmp_path / CHECKED_FILE).read_text())["settings"] == {"grace_seconds": 2.0}


@pytest.mark.parametrize("record", ["{", '{"version": 1}', "[]", ""])
def test_a_damaged_record_means_parsing_again(tmp_path, settled, record):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    (tmp_path / CHECKED_FILE).write_text(record)
    assert read_settings(config, tmp_path) == {"grace_seconds": 2.0}


def test_a_record_of_another_model_version_is_not_used(tmp_path, settled, monkeypatch):
    """Settings remembered under an older model (another schema) are parsed and checked again."""
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    read_settings(config, tmp_path)
    record = json.loads((tmp_path / CHECKED_FILE).read_text())
    record["settings"]["grace_seconds"] = 7.0  # what that model had made of it, say
    record["model"] = config_file.MODEL_VERSION + 1
    (tmp_path / CHECKED_FILE).write_text(json.dumps(record))
    assert read_settings(config, tmp_path) == {"grace_seconds": 2.0}  # parsed again


@pytest.mark.parametrize(
    "settings", [{"grace_secs": 2.0}, [], {"notifications": {"beep": True}}, {"notifications": 3}]
)
def test_a_record_of_another_shape_is_not_used(tmp_path, settled, settings):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    read_settings(config, tmp_path)
    record = json.loads((tmp_path / CHECKED_FILE).read_text())
    record["settings"] = settings
    (tmp_path / CHECKED_FILE).write_text(json.dumps(record))
    assert read_settings(config, tmp_path) == {"grace_seconds": 2.0}


def test_another_config_file_is_not_read_from_the_record(tmp_path, settled):
    one = write(tmp_path / "one.toml", "grace_seconds = 2\n")
    two = write(tmp_path / "two.toml", "grace_seconds = 4\n")
    assert read_settings(one, tmp_path)["grace_seconds"] == 2.0
    assert read_settings(two, tmp_path)["grace_seconds"] == 4.0
    assert read_settings(one, tmp_path)["grace_seconds"] == 2.0


def test_no_file_means_defaults_and_no_record(tmp_path):
    assert read_settings(tmp_path / "missing.toml", tmp_path) == {}
    assert load_config_file(tmp_path / "missing.toml", tmp_path) == Config()
    assert not (tmp_path / CHECKED_FILE).exists()


def test_an_unwritable_data_folder_is_no_error(tmp_path, settled):
    config = write(tmp_path / "config.toml", "grace_seconds = 2\n")
    assert read_settings(config, tmp_path / "missing" / "folder") == {"grace_seconds": 2.0}
    assert os.listdir(tmp_path) == ["config.toml"]
