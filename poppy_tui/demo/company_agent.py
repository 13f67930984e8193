"""The scripted Company Agent of the demo's conversations, and the words it says.

It understands a handful of requests (exchange the Stormline jacket, a different size, cancel
the coffee subscription, move the fitting, order status). When it would perform an action it
proposes an operation in `extensions.operations.operation`; it performs only on a message
carrying `extensions.operations.approval` that passes the checks, and says how it went in a
later message with `data: {"operation_id": ..., "status": "performed"}`. A message's text never
approves anything.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from typing import Any

from poppy_tui.demo.accounts.guard import Caller, Challenge
from poppy_tui.demo.accounts.users import ACTION_NEEDS, READ_NEEDS
from poppy_tui.demo.context import CompanyContext
from poppy_tui.demo.conversation_events import Conversation, Reply
from poppy_tui.demo.operations import AsIfNoApproval, InProgress, Perform, Renew, Replay
from poppy_tui.demo.shop import (
    STORE_TZ,
    Action,
    Item,
    Proposal,
    ShopError,
    local_rfc3339,
    local_text,
)
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.timestamps import utcnow


_APPROVAL_WORDS = re.compile(
    r"\b(approve[ds]?|approval|yes|yep|yeah|do it|go ahead|confirm(?:ed|s)?|ok(?:ay)?|sure|agreed?|accept(?:ed)?)\b"
)
_SIZE_RE = re.compile(r"\bsize\s*\(?(s|m|l|xl)\)?(?![a-z])|\((s|m|l|xl)\)|\b(small|medium|large)\b")
_SIZE_WORDS = {"small": "s", "medium": "m", "large": "l"}
_EXCHANGE_RE = re.compile(r"\b(exchange|swap|switch|trade|replace)\b|\binsulated\b")
_JACKET_RE = re.compile(r"\b(jacket|stormline|coat|it)\b")
_CANCEL_RE = re.compile(r"\b(cancel|stop|end|unsubscribe)\b")
_SUB_RE = re.compile(r"\b(coffee|subscription|club|membership)\b")
_MOVE_RE = re.compile(r"\b(move|change|reschedule|push|shift|rebook)\b")
_BOOKING_RE = re.compile(r"\b(fitting|appointment|booking)\b")
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_DAY_RE = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow)\b")
_TIME_RE = re.compile(r"\b(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b|\bat\s+(\d{1,2}):(\d{2})\b")
_STATUS_RE = re.compile(r"\b(orders?|status|where|track|delivered|shipped)\b")

_WHAT = {
    "exchange": "exchange your jacket",
    "cancel_subscription": "cancel your subscription",
    "change_booking": "move your fitting",
}

HELP = (
    "I'm the Manzanita Outfitters assistant. I can exchange your Stormline jacket (for example for the insulated one, "
    "or another size), cancel your Trailhead Coffee Club subscription, move your fitting appointment, "
    "or tell you about your orders."
)


def _size_in(text: str) -> str | None:
    match = _SIZE_RE.search(text)
    if not match:
        return None
    raw = next(g for g in match.groups() if g)
    return _SIZE_WORDS.get(raw, raw)


def _challenge_reply(challenge: Challenge) -> Reply:
    return Reply(
        f"{challenge.description} Your agent can start the sign-in; then ask me again.",
        challenge=challenge,
    )


class CompanyAgent:
    def __init__(self, ctx: CompanyContext) -> None:
        self.ctx = ctx

    async def respond(
        self,
        conv: Conversation,
        message: dict[str, Any],
        approval: Approval | None,
        caller: Caller,
        uses_ext: bool,
    ) -> tuple[list[Reply], bool]:
        """The Company Agent's replies to one message, and whether it performed an operation."""
        if approval is not None:
            handled = await self._approval(conv, approval, caller)
            if handled is not None:
                return handled
        try:
            return self._text(conv, (message.get("text") or "").lower(), caller, uses_ext), False
        except Challenge as challenge:
            return [_challenge_reply(challenge)], False

    # -- approvals --

    async def _approval(
        self, conv: Conversation, approval: Approval, caller: Caller
    ) -> tuple[list[Reply], bool] | None:
        desk = self.ctx.desk
        op_id = approval.operation_id
        known = conv.pending.get(op_id)
        if known is None:
            issued = desk.issued(approval.revision)
            known = issued.action if issued is not None and issued.operation_id == op_id else None
        if known is not None:
            # Token checks before the extension's (Ops 6): an account's operation approved
            # signed out gets a challenge, never a silent "as if no approval".
            try:
                self.ctx.require(caller, ACTION_NEEDS[known.kind], _WHAT[known.kind])
            except Challenge as challenge:
                return [_challenge_reply(challenge)], False

        def compute() -> Proposal:
            action = conv.pending.get(op_id)
            if action is None:
                issued = desk.issued(approval.revision)
                action = (
                    issued.action if issued is not None and issued.operation_id == op_id else None
                )
            if action is None:
                raise ShopError(
                    404, "operation_not_found", f"I don't have an operation {op_id} for you."
                )
            return self.ctx.shop.propose(action)

        try:
            decision = desk.evaluate(
                approval,
                caller.owner,
                conv.channel,
                compute,
                current_revision=conv.latest.get(op_id),
            )
        except ShopError as exc:
            return [
                Reply(
                    f"I haven't done anything: {exc.description}",
                    data={"operation_id": op_id, "status": "not_performed", "error": exc.code},
                )
            ], False
        if isinstance(decision, AsIfNoApproval):
            return None
        if isinstance(decision, Replay):
            outcome = decision.record.outcome
            assert outcome is not None
            return [
                Reply(
                    f"That's already done. {outcome.text}",
                    data=_performed_data(op_id, outcome.result),
                )
            ], False
        if isinstance(decision, InProgress):
            return [
                Reply(
                    "I'm already on it; I'll tell you here when it's done.",
                    data={"operation_id": op_id, "status": "performing"},
                )
            ], False
        if isinstance(decision, Renew):
            operation = self._propose(conv, decision.proposal, caller, avoid=approval.revision)
            text = (
                f"I haven't done anything: {decision.reason}. Here are the terms as they stand now; "
                "I'll go ahead once you approve them."
            )
            return [Reply(text, operation=operation)], False
        assert isinstance(decision, Perform)
        try:
            outcome = await desk.perform(decision)
        except ShopError as exc:
            return [
                Reply(
                    f"I couldn't do it: {exc.description}",
                    data={"operation_id": op_id, "status": "failed", "error": exc.code},
                )
            ], False
        conv.pending.pop(op_id, None)
        conv.latest.pop(op_id, None)
        return [Reply(outcome.text, data=_performed_data(op_id, outcome.result))], True

    def _propose(
        self, conv: Conversation, proposal: Proposal, caller: Caller, avoid: str | None = None
    ) -> dict[str, Any]:
        operation = self.ctx.desk.issue(proposal, caller.owner, conv.channel, avoid=avoid)
        conv.pending[proposal.operation_id] = proposal.action
        conv.latest[proposal.operation_id] = operation["revision"]
        if proposal.action.kind == "exchange":
            conv.exchange_op = proposal.operation_id
        return operation

    # -- text --

    def _text(self, conv: Conversation, text: str, session: Caller, uses_ext: bool) -> list[Reply]:
        size = _size_in(text)
        day = _DAY_RE.search(text)
        if _APPROVAL_WORDS.search(text) and not size and not day:
            if conv.pending:
                return [
                    Reply(
                        "I can't take a message as approval, so I haven't done anything. I'll go ahead once your agent "
                        "sends the approval of the terms I proposed."
                    )
                ]
            return [Reply("There's nothing waiting for your approval right now. " + HELP)]
        if _CANCEL_RE.search(text) and _SUB_RE.search(text):
            return self._offer(
                conv,
                Action.of("cancel_subscription", subscription_id="sub_6Tc1"),
                session,
                uses_ext,
                "",
            )
        if _MOVE_RE.search(text) and _BOOKING_RE.search(text) or (day and _BOOKING_RE.search(text)):
            return self._booking(conv, text, session, uses_ext)
        if (
            _EXCHANGE_RE.search(text)
            and (_JACKET_RE.search(text) or size)
            or (size and conv.exchange_op)
        ):
            return self._exchange(conv, text, size, session, uses_ext)
        if _STATUS_RE.search(text):
            self.ctx.require(session, READ_NEEDS, "see your orders")
            return [self._orders_reply()]
        return [Reply(HELP)]

    def _offer(
        self, conv: Conversation, action: Action, session: Caller, uses_ext: bool, lead: str
    ) -> list[Reply]:
        self.ctx.require(session, ACTION_NEEDS[action.kind], _WHAT[action.kind])
        shop = self.ctx.shop
        try:
            with shop.lock:
                proposal = shop.propose(action)
        except ShopError as exc:
            return [Reply(f"{lead}I can't do that: {exc.description}")]
        if not uses_ext:
            # Spec 2: no operations for a request that doesn't declare the extension.
            return [
                Reply(
                    f"{lead}I can {proposal.short}. I need your approval first, and your agent hasn't said it can handle "
                    "approvals (the operations extension), so please approve it on our website."
                )
            ]
        revised = proposal.operation_id in conv.pending
        operation = self._propose(conv, proposal, session)
        then = (
            "I'll do it once you approve this new version."
            if revised
            else "I'll do it once you approve."
        )
        return [Reply(f"{lead}I can {proposal.short}. {then}", operation=operation)]

    def _exchange(
        self, conv: Conversation, text: str, size: str | None, session: Caller, uses_ext: bool
    ) -> list[Reply]:
        shop = self.ctx.shop
        with shop.lock:
            found = self._jacket()
            if found is None:
                return [
                    Reply(
                        "Your Stormline jacket was already exchanged, so there's nothing left to exchange. "
                        + self._orders_reply().text
                    )
                ]
            order_id, item = found
            previous = conv.pending.get(conv.exchange_op) if conv.exchange_op else None
            previous_sku = previous.args["replacement_sku"] if previous else None
        insulated = "insulated" in text or (
            previous_sku is not None and "insulated" in previous_sku and "not insulated" not in text
        )
        current_size = item.sku.rsplit("-", 1)[1]
        if size in ("s", "xl"):
            return [Reply("The Stormline comes in M and L only. Which would you like?")]
        if size is None:
            size = previous_sku.rsplit("-", 1)[1] if previous_sku else current_size
        if not insulated and size == current_size:
            return [
                Reply(
                    f"What would you like instead of your {item.name}? The Stormline Insulated Jacket is $199.00 in M "
                    "and $209.00 in L, and the Stormline also comes in L."
                )
            ]
        sku = f"stormline-insulated-{size}" if insulated else f"stormline-{size}"
        lead = (
            f"Sure, size {size.upper()} instead. " if previous_sku and sku != previous_sku else ""
        )
        return self._offer(
            conv,
            Action.of("exchange", order_id=order_id, item_id=item.item_id, replacement_sku=sku),
            session,
            uses_ext,
            lead,
        )

    def _jacket(self) -> tuple[str, Item] | None:
        for order in self.ctx.shop.orders.values():
            for item in order.items:
                if (
                    item.category == "jackets"
                    and item.status == "delivered"
                    and item.replaces is None
                ):
                    return order.order_id, item
        return None

    def _booking(
        self, conv: Conversation, text: str, session: Caller, uses_ext: bool
    ) -> list[Reply]:
        shop = self.ctx.shop
        with shop.lock:
            booking = shop.bookings["bkg_2Fm8"]
            current = booking.starts_at.astimezone(STORE_TZ)
        today = utcnow().astimezone(STORE_TZ).date()
        day = _DAY_RE.search(text)
        hour_minute = _time_in(text)
        if day is None and hour_minute is None:
            return [
                Reply(
                    f"Your fitting is on {local_text(current)}. Which day and time would you like instead?"
                )
            ]
        if day is None:
            date = current.date()
        elif day.group(1) == "tomorrow":
            date = today + timedelta(days=1)
        else:
            ahead = (_DAYS.index(day.group(1)) - today.weekday()) % 7 or 7
            date = today + timedelta(days=ahead)
        hour, minute = hour_minute or (current.hour, current.minute)
        when = datetime.combine(date, time(hour, minute), tzinfo=STORE_TZ)
        action = Action.of(
            "change_booking", booking_id=booking.booking_id, starts_at=local_rfc3339(when)
        )
        return self._offer(conv, action, session, uses_ext, "")

    def _orders_reply(self) -> Reply:
        shop = self.ctx.shop
        with shop.lock:
            lines = []
            for order in shop.orders.values():
                items = ", ".join(f"{i.name} ({i.status})" for i in order.items)
                lines.append(f"{order.order_id}: {items}")
            orders = [o.to_json() for o in shop.orders.values()]
        return Reply("Your orders: " + "; ".join(lines) + ".", data={"orders": orders})


def _time_in(text: str) -> tuple[int, int] | None:
    match = _TIME_RE.search(text)
    if not match:
        return None
    if match.group(1):
        hour, minute, half = int(match.group(1)), int(match.group(2) or 0), match.group(3)
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    else:
        hour, minute = int(match.group(4)), int(match.group(5))
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def _performed_data(operation_id: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"operation_id": operation_id, "status": "performed", "result": result}
