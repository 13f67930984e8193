"""docs/conformance.md says which test keeps each statement of the spec and which code implements
it. This keeps that audit honest as the code moves: every `tests/...::name` it cites must still
be a test, every `module.py:Name` must still be defined, every row A1-A52, C1-C35, X1-X12 must be
there once, and the summary's counts must be the tables' verdicts.

Test ids written `branch:tests/...` name tests on a branch not merged yet; they are left alone
until the test is in this checkout, and then fail until the prefix is dropped (and the row that
waited for them is brought up to date).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

from tests.tested_package import PACKAGE

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"

# A cited test: a file, optionally ::function (::Class::method too) and [params]. Not preceded by
# a word character or ':' so `edges2:tests/...` (a branch's test) is not taken as main's.
TEST_ID = re.compile(r"(?<![\w:/])(tests/[\w/]+\.py)((?:::\w+)*)(\[[^`]*?\])?(?=`)")
# A test on a branch not merged yet: `edges2:tests/agent/test_x.py::test_y`.
PENDING_TEST_ID = re.compile(r"`[\w.-]+:(tests/[\w/]+\.py)((?:::\w+)*)`")
# A cited piece of code, relative to poppy_tui/: `agent/dispatcher.py:Dispatcher._drive`.
CODE_REF = re.compile(
    r"`((?:protocol|safety|agent|ui|cli|mcp_server|demo)/[\w/]+\.py)(?::([\w.]+))?`"
)
ROW = re.compile(r"^\| ([ACX]\d+) \|(.*)\|\s*$")
EXPECTED_ROWS = (
    [f"A{i}" for i in range(1, 53)]
    + [f"C{i}" for i in range(1, 36)]
    + [f"X{i}" for i in range(1, 13)]
)
VERDICTS = ("I+T", "I-U", "P", "M", "W", "n/a")


@cache
def defined_names(path: Path) -> frozenset[str]:
    """Dotted names a module defines: functions, classes, their methods and nested functions,
    and module- or class-level assignments."""
    names: set[str] = set()

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(prefix + child.name)
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.Assign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names.update(prefix + t.id for t in targets if isinstance(t, ast.Name))

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return frozenset(names)


def cited_tests(text: str) -> list[tuple[str, str, str]]:
    """(file, dotted name or '', params or '') of every test id the text cites."""
    return [
        (m.group(1), m.group(2).removeprefix("::").replace("::", "."), m.group(3) or "")
        for m in TEST_ID.finditer(text)
    ]


def missing_tests(text: str, root: Path = ROOT) -> list[str]:
    """Cited test ids whose file, or function in that file, doesn't exist."""
    missing = []
    for file, name, params in cited_tests(text):
        path = root / file
        if not path.is_file():
            missing.append(file)
        elif name and name not in defined_names(path):
            missing.append(f"{file}::{name.replace('.', '::')}{params}")
    return missing


def merged_pending_tests(text: str, root: Path = ROOT) -> list[str]:
    """Tests cited as a branch's that are in this checkout now."""
    merged = []
    for file, names in PENDING_TEST_ID.findall(text):
        name = names.removeprefix("::").replace("::", ".")
        path = root / file
        if path.is_file() and (not name or name in defined_names(path)):
            merged.append(f"{file}{names}")
    return merged


def missing_code(text: str, root: Path = PACKAGE.parent) -> list[str]:
    missing = []
    for file, name in set(CODE_REF.findall(text)):
        path = root / "poppy_tui" / file
        if not path.is_file() or (name and name not in defined_names(path)):
            missing.append(f"{file}:{name}" if name else file)
    return sorted(missing)


