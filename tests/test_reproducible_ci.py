"""CI installs pinned versions (constraints.txt), runs the README's test command as written, and
the README keeps two set-up commands: one runs the demo, one runs the tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REGENERATE = "uv pip compile pyproject.toml --extra test --extra checks --universal --python-version 3.11 -o constraints.txt"


def _pins() -> dict[str, list[str]]:
    """Package name -> the versions constraints.txt pins it to (one per environment marker)."""
    pins: dict[str, list[str]] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier  # exactly one ==
        assert specifier.operator == "==", line
        pins.setdefault(canonicalize_name(requirement.name), []).append(specifier.version)
    return pins


def _declared() -> list[Requirement]:
    extras = PYPROJECT["project"]["optional-dependencies"]
    return [
        Requirement(r)
        for r in PYPROJECT["project"]["dependencies"] + extras["test"] + extras["checks"]
    ]


def test_constraints_pin_every_declared_requirement_within_its_range():
    pins = _pins()
    unpinned, outside = [], []
    for requirement in _declared():
        versions = pins.get(canonicalize_name(requirement.name))
        if not versions:
            unpinned.append(requirement.name)
        elif not all(requirement.specifier.contains(v, prereleases=True) for v in versions):
            outside.append(f"{requirement} (pinned {', '.join(versions)})")
    fix = f"; regenerate constraints.txt: {REGENERATE}"
    assert not unpinned, f"not in constraints.txt: {unpinned}{fix}"
    assert not outside, f"pinned outside pyproject.toml's range: {outside}{fix}"


def test_constraints_say_how_they_were_made():
    assert REGENERATE in (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert REGENERATE in (ROOT / "docs" / "development.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("\n## Set up\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    return [
        line
        for block in re.findall(r"```sh\n(.*?)```", setup, re.S)
        for line in block.splitlines()
        if line
    ]


def test_the_readme_has_two_setup_commands_and_ci_runs_the_test_one_verbatim():
    demo, tests = _setup_commands()
    assert demo == "pip install . && poppy-tui --demo"
    assert tests == "pip install -c constraints.txt '.[test]' && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci


def test_ci_runs_every_static_check_and_pins_their_versions():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -c constraints.txt '.[test,checks]'" in ci
    for check in ("ruff check poppy_tui tests", "mypy poppy_tui", "lint-imports"):
        assert re.search(rf"^{re.escape(check)} \|\| checks_failed=1$", ci, re.M), check
    for requirement in map(Requirement, PYPROJECT["project"]["optional-dependencies"]["checks"]):
        if requirement.name != "types-regex":
            assert any(s.operator == "<" for s in requirement.specifier), (
                f"{requirement}: no upper bound"
            )
