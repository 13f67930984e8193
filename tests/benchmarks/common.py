"""Timing helpers and the figures every benchmark reports."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parents[1]
PYTHON = sys.executable


@dataclass
class Figure:
    section: str
    name: str
    value: float
    unit: str
    detail: str = ""
    target: float | None = None  # the figure must be below this to PASS
    target_text: str = ""

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        return "PASS" if self.value <= self.target else "MISS"

    def shown(self) -> str:
        if self.unit == "x":
            return f"{self.value:.2f}x"
        if self.unit == "ms":
            return f"{self.value:,.1f} ms" if self.value < 100 else f"{self.value:,.0f} ms"
        if self.unit == "%":
            return f"{self.value:.2f}%"
        if self.unit == "MB":
            return f"{self.value:,.1f} MB"
        return f"{self.value:g} {self.unit}"


@dataclass
class Samples:
    values: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def text(self, unit: str = "ms") -> str:
        return (
            f"best {self.best:,.1f} {unit}, median {self.median:,.1f} {unit}, n={len(self.values)}"
        )


def timed(fn: Callable[[], object], repeat: int) -> tuple[Samples, object]:
    samples = Samples()
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        samples.values.append((time.perf_counter() - started) * 1000)
    return samples, result


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POPPY_TUI_")}
    # An installed program runs from .pyc files: with PYTHONDONTWRITEBYTECODE inherited, the
    # warm-up rounds couldn't write them and every run compiled poppy_tui's edited sources again
    # (~150 ms of a first frame), which a person's install never pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env.update(extra)
    return env


def run_child(
    script: str, *args: str, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [PYTHON, str(BENCH_DIR / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(**env),
        cwd=str(REPO),
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed ({done.returncode}): {done.stderr[-3000:]}")
    return done


def write_home(home: Path, **settings: object) -> Path:
    """A POPPY_TUI_HOME: key in a 0600 file (there is no keyring daemon here), grace 0."""
    import json

    settings = {"key_storage": "file", "grace_seconds": 0, **settings}
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "data").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(
        "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    )
    return home


class CompanyProcess:
    """A Company script run in a process of its own (as a real Company would be), on loopback:
    it prints its base URL on its first line and stops when its stdin closes."""

    def __init__(self, script: Path, what: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"{what} did not start (it said {self.base_url!r})")

    def stop(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
