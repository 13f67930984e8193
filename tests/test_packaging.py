"""Packaging: what the code imports is declared, and the suite collects under plain `pytest`."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.tested_package import PACKAGE

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _declared() -> set[str]:
    names = set()
    for requirement in PYPROJECT["project"]["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        names.add(re.sub(r"[-_.]+", "-", name).lower())
    return names


def _imported_top_levels() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"poppy_tui", "__future__"}


def test_every_third_party_import_is_a_declared_dependency():
    providers = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = []
    for module in sorted(_imported_top_levels()):
        distributions = {re.sub(r"[-_.]+", "-", d).lower() for d in providers.get(module, [module])}
        if not distributions & declared:
            missing.append(f"{module} (from {', '.join(sorted(distributions))})")
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_every_dependency_has_a_lower_bound_and_mcp_stays_on_2_3():
    for requirement in PYPROJECT["project"]["dependencies"]:
        assert ">=" in requirement or "==" in requirement, requirement
    (mcp,) = [r for r in PYPROJECT["project"]["dependencies"] if re.match(r"mcp[>=<]", r)]
    assert mcp == "mcp>=2.3,<2.4"
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]
    assert "Environment :: Console" in PYPROJECT["project"]["classifiers"]


def test_the_installed_mcp_sdk_is_the_tested_2_3_series():
    # See the pin's comment in pyproject.toml: another minor version may raise differently.
    version = importlib.metadata.version("mcp")
    assert version.startswith("2.3."), f"mcp {version} is installed; poppy-tui is tested with 2.3.x"


def _plain_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # `python -P` keeps the working folder off sys.path, which is how the `pytest` script runs
    # (`python -m pytest` would put it there and hide the problem).
    return subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plain_pytest_collects_from_the_root_and_from_a_subfolder():
    # tests/protocol imports `from tests.protocol import spec_examples`: the failing case of old.
    from_root = _plain_pytest(ROOT, "tests/protocol")
    assert from_root.returncode == 0, from_root.stdout[-2000:] + from_root.stderr[-2000:]
    assert "test_approval.py" in from_root.stdout
    from_below = _plain_pytest(ROOT / "tests" / "protocol")
    assert from_below.returncode == 0, from_below.stdout[-2000:] + from_below.stderr[-2000:]
    assert "test_operation.py" in from_below.stdout


def test_the_classifiers_name_the_pythons_ci_runs_on():
    """.ci/run tests this interpreter (3.11, the oldest requires-python allows) and the other
    Pythons it lists; the classifiers say exactly those minor versions."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    listed = ci.split("OTHER_PYTHONS=(", 1)[1].split(")", 1)[0]
    minors = set(re.findall(r"versions/(3\.\d+)\.\d+/bin/python", listed))
    if "/usr/bin/python3" in listed:
        minors.add("3.11")  # Debian 12's, 3.11.2
    minors.add(PYPROJECT["project"]["requires-python"].removeprefix(">="))
    classified = {
        c.rsplit(" :: ", 1)[1]
        for c in PYPROJECT["project"]["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert classified == minors == {"3.11", "3.12", "3.13"}
