"""The three interfaces a Company offers (API, MCP, conversations), each behind the same shape.

Every send returns an `Exchange`: the protocol Outcome (what it means) plus what we keep of the
wire answer (for the store). Transports never raise for a Company's answer or a network
failure; they raise only for our own mistakes (a request that can't be built).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.protocol.challenges import Challenge
from poppy_tui.protocol.outcomes import Outcome


@dataclass(frozen=True)
class Exchange:
    outcome: Outcome
    status: int | None  # HTTP status where there is one
    response: Any  # JSON-able record of the answer, kept in the store
    session_id: str  # the Session the (last) request went out in
    detail: str = ""
    session_error: bool = False  # the Company said invalid_session and it was not retried
    final: bool = (
        False  # an Unknown that resending can't settle (a conversation reply we can't read)
    )
    carrier_text: str | None = None  # text that came with an operation (MCP content, message text)
    challenge: Challenge | None = (
        None  # the Company asked for sign-in, more scopes, or refused our identity
    )
    # Which access token the (last) request carried, as vault.token_fingerprint (never the token
    # itself), None when it went signed out. A 401 invalid_token refuses this token, not whichever
    # the agent holds when the answer arrives: a refresh may have replaced it meanwhile.
    token_fingerprint: str | None = None

    # The account that token was for, where the sign-in named it (sign_ins.account), read as the
    # request was sent: an operation it returned belongs to that account (Ops 3). None: unknown.
    account: str | None = None
    # An approval not sent because the sign-in at the Company is not shown to be the operation's
    # account (agent/account_hold.py): that sign-in's account name, "" when it names none. It
    # waits, as for sign-in, until signed in as the owner or the person says it is.
    other_account: str | None = None

    @property
    def signed_in(self) -> bool:
        """The request carried an access token: an operation it returned is the account's."""
        return self.token_fingerprint is not None


def carried(token: str | None) -> str | None:
    """The fingerprint of the access token a request is about to carry, or None signed out. Read
    where the token is read for the send, so the answer names the token it actually met."""
    if token is None:
        return None
    # Loaded when someone is signed in only: most requests go signed out.
    from poppy_tui.agent.signin.vault import token_fingerprint

    return token_fingerprint(token)


def outcome_name(outcome: Outcome) -> str:
    """The attempt-row spelling of an outcome."""
    from poppy_tui.protocol import outcomes as o

    return {
        o.Performed: "performed",
        o.ApprovalRequired: "approval_required",
        o.RetryLater: "retry_later",
        o.NotPerformed: "not_performed",
        o.Unknown: "unknown",
        o.NotSent: "not_sent",
        o.BadResponse: "bad_response",
    }[type(outcome)]


__all__ = ["Exchange", "carried", "outcome_name"]
