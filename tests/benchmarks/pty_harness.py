"""Spawn a program under a real pseudo-terminal and time what the terminal receives.

"First frame" here is the moment the terminal has received every expected piece of text, which
is what a person would see: the output stream is read as it arrives, escape sequences are
stripped (Textual writes each line's text contiguously, styles and cursor moves between), and the
clock stops at the read that completes the expected text. Nothing inside the child is trusted
(no on_ready, no headless driver).
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from common import REPO, child_env

COLUMNS, LINES = 120, 36
_ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
)


def visible_text(stream: bytes) -> str:
    return _ESCAPES.sub(b"", stream).decode("utf-8", "replace")


@dataclass
class Running:
    proc: subprocess.Popen[bytes]
    master: int
    first_frame_ms: float
    output: bytearray
    started: float = 0.0  # perf_counter() when the child was spawned

    def wait_for(self, expected: list[str], timeout: float = 60.0) -> float:
        """Keep reading until every string in `expected` has reached the terminal too; returns
        the milliseconds since the spawn (a later screen than the one `start` waited for)."""
        if all(piece in visible_text(bytes(self.output)) for piece in expected):
            return self.first_frame_ms  # it came with the screen `start` waited for
        end = time.perf_counter() + timeout
        while not all(piece in visible_text(bytes(self.output)) for piece in expected):
            left = end - time.perf_counter()
            ready, _, _ = select.select([self.master], [], [], max(0.0, left))
            chunk = b""
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
            if not chunk:
                raise RuntimeError(
                    f"the expected text {expected} never reached the terminal; "
                    f"last seen: {visible_text(bytes(self.output))[-400:]!r}"
                )
            self.output += chunk
        return (time.perf_counter() - self.started) * 1000

    def cpu_seconds(self) -> float:
        """user + system CPU of the child so far, from /proc (the child is one process)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def drain(self, seconds: float) -> None:
        """Keep reading what the child writes (a full pty would block it) for `seconds`."""
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:
                    return

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        os.close(self.master)


def start(
    argv: list[str],
    expected: list[str],
    timeout: float = 120.0,
    cwd: Path | None = None,
    **env: str,
) -> Running:
    """Spawn `argv` on a 120x36 pty (in `cwd`, default the repository) and return once every string
    in `expected` has reached it."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    environment = child_env(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(LINES), **env)
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=environment,
        cwd=str(cwd or REPO),
        start_new_session=True,
        close_fds=True,
    )
    os.close(slave)
    output = bytearray()
    while True:
        left = started + timeout - time.perf_counter()
        ready, _, _ = select.select([master], [], [], max(0.0, left))
        if not ready:
            proc.kill()
            os.close(master)
            raise RuntimeError(
                f"{argv[-1]}: the expected text {expected} never reached the terminal; "
                f"last seen: {visible_text(bytes(output))[-400:]!r}"
            )
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            proc.wait(5)
            os.close(master)
            raise RuntimeError(
                f"{argv} exited ({proc.returncode}) before its first frame: "
                f"{visible_text(bytes(output))[-1500:]!r}"
            )
        output += chunk
        text = visible_text(bytes(output))
        if all(piece in text for piece in expected):
            return Running(proc, master, (time.perf_counter() - started) * 1000, output, started)
