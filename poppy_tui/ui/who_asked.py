"""Who asked, as the screens show it (the words are safety/who_asked.py's, neutralised there):
one line for the review's header, the record and the confirmation, an agent that never asked
before marked NEW in the warning colour."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from poppy_tui.safety.who_asked import asked_by_text

NEW_AGENT = "NEW "


def asked_by_parts(asked: Sequence[Any], *, label: str = "\nasked by ") -> tuple[Any, ...]:
    """Content.assemble parts: `asked by NEW agent «laptop» (its client says «…»)`, then every
    other asker."""
    if not asked:
        return ()
    parts: list[Any] = [(label, "dim")]
    for index, one in enumerate(asked):
        if index:
            parts.append(("; then ", "dim"))
        if one.agent is not None and one.first_request:
            parts.append((NEW_AGENT, "bold $warning"))
        parts.append(asked_by_text(one, first=False))
    return tuple(parts)
