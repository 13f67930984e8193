"""The benchmark scripts (tests/benchmarks, not collected by pytest) import names from each other,
often inside functions so that a section loads only what it runs. A name moved or renamed in one
script broke another only when that section ran (`commands` imported a `_CompanyProcess` that
bench_roundtrip no longer had). Every such import must name something its module defines."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"


def defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def test_every_import_between_benchmark_scripts_names_something_defined():
    scripts = {
        path.stem: ast.parse(path.read_text(), str(path)) for path in BENCHMARKS.glob("*.py")
    }
    assert {"run", "common", "bench_commands", "bench_roundtrip"} <= scripts.keys()
    defined = {name: defined_names(tree) for name, tree in scripts.items()}
    missing = [
        f"{name}.py:{node.lineno} imports {alias.name} from {node.module}"
        for name, tree in scripts.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in scripts
        for alias in node.names
        if alias.name != "*" and alias.name not in defined[node.module]
    ]
    assert missing == []
