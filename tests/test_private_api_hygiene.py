"""No private part of httpx, httpcore, Textual or the MCP SDK is used anywhere in poppy_tui/ (the
guide's rule): no underscore-named module of theirs imported, no underscore-named attribute of
theirs read or written, no private method of theirs overridden or called through super(), and
nothing put into sys.modules. Checked on the source, so a new use fails here before review.

"Theirs" is what comes from those libraries: names imported from them, and classes of ours that
derive from theirs, where an underscore name is theirs if one of their classes in our class's
ancestry defines it or sets it on self. Our own underscore names in such classes are fine.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

from tests.tested_package import PACKAGE

LIBRARIES = ("httpx", "httpx2", "httpcore", "httpcore2", "textual", "mcp", "mcp_types")
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _library(module: str) -> bool:
    return module.split(".")[0] in LIBRARIES


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _their_private_names(cls: type) -> frozenset[str]:
    """Underscore names the libraries' classes in `cls`'s ancestry define or set on self."""
    names: set[str] = set()
    for ancestor in cls.__mro__:
        if not _library(ancestor.__module__):
            continue
        names.update(n for n in vars(ancestor) if _private(n))
        try:
            source = inspect.getsource(ancestor)
        except (OSError, TypeError):
            continue
        names.update(n for n in re.findall(r"self\.(_\w+)", source) if _private(n))
    return frozenset(names)


class _Finder(ast.NodeVisitor):
    def __init__(self, path: Path, module: object) -> None:
        self.path = path
        self.module = module
        self.problems: list[str] = []
        self.library_names: set[str] = set()  # names bound to their modules or objects
        self.classes: list[frozenset[str]] = []  # their private names, per enclosing class

    def problem(self, node: ast.AST, what: str) -> None:
        self.problems.append(f"{self.path.name}:{getattr(node, 'lineno', '?')}: {what}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _library(alias.name):
                if any(_private(part) for part in alias.name.split(".")):
                    self.problem(node, f"imports their private module {alias.name}")
                self.library_names.add((alias.asname or alias.name).split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module and _library(node.module):
            if any(_private(part) for part in node.module.split(".")):
                self.problem(node, f"imports from their private module {node.module}")
            for alias in node.names:
                if _private(alias.name):
                    self.problem(node, f"imports their private {node.module}.{alias.name}")
                self.library_names.add(alias.asname or alias.name)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # Parameters named after a library are that library (netguard takes httpx or httpx2).
        for argument in node.args.args + node.args.kwonlyargs:
            if argument.arg in LIBRARIES:
                self.library_names.add(argument.arg)
        if self.classes and _private(node.name) and node.name in self.classes[-1]:
            self.problem(node, f"overrides their private method {node.name}")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        cls = getattr(self.module, node.name, None)
        theirs: frozenset[str] = frozenset()
        if isinstance(cls, type) and cls.__module__ == getattr(self.module, "__name__", None):
            theirs = _their_private_names(cls)
        elif any(self._from_library(base) for base in node.bases):
            # A class made inside a function from a library's class: every underscore name on
            # self could be theirs, so none may be used.
            theirs = _Anything()  # type: ignore[assignment]
        self.classes.append(theirs)
        self.generic_visit(node)
        self.classes.pop()

    def _from_library(self, node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.library_names

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _private(node.attr):
            root = node.value
            if self._from_library(root) and not (isinstance(root, ast.Name) and root.id == "self"):
                self.problem(node, f"uses their private {ast.unparse(node)}")
            elif (
                isinstance(root, ast.Name)
                and root.id == "self"
                and self.classes
                and node.attr in self.classes[-1]
            ):
                self.problem(node, f"uses their private self.{node.attr}")
            elif (
                isinstance(root, ast.Call)
                and isinstance(root.func, ast.Name)
                and root.func.id == "super"
                and self.classes
                and node.attr in self.classes[-1]
            ):
                self.problem(node, f"calls their private super().{node.attr}")
        if node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            self.sys_modules(node)
        self.generic_visit(node)

    def sys_modules(self, node: ast.Attribute) -> None:
        parent = getattr(node, "parent", None)
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Store, ast.Del)):
            self.problem(node, "writes to sys.modules")
        if isinstance(parent, ast.Attribute) and parent.attr in (
            "setdefault",
            "update",
            "pop",
            "__setitem__",
            "popitem",
            "clear",
        ):
            self.problem(node, f"changes sys.modules ({parent.attr})")


class _Anything(frozenset):
    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _private(name)


def _problems(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child.parent = parent  # type: ignore[attr-defined]
    # A __main__ runs the program when imported: its classes (none) are read from the source alone.
    module = (
        object()
        if path.name == "__main__.py"
        else importlib.import_module(_module_name(path, root))
    )
    finder = _Finder(path, module)
    finder.visit(tree)
    return finder.problems


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PACKAGE)) for p in SOURCES])
def test_no_private_part_of_httpx_httpcore_textual_or_mcp_is_used(path):
    assert _problems(path) == []


def test_the_check_finds_each_kind_of_use(tmp_path, monkeypatch):
    # The shapes the rule forbids, as they appeared in poppy_tui/ before.
    source = """
import sys
import httpx
from textual.css.stylesheet import Stylesheet
from httpx._transports.default import AsyncHTTPTransport


def poison():
    sys.modules.setdefault("httpx._main", None)
    sys.modules["httpx._main"] = None


class Sheet(Stylesheet):
    def _parse_rules(self, css, read_from):
        return super()._parse_rules(css, read_from)

    def mine(self):
        self._own = 1  # our own name: fine
        return self._rules  # theirs


def make(httpx, httpcore):
    class Transport(httpx.AsyncHTTPTransport):
        def handle(self):
            return self._pool  # theirs, for all this check can tell

    return httpx._config
"""
    folder = tmp_path / "fake_pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    path = folder / "sample.py"
    path.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = "\n".join(_problems(path, tmp_path))
    for expected in (
        "private module httpx._transports.default",
        "changes sys.modules (setdefault)",
        "writes to sys.modules",
        "overrides their private method _parse_rules",
        "super()._parse_rules",
        "self._rules",
        "self._pool",
        "httpx._config",
    ):
        assert expected in found, (expected, found)
    assert "_own" not in found
