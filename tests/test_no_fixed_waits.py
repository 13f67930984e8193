"""Tests wait on conditions, not on time (docs/GUIDE: "wait on conditions ... not on time").

A fixed wait of 0.1 s or more (a Pilot pause, an asyncio or time sleep, a helper such as
settle(pilot, seconds) given a long literal, or a helper whose parameter defaults to one) fails on a loaded machine
when the wait is too short, and before a "nothing happened" assert it lets the test pass without
exercising anything. Only a test about time itself (a grace period really elapsing, a deadline
passing, a process blocked until it is killed) may keep one, marked on its line with
`# fixed-wait: <why>`; at most MAX_ALLOWED of them. tests/benchmarks/ is outside this rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MARKER = "# fixed-wait:"
MAX_ALLOWED = 10
THRESHOLD = 0.1
WAIT_NAMES = {"pause", "sleep", "settle"}


def _numbers(node: ast.AST) -> list[float]:
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, (int, float))
        and not isinstance(n.value, bool)
    ]


def _duration_args(call: ast.Call) -> list[ast.AST]:
    """The argument that is a duration: the first for pause/sleep, the second of settle(pilot, s)."""
    func = call.func
    name = (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else None
    )
    if name not in WAIT_NAMES:
        return []
    if name == "settle":
        # store.settle(row, owner, status...) is the store's, not a wait.
        if not isinstance(func, ast.Name):
            return []
        args = list(call.args[1:2])
    else:
        args = list(call.args[:1])
    args += [k.value for k in call.keywords if k.arg in ("delay", "seconds", "timeout", "secs")]
    return args


def fixed_waits(path: Path) -> list[tuple[int, str]]:
    """(line, source line) of each fixed wait of THRESHOLD s or more in one file."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for arg in _duration_args(node):
                if any(n >= THRESHOLD for n in _numbers(arg)):
                    found.add(node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A helper whose parameter defaults to a long pause that it then waits for.
            defaults = dict(
                zip(
                    [
                        a.arg
                        for a in node.args.args[len(node.args.args) - len(node.args.defaults) :]
                    ],
                    node.args.defaults,
                    strict=True,
                )
            )
            defaults.update(
                {
                    a.arg: d
                    for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                    if d is not None
                }
            )
            long_defaults = {
                name for name, d in defaults.items() if any(n >= THRESHOLD for n in _numbers(d))
            }
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    for arg in _duration_args(inner):
                        if any(
                            isinstance(n, ast.Name) and n.id in long_defaults for n in ast.walk(arg)
                        ):
                            found.add(inner.lineno)
    # A call that hands a long literal to such a helper's duration parameter (same file).
    sleepy: dict[str, dict[str, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [a.arg for a in node.args.args + node.args.kwonlyargs]
            used = {
                n.id
                for inner in ast.walk(node)
                if isinstance(inner, ast.Call)
                for arg in _duration_args(inner)
                for n in ast.walk(arg)
                if isinstance(n, ast.Name)
            }
            positions = {name: i for i, name in enumerate(a.arg for a in node.args.args)}
            sleepy[node.name] = {name: positions.get(name, -1) for name in names if name in used}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and sleepy.get(node.func.id)
        ):
            params = sleepy[node.func.id]
            handed = [k.value for k in node.keywords if k.arg in params]
            handed += [arg for i, arg in enumerate(node.args) if i in params.values()]
            if any(any(n >= THRESHOLD for n in _numbers(arg)) for arg in handed):
                found.add(node.lineno)
    return [(line, lines[line - 1].strip()) for line in sorted(found)]


def source_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "benchmarks" not in p.relative_to(TESTS).parts)


def all_fixed_waits() -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(TESTS.parent)), line, text)
        for path in source_files()
        for line, text in fixed_waits(path)
    ]


def test_no_unmarked_fixed_waits_in_tests():
    unmarked = [
        f"{where}:{line}: {text}" for where, line, text in all_fixed_waits() if MARKER not in text
    ]
    assert not unmarked, (
        "fixed waits of 0.1 s or more: wait for the condition instead (tests/ui/ui_sample.wait_for, "
        "app.workers.wait_for_complete(), an asyncio.Event from the code under test), or, in a test about "
        f"time itself, mark the line with '{MARKER} <why>':\n" + "\n".join(unmarked)
    )


def test_at_most_a_few_fixed_waits_are_allowed():
    allowed = [
        f"{where}:{line}: {text}" for where, line, text in all_fixed_waits() if MARKER in text
    ]
    assert len(allowed) <= MAX_ALLOWED, "\n".join(allowed)


def test_a_marker_says_why():
    bare = []
    for path in source_files():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            at = text.find(MARKER)
            if (
                at >= 0
                and path.name != Path(__file__).name
                and len(text[at + len(MARKER) :].strip()) < 10
            ):
                bare.append(f"{path.relative_to(TESTS.parent)}:{number}: {text.strip()}")
    assert not bare, "a fixed-wait marker says why the test is about time itself:\n" + "\n".join(
        bare
    )


def test_the_counter_sees_the_forms_it_forbids(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        (
            "import asyncio, time\n"
            "async def settle(pilot, seconds: float = LONG):\n"
            "    await pilot.pause(seconds)\n"  # 3: a helper with a long default
            "async def t(pilot, store):\n"
            "    await pilot.pause(LONG)\n"  # 5
            "    await asyncio.sleep(SECOND)\n"  # 6
            "    time.sleep(LONG)  # fixed-wait: a grace period really elapsing\n"  # 7
            "    await settle(pilot, LONG)\n"  # 8
            "    await pilot.pause(0.05)\n"  # a short poll step: fine
            "    await pilot.pause()\n"  # zero: fine
            "    store.settle(row, 'owner', status)\n"  # the store's settle: not a wait
            "    await asyncio.sleep(delay + 0.1)\n"  # 12
            "async def passes(agent, count, pause=0.0):\n"
            "    await asyncio.sleep(pause)\n"
            "async def u(agent):\n"
            "    await passes(agent, 2, pause=LONG)\n"  # 16: a long pause handed to a helper
            "    await passes(agent, 2, LONG)\n"  # 17
            "    await passes(agent, LONG)\n"  # a count, not the pause: fine
        )
        .replace("LONG", "0.4")
        .replace("SECOND", "1"),
        encoding="utf-8",
    )
    assert [line for line, _ in fixed_waits(sample)] == [3, 5, 6, 7, 8, 12, 16, 17]
