"""Helpers for running poppy-tui as a real program, shared by the CLI tests."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

import poppy_tui
from poppy_tui.cli.exit_codes import Exit

# The package the tests import, so a subprocess runs the same code (a checkout or an install).
PACKAGE_ROOT = str(Path(poppy_tui.__file__).resolve().parent.parent)


class Run(NamedTuple):
    """One run's exit code and output: by name (run.code) or unpacked (code, out, err = run)."""

    code: int
    out: str
    err: str


# A home's config.toml unless a test needs another: the key in a 0600 file, no grace period.
HOME_CONFIG = 'key_storage = "file"\ngrace_seconds = 0\n'


def make_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_toml: str = HOME_CONFIG
) -> Path:
    """A private POPPY_TUI_HOME under tmp_path with this config.toml: no keyring daemon runs here."""
    root = tmp_path / "home"
    (root / "config").mkdir(parents=True)
    (root / "config" / "config.toml").write_text(config_toml)
    monkeypatch.setenv("POPPY_TUI_HOME", str(root))
    monkeypatch.delenv("POPPY_TUI_KEY_STORAGE", raising=False)
    return root


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    """main(argv) in this process, with what it printed."""
    from poppy_tui.cli.main import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def subprocess_env(home: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POPPY_TUI_")}
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if home is not None:
        env["POPPY_TUI_HOME"] = str(home)
    env.update(extra)
    return env


def run_process(*argv: str, home: Path | None, timeout: float = 60, **extra_env: str) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "poppy_tui", *argv],
        env=subprocess_env(home, **extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def add_as_a_program(home: Path, company) -> None:
    """`poppy-tui companies add` the running `company` (anything with a base_url) to `home`, as a
    separate program."""
    done = run_process("companies", "add", company.base_url, home=home)
    assert done.code == Exit.OK, done.err


def start_process(*argv: str, home: Path | None, **extra_env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "poppy_tui", *argv],
        env=subprocess_env(home, **extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def readable(fileobj: object, timeout: float) -> bool:
    """Whether `fileobj` has something to read within `timeout`: a selector, since select.select
    refuses descriptors past 1024, which a long test run reaches."""
    with selectors.DefaultSelector() as selector:
        selector.register(fileobj, selectors.EVENT_READ)  # type: ignore[arg-type]
        return bool(selector.select(timeout))


def screen_text(raw: bytes) -> str:
    """What a terminal would have been sent, less its escape sequences: enough to find words in."""
    return _ESCAPES.sub("", raw.decode("utf-8", "replace"))


class Terminal:
    """poppy-tui running in a pseudo-terminal, as a person runs it (POSIX only)."""

    def __init__(
        self,
        *argv: str,
        home: Path,
        columns: int = 120,
        lines: int = 40,
        controlling: bool = False,
    ) -> None:
        """`controlling`: the pseudo-terminal is the program's controlling terminal, as a person's
        is, so Ctrl-C (pressed as b"\\x03") reaches it as SIGINT from the terminal driver."""
        import fcntl
        import pty
        import struct
        import termios

        self._leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        env = subprocess_env(home, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(lines))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "poppy_tui", *argv],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=env,
            start_new_session=True,
            # After setsid (start_new_session), so the new session takes this terminal.
            preexec_fn=(lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0)) if controlling else None,
        )
        os.close(follower)
        self.seen = b""

    @property
    def text(self) -> str:
        return screen_text(self.seen)

    def _read(self, wait: float) -> bool:
        """Read what is there; False once the program closed the terminal."""
        if not readable(self._leader, wait):
            return True
        try:
            chunk = os.read(self._leader, 65536)
        except OSError:
            return False
        self.seen += chunk
        return bool(chunk)

    @property
    def flat(self) -> str:
        """The output with every run of white space one space: lines wrapped to fit the terminal
        read as the sentences they are."""
        return " ".join(self.text.split())

    def read_until(
        self, pattern: str, timeout: float = 60, after: str = "", flat: bool = False
    ) -> None:
        """Wait for `pattern` in the output, looking only past the first `after` once that has shown
        (`flat`: in the output with white space folded, so a wrapped sentence still matches)."""
        deadline = time.monotonic() + timeout

        def seen() -> str:
            text = self.flat if flat else self.text
            return text.partition(after)[2] if after else text

        while not re.search(pattern, seen()):
            left = deadline - time.monotonic()
            assert left > 0 and self.process.poll() is None, (
                f"never saw {pattern!r}:\n{self.text[-3000:]}"
            )
            if not self._read(min(left, 0.5)):
                break

    def echo_on(self) -> bool:
        """Whether the terminal echoes what is typed (the leader of a pseudo-terminal reports its
        follower's modes): a program must give echo back however a secret prompt ended."""
        import termios

        return bool(termios.tcgetattr(self._leader)[3] & termios.ECHO)

    def press(self, keys: bytes) -> None:
        os.write(self._leader, keys)

    def quit(self, key: bytes = b"q", timeout: float = 30) -> int:
        """Press `key` until the TUI ends, and return its exit code: a key typed while it is still
        starting can be read before its bindings are in place, so it is pressed again each second."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self.press(key)
            pressed = time.monotonic()
            while self.process.poll() is None and time.monotonic() - pressed < 1.0:
                if not self._read(0.05):
                    break
        return self.wait(max(0.0, deadline - time.monotonic()))

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        code = self.process.wait(timeout=5)
        while readable(self._leader, 0.2) and self._read(0):
            pass  # what it wrote just before exiting
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        os.close(self._leader)
