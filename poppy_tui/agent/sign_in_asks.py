"""Sign-ins a Company asked for in a conversation (an `authorization` event, core 0.2) that the
person hasn't given yet: Talk offers its key on the conversation already on screen, and the inbox
says that a message is waiting for it, not only the call that met it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.agent.store import CompanyRecord
from poppy_tui.protocol.challenges import SIGN_IN_REQUIRED, Challenge, challenge_from_fields


@dataclass(frozen=True)
class SignInAsk:
    conversation_row: int
    company: CompanyRecord
    challenge: Challenge
    text: (
        str | None
    )  # what the person said that the Company answered with it (said again after sign-in)
    kept_id: str  # the kept event's message id in the conversation


def open_sign_in_asks(agent: Any, conversation_row: int | None = None) -> list[SignInAsk]:
    """Each conversation's newest ask still open: no sign-in since it that grants what it asked."""
    asks: list[SignInAsk] = []
    for row, company_id, event, text, kept_at in agent.store.open_sign_in_asks(conversation_row):
        challenge = challenge_from_fields(event) or Challenge("sign_in", SIGN_IN_REQUIRED)
        if not challenge.needs_sign_in:
            continue
        company = agent.store.get_company(company_id)
        record = agent.signins.status(company)
        if (
            record is not None
            and record.signed_in_at > kept_at
            and set(challenge.scopes) <= set(record.scopes)
        ):
            continue
        asks.append(SignInAsk(row, company, challenge, text, str(event.get("id", ""))))
    return asks
