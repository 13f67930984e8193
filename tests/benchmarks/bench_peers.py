"""poppy-tui's first frame against two other Textual applications, Posting (an HTTP
client) and Harlequin (an SQL IDE), measured in the same real pty and the same way as
bench_firstframe.py, with the minimal Textual app (anchor_app.py) in every round.

Posting and Harlequin are optional anchors of this benchmark only, never dependencies of
poppy-tui (not in pyproject.toml). Each lives in its own virtual environment under the peers
directory (`run.py --peers-venvs DIR`, default STORES/peers), created with the same Python as
poppy-tui and filled with `pip install` from PyPI the first time the section runs. When one can't
be installed (no network) or doesn't start, its figures are skipped with a note saying why; the
section never fails because a peer is absent. Posting's pin of textual 6.1.0 crashes (SIGSEGV in
the syntax highlighter) with tree-sitter 0.26, so its environment gets `tree-sitter<0.26`.

Each round spawns, in turn, the anchor, `python -m poppy_tui --home HOME` on an empty store,
`posting` and `harlequin`, each on a fresh 120x36 pty, and stops the clock when the terminal has
received text that each really draws on its first complete screen (found by running each in
the pty and reading what arrived):
- poppy-tui: "Nothing is waiting for you" (the empty inbox);
- Posting: its header, "Collection is empty.", the URL bar's placeholder and the footer: all
  arrive in its first frame;
- Harlequin: the data catalog with the "memory" database, the "Query Editor", "Query Results"
  and the footer. Its very first frame is a skeleton with loading dots and no editor; the clock
  stops at the first one a person can type a query into, and the skeleton's time is reported
  beside it for information. It runs with its default in-memory
  DuckDB and `--locale C` (else, on a machine whose locale is C.UTF-8 such as this one, it first
  prints a warning about the locale and only then starts).

The peers get an isolated HOME and XDG config/data/cache/state directories in a temporary
directory, which is also their working directory (Harlequin reads pyproject.toml and
.harlequin.toml from there), and an empty PYTHONPATH: nothing of this machine's leaks in.
Rounds are interleaved so drift on the shared machine hits every figure alike; each figure is
the median of the per-round ratios, with their spread.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import bench_firstframe
import pty_harness
from common import PYTHON, Figure, Samples

SECTION = "Peers: first frame (pty)"
INSTALL_SECONDS = 900.0


@dataclass(frozen=True)
class Peer:
    name: str
    requirements: tuple[str, ...]  # what `pip install` is given
    arguments: tuple[str, ...]
    expected: tuple[str, ...]  # text on its first complete screen
    # When it first paints a skeleton (loading indicators, no content) that screen's text, timed too.
    first_paint: tuple[str, ...] = ()


PEERS = (
    Peer(
        "posting",
        ("posting", "tree-sitter<0.26"),
        (),
        ("Posting", "Collection is empty.", "Enter a URL or paste a curl command", "f1 Help"),
    ),
    Peer(
        "harlequin",
        ("harlequin",),
        ("--locale", "C"),
        ("Data Catalog", "memory", "Query Editor", "Query Results", "f1 Help"),
        ("Data Catalog", "Run Query", "Query Results"),
    ),
)


class Skipped(Figure):
    """A figure that could not be measured: shown as "skipped", with the reason as its detail."""

    def shown(self) -> str:
        return "skipped"


def _installed(venv: Path) -> str | None:
    """The peer's installed version, or None when its environment isn't complete."""
    if not (venv / "installed").exists():
        return None
    return (venv / "installed").read_text().strip() or "?"


def ensure_installed(root: Path, peer: Peer) -> tuple[Path | None, str]:
    """(its executable, its version) or (None, why not): installs it once under root/NAME."""
    venv = root / peer.name
    executable = venv / "bin" / peer.name
    version = _installed(venv)
    if version is not None and executable.exists():
        return executable, version
    root.mkdir(parents=True, exist_ok=True)
    print(f"  installing {peer.name} into {venv} (pip, from PyPI; once) ...", flush=True)
    try:
        subprocess.run(
            [PYTHON, "-m", "venv", "--clear", str(venv)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        done = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *peer.requirements,
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_SECONDS,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{peer.name} could not be installed ({type(exc).__name__}: {exc})"
    if done.returncode != 0 or not executable.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{peer.name} could not be installed with pip (no network?): {last[:200]}"
    shown = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            f"import importlib.metadata as m; print(m.version({peer.name!r}))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    (venv / "installed").write_text(shown + "\n")
    return executable, shown or "?"


def isolated_environment(scratch: Path, venv: Path) -> dict[str, str]:
    """HOME and the XDG directories in `scratch`, the peer's own venv, no PYTHONPATH."""
    environment = {
        "HOME": str(scratch),
        "PYTHONPATH": "",
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"]),
    }
    for variable, folder in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        (scratch / folder).mkdir(parents=True, exist_ok=True)
        environment[variable] = str(scratch / folder)
    return environment


