"""Who asked, as the screens show it (the words are safety/who_asked.py's, neutralised there):
one line for the review's header and the confirmation, with an agent not seen before marked."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from poppy_tui.safety.who_asked import asked_by_text, is_new_agent

NEW_AGENT = "NEW AGENT: never asked before"


def asked_by_parts(asked: Sequence[Any], *, label: str = "\nasked by ") -> tuple[Any, ...]:
    """Content.assemble parts: `asked by agent «laptop» (its client says «…»)`, every other
    asker after it, then NEW AGENT in the warning colour when one of them never asked before."""
    if not asked:
        return ()
    parts: list[Any] = [(label, "dim")]
    for index, one in enumerate(asked):
        if index:
            parts.append(("; then ", "dim"))
        parts.append(asked_by_text(one, first=False))
    if is_new_agent(asked):
        parts.append(("   " + NEW_AGENT, "bold $warning"))
    return tuple(parts)
