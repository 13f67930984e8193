"""What the `Agent` facade raises when something the person asked for can't be done."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from poppy_tui.protocol.challenges import Challenge


class AgentError(RuntimeError):
    """Something the person asked for can't be done (no such interface, a bad URL, ...)."""

    def __init__(self, message: str, challenge: Challenge | None = None) -> None:
        super().__init__(message)
        # Set when the Company asked for sign-in (or refused our identity).
        self.challenge = challenge


class ApprovalUnsignable(AgentError):
    """An approval can't be given: nothing could send it, as requests can't be signed here."""
