"""`poppy-tui config check [PATH]` and `locate log|schema` (docs/configuration.md)."""

from __future__ import annotations

import json

from poppy_tui.agent.config_file import SCHEMA_FILE
from poppy_tui.cli.exit_codes import Exit


def test_a_valid_file_is_said_valid(cli, home, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("grace_seconds = 2\n[notifications]\nbell = false\n")
    run = cli("config", "check", str(path))
    assert (
        run.code == Exit.OK
        and run.out.strip() == f"{path}: valid (2 settings set, the rest default)"
    )


def test_a_broken_file_names_the_line_and_exits_2(cli, home, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('grace_seconds = 2\n\n[notifications]\ndesktop = "beep"\n')
    run = cli("config", "check", str(path))
    assert run.code == Exit.USAGE and not run.out
    assert run.err.strip() == (
        f"poppy-tui: {path}:4: notifications.desktop must be one of auto, osc9, osc777, osc99, "
        "off, got 'beep'"
    )


def test_a_broken_home_config_is_checked_not_refused_first(cli, home, tmp_path):
    (home / "config" / "config.toml").write_text("grace_second = 5\n")
    other = tmp_path / "other.toml"
    other.write_text("grace_seconds = 1\n")
    assert (
        cli("config", "check", str(other)).code == Exit.OK
    )  # another file: the home's is not read
    run = cli("config", "check")  # the home's own
    assert run.code == Exit.USAGE and "config.toml:1: unknown setting 'grace_second'" in run.err


def test_the_home_config_is_parsed_afresh_not_read_from_its_record(cli, home, monkeypatch):
    from poppy_tui.agent import config_file

    monkeypatch.setattr(config_file, "_SETTLED_NS", -(10**18))
    config = home / "config" / "config.toml"
    (home / "data").mkdir(exist_ok=True)
    assert cli("pending").code == Exit.OK  # the home's config is remembered now
    assert (home / "data" / config_file.CHECKED_FILE).is_file()
    record = json.loads((home / "data" / config_file.CHECKED_FILE).read_text())
    assert record["file"] == str(config)
    import tomllib

    def counted(*args, **kwargs):
        counted.calls += 1
        return real(*args, **kwargs)

    counted.calls, real = 0, tomllib.loads
    monkeypatch.setattr(tomllib, "loads", counted)
    assert cli("config", "check").code == Exit.OK and counted.calls == 1


def test_json_says_valid_or_the_problem(cli, home, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("grace_seconds = 4000\n")
    run = cli("config", "check", str(path), "--json")
    assert run.code == Exit.USAGE
    assert json.loads(run.out) == {
        "file": str(path),
        "valid": False,
        "problem": f"{path}:1: grace_seconds must be between 0 and 3600, got 4000",
    }
    path.write_text("grace_seconds = 4\n")
    run = cli("config", "check", str(path), "--json")
    assert run.code == Exit.OK
    assert json.loads(run.out) == {
        "file": str(path),
        "valid": True,
        "settings": {"grace_seconds": 4.0},
    }


def test_a_missing_file(cli, home, tmp_path):
    run = cli("config", "check", str(tmp_path / "missing.toml"))
    assert run.code == Exit.USAGE and "no such config file" in run.err
    (home / "config" / "config.toml").unlink()
    run = cli("config", "check")  # no config.toml: every default, which is valid
    assert run.code == Exit.OK and "no config file; every setting has its default" in run.out


def test_locate_log_and_schema(cli, home):
    assert cli("locate", "log").out.strip() == str(home / "data" / "poppy-tui.log")
    schema = cli("locate", "schema").out.strip()
    assert schema == str(SCHEMA_FILE) and json.loads(SCHEMA_FILE.read_text())["type"] == "object"
    (home / "config" / "config.toml").write_text("this is not toml = = =\n")
    assert cli("locate", "log").code == Exit.OK  # even with a broken config
