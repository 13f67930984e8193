"""No usable keyring: the agent must say so, name the opt-in file fallback, and send nothing.

Each case runs in a fresh process with keyring's own backend selection
(PYTHON_KEYRING_BACKEND), so the real keyring code path decides, nothing is faked.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from tests.reliability.support import (
    EXCHANGE_BODY,
    EXCHANGE_PATH,
    REPO,
    RestartableCompany,
    child_env,
)

FAIL = "keyring.backends.fail.Keyring"
NULL = "keyring.backends.null.Keyring"

PROBE = """
import sys
from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.keys import KeyStorageError
from poppy_tui.agent.paths import resolve_paths
paths = resolve_paths(sys.argv[1])
agent = Agent.open(paths, load_config(paths))
try:
    key = agent.signing_key()
except KeyStorageError as exc:
    print("KeyStorageError:", exc)
else:
    print("key", key.curve.name)
"""


def run_python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(**env),
        cwd=REPO,
    )


def run_cli(home, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "poppy_tui", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=child_env(POPPY_TUI_HOME=str(home), **env),
        cwd=REPO,
    )


@pytest.mark.parametrize("backend", [FAIL, NULL], ids=["fail-backend", "null-backend"])
def test_no_usable_keyring_is_a_clear_error_naming_the_file_fallback(home, backend):
    done = run_python(PROBE, str(home), PYTHON_KEYRING_BACKEND=backend)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("KeyStorageError:"), out
    assert 'key_storage = "file"' in out and "POPPY_TUI_KEY_STORAGE=file" in out, out
    assert not (home / "data" / "agent-key.pem").exists(), "fell back to a file without being asked"


def test_the_file_fallback_works_when_opted_in_and_keeps_the_key_private(home):
    first = run_python(PROBE, str(home), PYTHON_KEYRING_BACKEND=FAIL, POPPY_TUI_KEY_STORAGE="file")
    assert first.stdout.strip() == "key secp256r1", first.stdout + first.stderr
    key_file = home / "data" / "agent-key.pem"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    before = key_file.read_bytes()
    again = run_python(PROBE, str(home), PYTHON_KEYRING_BACKEND=FAIL, POPPY_TUI_KEY_STORAGE="file")
    assert again.stdout.strip() == "key secp256r1"
    assert key_file.read_bytes() == before, "the key changed between runs: every Session would end"


@pytest.mark.slow
def test_the_cli_reports_a_missing_keyring_without_a_traceback_and_sends_nothing(home):
    with RestartableCompany() as company:
        added = run_cli(home, "companies", "add", company.base_url, PYTHON_KEYRING_BACKEND=FAIL)
        assert added.returncode == 0, added.stdout + added.stderr  # discovery needs no key
        import json

        called = run_cli(
            home,
            "call",
            company.base_url,
            "POST",
            EXCHANGE_PATH,
            "--body",
            json.dumps(EXCHANGE_BODY),
            PYTHON_KEYRING_BACKEND=FAIL,
        )
        assert called.returncode != 0
        assert "Traceback" not in called.stderr, called.stderr
        assert "keyring" in called.stderr and 'key_storage = "file"' in called.stderr, called.stderr
        assert company.approval_requests == 0
        assert company.context.desk.record("exc_5Rt2") is None and company.performed() == 0
