"""An account's operation is approved only with a token of that account (Ops 3, "Who can approve
it": any Session of the same agent and User, *while signed in to the same account*).

send_for_its_account wraps the send of an approval. Unless the sign-in at the operation's
Company now is shown to be the operation's account (agent/store/owning_account.py: by name, or
the very sign-in it came with, or one the person said is it), nothing is sent: the answer is a
NotSent Exchange with the one line that says why and what to do, which the dispatcher keeps
waiting as for sign-in (`Exchange.other_account` set). Held are:
- another account, by name: sent once signed in as the operation's own;
- a sign-in not shown to be its account (Device or Direct Sign-In with nothing that names the
  account, signed in again since): sent once the person says in the review that it is
  (OwningAccountStore.confirm_account) or signs in as a named one.
The check is made as the send starts, and again where the token is read (Sessions.access_token,
through approval_for_account: the sign-in cleared), so a sign-in that lands in between, in this
process or another, never carries the approval either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from poppy_tui.agent.sessions import SignInChanged, approval_for_account
from poppy_tui.agent.store.owning_account import AccountStanding, account_standing_now
from poppy_tui.agent.transports import Exchange
from poppy_tui.protocol.outcomes import NotSent
from poppy_tui.safety.account_owner import account_wait

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRecord, Store

# How many times a send is tried again when the sign-in changed between the check and the
# token (a sign-in landing at that very moment): then it is held, and looked at on the next pass.
_LOOKS = 2


def held_for_account(op: OperationRecord, session_id: str, standing: AccountStanding) -> Exchange:
    """Not sent: the one line says whose it is, who is signed in, and what makes it go."""
    detail = account_wait(op.company.name, op.account, standing)
    return Exchange(
        NotSent(detail),
        None,
        {"error": detail},
        session_id,
        detail,
        other_account=standing.current or "",
    )


async def send_for_its_account(
    store: Store, op: OperationRecord, session_id: str, send: Callable[[], Awaitable[Exchange]]
) -> Exchange:
    for _ in range(_LOOKS):
        standing = account_standing_now(store, op)
        if standing is not None and standing.standing in ("other", "unconfirmed"):
            return held_for_account(op, session_id, standing)
        cleared = approval_for_account.set(_cleared(standing))
        try:
            return await send()
        except SignInChanged:
            continue
        finally:
            approval_for_account.reset(cleared)
    # The sign-in kept changing under the send: held, and looked at again on the next pass.
    standing = account_standing_now(store, op) or AccountStanding("unconfirmed")
    if standing.standing not in ("other", "unconfirmed"):
        standing = AccountStanding("unconfirmed", standing.current, standing.sign_in)
    return held_for_account(op, session_id, standing)


def _cleared(standing: AccountStanding | None) -> str | None:
    """The sign-in the approval may go with: the one shown to be its account; "" when none is
    recorded (signed out: a sign-in landing before the token is read must not carry it); None
    for a Session's operation."""
    if standing is None:
        return None
    return standing.sign_in or "" if standing.standing == "same" else ""


def confirm_account(agent: Any, operation_row: int) -> AccountStanding:
    """The person said, in the review, that the sign-in now is this operation's account: kept
    (OwningAccountStore.confirm_account), and a running dispatcher looks again now."""
    standing = agent.store.confirm_account(operation_row)
    if "dispatcher" in vars(agent):  # built already: it sends the held approval at once
        agent.dispatcher.wake()
    return standing