def rows(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            assert match.group(1) not in found, f"{match.group(1)} has two rows"
            found[match.group(1)] = [cell.strip() for cell in match.group(2).split(" | ")]
    return found


def verdict_of(cells: list[str]) -> str:
    """The verdict cell (third column) reduced to its verdict: '**I+T** (was P)' -> 'I+T'."""
    word = cells[1].replace("*", "").split()[0]
    assert word in VERDICTS, f"not a verdict: {cells[1]!r}"
    return word


def summary_now(text: str) -> dict[str, list[int]]:
    """The summary table's 'now' counts per verdict: [A, C, X, total]."""
    counts = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in VERDICTS and len(cells) == 5 and "→" in cells[1]:
            counts[cells[0]] = [int(c.split("→")[1].replace("*", "").strip()) for c in cells[1:]]
    return counts


def test_every_cited_test_exists():
    text = DOC.read_text(encoding="utf-8")
    assert len(cited_tests(text)) > 200, "the audit cites its tests as `tests/path.py::name`"
    assert missing_tests(text) == []


def test_a_branchs_tests_are_cited_as_mains_once_merged():
    text = DOC.read_text(encoding="utf-8")
    assert merged_pending_tests(text) == [], (
        "these tests are in main now: cite them without the branch prefix and update their rows' verdicts"
    )


def test_cited_parameters_are_collected():
    """A test cited with its [params] must be collected with exactly that id."""
    text = DOC.read_text(encoding="utf-8")
    wanted = {f"{f}::{n.replace('.', '::')}{p}" for f, n, p in cited_tests(text) if p}
    assert wanted, "the audit cites some parametrized cases"
    files = sorted({w.split("::")[0] for w in wanted})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.splitlines()
    assert sorted(wanted - set(collected)) == []


def test_every_cited_piece_of_code_is_defined():
    text = DOC.read_text(encoding="utf-8")
    assert len(CODE_REF.findall(text)) > 100
    assert missing_code(text) == []


def test_every_row_is_there_once_with_a_verdict():
    found = rows(DOC.read_text(encoding="utf-8"))
    assert sorted(found) == sorted(EXPECTED_ROWS)
    for row_id, cells in found.items():
        assert len(cells) == 4, f"{row_id}: {len(cells)} cells"
        if verdict_of(cells) == "I+T":
            assert "`tests/" in cells[3], f"{row_id} is 'tested' but names no test"


def test_the_summary_counts_the_tables():
    text = DOC.read_text(encoding="utf-8")
    per_party: dict[str, Counter[str]] = {party: Counter() for party in "ACX"}
    for row_id, cells in rows(text).items():
        per_party[row_id[0]][verdict_of(cells)] += 1
    summary = summary_now(text)
    assert sorted(summary) == sorted(VERDICTS)
    for verdict, (a, c, x, total) in summary.items():
        counted = [per_party[p][verdict] for p in "ACX"]
        assert [a, c, x] == counted, f"{verdict}: summary {[a, c, x]}, tables {counted}"
        assert total == sum(counted)


def test_the_checker_notices_a_test_or_code_that_is_gone():
    """The neighbours: a renamed test, a deleted file, a removed method and a branch's test."""
    text = (
        "`tests/test_conformance_doc.py::test_every_cited_test_exists` "
        "`tests/test_conformance_doc.py::test_that_was_renamed` "
        "`tests/no_such_file.py::test_anything` "
        "`tests/test_conformance_doc.py::test_every_cited_test_exists[a-b]` "
        "`edges2:tests/agent/test_not_merged.py::test_later` "
        "`agent/dispatcher.py:Dispatcher.dispatch_once` `agent/dispatcher.py:Dispatcher._gone` "
        "`agent/no_such_module.py:thing`"
    )
    assert missing_tests(text) == [
        "tests/test_conformance_doc.py::test_that_was_renamed",
        "tests/no_such_file.py",
    ]
    assert missing_code(text) == [
        "agent/dispatcher.py:Dispatcher._gone",
        "agent/no_such_module.py:thing",
    ]
    assert merged_pending_tests(text) == []
    merged = "`edges2:tests/test_conformance_doc.py::test_every_cited_test_exists`"
    assert merged_pending_tests(merged) == [
        "tests/test_conformance_doc.py::test_every_cited_test_exists"
    ]
