"""An account's operation is approved only with a token of that account (Ops 3, "Who can approve
it": any Session of the same agent and User, *while signed in to the same account*).

send_for_its_account wraps the send of an approval. When the agent is signed in at the
operation's Company as another known account (agent/store/owning_account.py), nothing is sent:
the answer is a NotSent Exchange naming that account, which the dispatcher keeps waiting for
sign-in as the owner. The check is made as the send starts, and again where the token is read
(Sessions.access_token, through approval_for_account), so a sign-in as someone else that lands
in between, in this process or another, never carries the approval either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Awaitable, Callable

from poppy_tui.agent.sessions import OtherAccountSignedIn, approval_for_account
from poppy_tui.agent.store.owning_account import other_account_now
from poppy_tui.agent.transports import Exchange
from poppy_tui.protocol.outcomes import NotSent
from poppy_tui.safety.account_owner import other_account_wait

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRecord, Store


def held_for_account(op: OperationRecord, session_id: str, elsewhere: str) -> Exchange:
    """Not sent: the one line says whose it is, who is signed in, and that it goes after sign-in."""
    detail = other_account_wait(op.company.name, op.account or "", elsewhere)
    return Exchange(
        NotSent(detail), None, {"error": detail}, session_id, detail, other_account=elsewhere
    )


async def send_for_its_account(
    store: Store, op: OperationRecord, session_id: str, send: Callable[[], Awaitable[Exchange]]
) -> Exchange:
    if op.account_owned and op.account:
        elsewhere = other_account_now(store, op)
        if elsewhere is not None:
            return held_for_account(op, session_id, elsewhere)
    owner = approval_for_account.set(op.account if op.account_owned and op.account else None)
    try:
        return await send()
    except OtherAccountSignedIn as signed_in:
        return held_for_account(op, session_id, signed_in.account)
    finally:
        approval_for_account.reset(owner)
