"""Fixtures: a private home, and running main(argv) in this process."""

from __future__ import annotations

import pytest

from cli_support import Run
from poppy_tui.cli.main import main


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private home whose signing key is a 0600 file: no keyring daemon runs here."""
    root = tmp_path / "home"
    (root / "config").mkdir(parents=True)
    (root / "config" / "config.toml").write_text('key_storage = "file"\ngrace_seconds = 0\n')
    monkeypatch.setenv("POPPY_TUI_HOME", str(root))
    monkeypatch.delenv("POPPY_TUI_KEY_STORAGE", raising=False)
    return root


@pytest.fixture
def cli(capsys):
    def run(*argv: str) -> Run:
        code = main(list(argv))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


