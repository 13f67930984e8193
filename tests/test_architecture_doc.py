"""docs/architecture.md's listing of the `Agent` facade names what the code has, no more, no less.

The listing is the map a newcomer reads before the code; when it drifts (members added to the
facade and not listed, fields of its results missing) the map lies. So the test reads the
listing's code block and compares the names in it with the class's public members and the
result records' fields.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.request_results import ConversationResult, RequestResult

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
SECTION = "## The `Agent` facade"


def listing() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    block = text.index("```python", start)
    end = text.index("```", block + len("```python"))
    return text[block:end]


def listed_class(name: str) -> str:
    """The lines of the listing's `class NAME` up to the next class (dedented members)."""
    lines = listing().splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if re.match(r"(@dataclass|class )", line):
            inside = line.startswith(f"class {name}")
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


def member_names(body: str) -> set[str]:
    """Names defined at the class's first indentation level: methods and annotated attributes."""
    names = set()
    for line in body.splitlines():
        m = re.match(r"    (?:async def |def )?([a-z_][a-z0-9_]*)\s*[(:=]", line)
        if m:
            names.add(m.group(1))
    return names


def public_members(cls: type) -> set[str]:
    """The class's public attributes and those its __init__ sets on the instance."""
    source = inspect.getsource(cls.__init__)  # type: ignore[misc]
    assigned = set(re.findall(r"self\.([a-z][a-z0-9_]*)\s*[:=]", source))
    return {name for name in dir(cls) if not name.startswith("_")} | assigned


def test_every_public_member_of_the_facade_is_listed_and_nothing_else():
    listed = member_names(listed_class("Agent"))
    actual = public_members(Agent)
    assert sorted(actual - listed) == [], "members of Agent missing from docs/architecture.md"
    assert sorted(listed - actual) == [], "docs/architecture.md lists members Agent doesn't have"


def test_the_result_records_are_listed_with_every_field():
    for record in (RequestResult, ConversationResult):
        listed = member_names(listed_class(record.__name__))
        fields = {f.name for f in dataclasses.fields(record)}
        assert listed == fields, f"{record.__name__}: listed {sorted(listed)}, has {sorted(fields)}"


def test_the_listing_is_read_as_intended():
    # The parser above must see the listing's well-known members, or the comparison is empty.
    assert {"approve", "decline", "call_api", "store", "open"} <= member_names(
        listed_class("Agent")
    )
