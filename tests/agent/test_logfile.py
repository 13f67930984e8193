"""The log file (agent/logfile.py): opened at its first record, rotating, mode 0600, its level from
the environment or the config, and every line redacted as it is written."""

from __future__ import annotations

import logging
import stat

import pytest

from poppy_tui.agent import logfile
from poppy_tui.agent.logfile import REDACTED, redact

JWT = "eyJhbGciOiJFUzI1NiIsInR5cCI6InBvcHB5LXNlc3Npb24rand0In0.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlX2J5dGVz"


@pytest.fixture
def log(tmp_path, monkeypatch):
    """A log opened for the test in tmp_path, closed after it; the root logger's level put back."""
    monkeypatch.delenv(logfile.LEVEL_ENV, raising=False)
    root = logging.getLogger()
    level = root.level
    opened: list = []

    def open_it(config_level: str | None = None):
        path = logfile.open_log(tmp_path / "data" / "poppy-tui.log", config_level)
        opened.append(path)
        return path

    yield open_it
    logfile.close_log()
    root.setLevel(level)


def text_of(path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        (f"Poppy-Session: {JWT}", "Poppy-Session: "),
        (f"signed {JWT}, sent", "signed [redacted], sent"),
        ("[(b'Host', b'x'), (b'Authorization', b'Bearer tok_abcdef123')]", "(b'Host', b'x')"),
        ("authorization: Bearer tok_abcdef123", "authorization: "),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: "),
        (
            '{"access_token": "tok_abcdef123", "token_type": "Bearer", "expires_in": 60}',
            '"expires_in": 60',
        ),
        ("{'refresh_token': 'rt_abcdef123'}", "{'refresh_token': '"),
        ('{"password": "hunter22 and more", "username": "ana"}', '"username": "ana"'),
        ("grant_type=authorization_code&code=tok_abcdef123&state=s1", "&state=s1"),
        ("GET /cb?code=tok_abcdef123 HTTP/1.1", " HTTP/1.1"),
        ("client_assertion=tok_abcdef123&client_id=x", "&client_id=x"),
        ("code_verifier=tok_abcdef123", "code_verifier="),
        ("Request(password='tok_abcdef123', user='ana')", "user='ana'"),
        ('{"device_code": "tok_abcdef123", "user_code": "WDJB-MJHT"}', '"device_code": "'),
        ("Cookie: sid=tok_abcdef123", "Cookie: "),
    ],
)
def test_secrets_are_redacted_in_every_form(line, kept):
    redacted = redact(line)
    assert "tok_abcdef123" not in redacted and JWT not in redacted
    assert "hunter22" not in redacted and "dXNlcjpwYXNz" not in redacted and "WDJB" not in redacted
    assert "rt_abcdef123" not in redacted and "sid=" not in redacted.replace("sid=[redacted]", "")
    assert REDACTED in redacted and kept in redacted, redacted


@pytest.mark.parametrize(
    "line",
    [
        "exit code: 2",
        "status_code=401",
        "the access token expired; signing in again",
        "basic checks passed",
        "Mcp-Session-Id: 6f1c",
        "GET https://shop.example/api/orders/ord_7Hk2 200",
    ],
)
def test_ordinary_lines_are_left_alone(line):
    assert redact(line) == line


def test_a_named_secret_is_replaced_wherever_it_appears():
    logfile.secret("gate-4mW9cZ0pQ7")
    logfile.secret("abc")  # too short to name: it would blank out words
    assert redact("refused gate-4mW9cZ0pQ7 (abc)") == "refused [redacted] (abc)"


def test_no_file_until_a_record_and_then_mode_0600(log, tmp_path):
    path = log()
    assert not path.exists()  # a command that logs nothing makes no file
    logging.getLogger("poppy_tui.test").warning("something odd")
    text = text_of(path)
    assert "WARNING poppy_tui.test" in text and "something odd" in text
    assert "writes its log here, from info" in text.splitlines()[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_caught_exception_is_written_with_its_traceback_and_redacted(log):
    path = log()
    try:
        raise RuntimeError(f"refused Authorization: Bearer tok_abcdef123 with {JWT}")
    except RuntimeError:
        logging.getLogger("poppy_tui.agent.dispatcher").exception("sending operation 3 failed")
    text = text_of(path)
    assert "Traceback (most recent call last)" in text and "RuntimeError: refused" in text
    assert "tok_abcdef123" not in text and JWT not in text


def test_levels_ours_from_the_chosen_one_others_from_warning_or_all_at_debug(log, monkeypatch):
    path = log("info")
    logging.getLogger("poppy_tui.x").info("ours at info")
    logging.getLogger("poppy_tui.x").debug("ours at debug")
    logging.getLogger("httpcore2.connection").info("theirs at info")
    logging.getLogger("httpcore2.connection").warning("theirs at warning")
    text = text_of(path)
    assert "ours at info" in text and "theirs at warning" in text
    assert "ours at debug" not in text and "theirs at info" not in text
    logfile.close_log()
    monkeypatch.setenv(logfile.LEVEL_ENV, "debug")  # the environment wins over the config
    path = log("error")
    logging.getLogger("httpcore2.connection").debug("theirs at debug")
    assert "theirs at debug" in text_of(path)


def test_a_level_the_environment_names_wrongly_is_said_and_the_config_used(log, monkeypatch):
    monkeypatch.setenv(logfile.LEVEL_ENV, "loud")
    path = log("warning")
    logging.getLogger("poppy_tui.x").info("not kept")
    text = text_of(path)
    assert "POPPY_TUI_LOG_LEVEL='loud' is not one of debug, info, warning, error" in text
    assert "not kept" not in text


def test_the_file_rotates(log, monkeypatch):
    monkeypatch.setattr(logfile, "LOG_BYTES", 2000)
    path = log()
    for n in range(200):
        logging.getLogger("poppy_tui.x").warning("line %s %s", n, "x" * 40)
    text_of(path)
    kept = sorted(p.name for p in path.parent.iterdir())
    assert kept == ["poppy-tui.log", "poppy-tui.log.1", "poppy-tui.log.2", "poppy-tui.log.3"]
    assert path.stat().st_size <= 2000 and "line 199" in path.read_text()


def test_another_home_takes_the_log_over(log, tmp_path):
    first = log()
    second = logfile.open_log(tmp_path / "demo" / "data" / "poppy-tui.log", None)
    logging.getLogger("poppy_tui.x").warning("for the demo")
    assert logfile.current() == second and "for the demo" in text_of(second)
    assert "for the demo" not in text_of(first)


def test_a_log_that_cant_be_written_stops_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(logfile.LEVEL_ENV, raising=False)
    blocked = tmp_path / "file"
    blocked.write_text("")
    try:
        logfile.open_log(blocked / "poppy-tui.log")  # its folder is a file
        logging.getLogger("poppy_tui.x").warning("nowhere to go")  # no exception
    finally:
        logfile.close_log()