def peer_frame(peer: Peer, executable: Path, scratch: Path) -> tuple[float, float]:
    """(its first paint, its first complete screen) in ms; the same when it paints no skeleton."""
    running = pty_harness.start(
        [str(executable), *peer.arguments],
        list(peer.first_paint or peer.expected),
        timeout=60.0,
        cwd=scratch,
        **isolated_environment(scratch, executable.parent.parent),
    )
    try:
        complete = (
            running.wait_for(list(peer.expected)) if peer.first_paint else running.first_frame_ms
        )
    finally:
        running.stop()
    return running.first_frame_ms, complete


def _spread(ratios: list[float]) -> str:
    return f"per-round ratios {min(ratios):.2f}x–{max(ratios):.2f}x over {len(ratios)} interleaved rounds"


def run(stores: Path, rounds: int, venvs: Path | None = None) -> list[Figure]:
    venvs = venvs or stores / "peers"
    home = bench_firstframe.make_home(stores, 0)
    ready: dict[str, tuple[Peer, Path, str]] = {}
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="poppy-bench-peers-") as scratch_root:
        scratch = {peer.name: Path(scratch_root) / peer.name for peer in PEERS}
        for peer in PEERS:
            executable, version = ensure_installed(venvs, peer)
            if executable is None:
                figures.append(Skipped(SECTION, f"poppy / {peer.name}", 0.0, "x", version))
                print(f"  skipped: {version}")
                continue
            scratch[peer.name].mkdir(parents=True, exist_ok=True)
            try:  # also warms its .pyc files and the OS cache, as the anchor's first run does
                peer_frame(peer, executable, scratch[peer.name])
            except RuntimeError as exc:
                note = f"{peer.name} {version} did not show its first screen: {str(exc)[:300]}"
                figures.append(Skipped(SECTION, f"poppy / {peer.name}", 0.0, "x", note))
                print(f"  skipped: {note}")
                continue
            ready[peer.name] = (peer, executable, version)
        bench_firstframe.anchor_frame()
        bench_firstframe.poppy_frame(home, 0)

        anchor, poppy = Samples(), Samples()
        peer_times = {name: Samples() for name in ready}
        paint_times = {name: Samples() for name in ready if ready[name][0].first_paint}
        poppy_over_paint: dict[str, list[float]] = {name: [] for name in paint_times}
        poppy_over_anchor: list[float] = []
        poppy_over_peer: dict[str, list[float]] = {name: [] for name in ready}
        peer_over_anchor: dict[str, list[float]] = {name: [] for name in ready}
        for _ in range(rounds):
            a = bench_firstframe.anchor_frame()
            p = bench_firstframe.poppy_frame(home, 0)
            anchor.values.append(a)
            poppy.values.append(p)
            poppy_over_anchor.append(p / a)
            for name, (peer, executable, version) in list(ready.items()):
                try:
                    paint, ms = peer_frame(peer, executable, scratch[name])
                except RuntimeError as exc:  # it crashed or hung in this round: no figure from it
                    note = f"{name} {version} failed in a round: {str(exc)[:300]}"
                    figures.append(Skipped(SECTION, f"poppy / {name}", 0.0, "x", note))
                    print(f"  skipped: {note}")
                    del ready[name]
                    continue
                peer_times[name].values.append(ms)
                if name in paint_times:
                    paint_times[name].values.append(paint)
                    poppy_over_paint[name].append(p / paint)
                poppy_over_peer[name].append(p / ms)
                peer_over_anchor[name].append(ms / a)

    measured = [
        Figure(
            SECTION, "anchor: minimal Textual app (one Static)", anchor.median, "ms", anchor.text()
        ),
        Figure(SECTION, "poppy-tui, empty store", poppy.median, "ms", poppy.text()),
        Figure(
            SECTION,
            "poppy, empty store / anchor",
            statistics.median(poppy_over_anchor),
            "x",
            f"{_spread(poppy_over_anchor)}; the firstframe section's figure, measured again in this run",
        ),
    ]
    for name, (peer, _, version) in ready.items():
        measured += [
            Figure(
                SECTION,
                f"{name} {version}",
                peer_times[name].median,
                "ms",
                f"{peer_times[name].text()}; clock stops when {', '.join(repr(t) for t in peer.expected)} "
                "have reached the pty",
            ),
            Figure(
                SECTION,
                f"{name} / anchor",
                statistics.median(peer_over_anchor[name]),
                "x",
                _spread(peer_over_anchor[name]),
            ),
            Figure(
                SECTION,
                f"poppy / {name}",
                statistics.median(poppy_over_peer[name]),
                "x",
                f"below 1 means poppy-tui's first frame comes sooner; {_spread(poppy_over_peer[name])}",
            ),
        ]
        if name in paint_times and poppy_over_paint[name]:
            measured += [
                Figure(
                    SECTION,
                    f"{name}, first paint (loading skeleton)",
                    paint_times[name].median,
                    "ms",
                    f"{paint_times[name].text()}; clock stops when {', '.join(repr(t) for t in peer.first_paint)} "
                    "have reached the pty, before its content has loaded",
                ),
                Figure(
                    SECTION,
                    f"poppy / {name}'s first paint",
                    statistics.median(poppy_over_paint[name]),
                    "x",
                    f"for information: poppy's figure is its content, this peer's a skeleton; "
                    f"{_spread(poppy_over_paint[name])}",
                ),
            ]
    return measured + figures
