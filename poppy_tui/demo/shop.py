"""Manzanita Outfitters' shop: catalog, orders, a subscription and a booking.

The shop knows nothing about operations or approvals. It answers two questions
for an action that needs approval: what exactly would happen (`propose`), and
do it (`perform`). Everything else (who may approve, revisions, at most once)
is in operations.py. All methods expect the caller to hold `shop.lock`.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any
from collections.abc import Mapping

from poppy_tui.demo.shop_records import (
    BOOKING_CHANGE_FEE,
    CARD,
    CLOSING_HOUR,
    CURRENCY,
    FITTING_LOCATION,
    OPENING_HOUR,
    RETURN_DAYS,
    SPEC_EXCHANGE,
    SPEC_EXCHANGE_OPERATION_ID,
    STORE_NAME,
    STORE_TZ,
    Action,
    Booking,
    Item,
    Order,
    Outcome,
    Product,
    Proposal,
    ShopError,
    Subscription,
    catalog,
    local_rfc3339,
    local_text,
    money,
    usd,
)
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.timestamps import format_rfc3339, parse_rfc3339, utcnow

__all__ = [
    "BOOKING_CHANGE_FEE",
    "CARD",
    "CLOSING_HOUR",
    "CURRENCY",
    "FITTING_LOCATION",
    "OPENING_HOUR",
    "RETURN_DAYS",
    "SPEC_EXCHANGE",
    "SPEC_EXCHANGE_OPERATION_ID",
    "STORE_NAME",
    "STORE_TZ",
    "Action",
    "Booking",
    "Item",
    "Order",
    "Outcome",
    "Product",
    "Proposal",
    "Shop",
    "ShopError",
    "Subscription",
    "local_rfc3339",
    "local_text",
    "money",
    "usd",
]


class Shop:
    def __init__(self, now: datetime | None = None) -> None:
        self.lock = threading.RLock()
        self.perform_counts: Counter[str] = Counter()
        self._operation_ids: dict[tuple[str, ...], str] = {
            SPEC_EXCHANGE: SPEC_EXCHANGE_OPERATION_ID
        }
        now = now or utcnow()
        self.products = {p.sku: p for p in catalog()}
        self.orders = {o.order_id: o for o in self._orders(now)}
        self.subscriptions = {s.subscription_id: s for s in [self._subscription(now)]}
        self.bookings = {b.booking_id: b for b in [self._booking(now)]}

    # ----- seeds -------------------------------------------------------------

    def _item(self, item_id: str, sku: str, status: str) -> Item:
        p = self.products[sku]
        return Item(item_id, sku, p.name, p.price, p.category, status)

    def _orders(self, now: datetime) -> list[Order]:
        return [
            Order(
                "ord_7Hk2",
                now - timedelta(days=9),
                "delivered",
                [
                    self._item("itm_4Qa", "stormline-m", "delivered"),
                    self._item("itm_8Wn", "merino-trail-socks-m", "delivered"),
                ],
            ),
            Order(
                "ord_3Pz9",
                now - timedelta(days=2),
                "shipped",
                [self._item("itm_2Lc", "ridgeline-daypack-28", "shipped")],
            ),
            Order(
                "ord_5Mx3",
                now - timedelta(days=40),
                "delivered",
                [self._item("itm_6Rb", "cascade-rain-pants-m", "delivered")],
            ),
        ]

    def _subscription(self, now: datetime) -> Subscription:
        local = now.astimezone(STORE_TZ)
        first_next = (local.replace(day=28) + timedelta(days=4)).replace(
            day=1, hour=0, minute=0, second=0, microsecond=0
        )
        period_end = first_next - timedelta(seconds=1)
        return Subscription(
            "sub_6Tc1",
            "Trailhead Coffee Club",
            Decimal("18.00"),
            "month",
            "active",
            now - timedelta(days=130),
            period_end,
        )

    def _booking(self, now: datetime) -> Booking:
        day = (now.astimezone(STORE_TZ) + timedelta(days=3)).date()
        if (
            day.weekday() == 4
        ):  # never on a Friday, so "move my fitting to Friday" always means a change
            day += timedelta(days=1)
        starts = datetime.combine(day, time(10, 0), tzinfo=STORE_TZ)
        return Booking("bkg_2Fm8", "Jacket fitting", FITTING_LOCATION, starts, 30, "confirmed")

    # ----- reads -------------------------------------------------------------

    def order(self, order_id: str) -> Order:
        order = self.orders.get(order_id)
        if order is None:
            raise ShopError(404, "order_not_found", f"There is no order {order_id}.")
        return order

    def subscription(self, subscription_id: str) -> Subscription:
        sub = self.subscriptions.get(subscription_id)
        if sub is None:
            raise ShopError(
                404, "subscription_not_found", f"There is no subscription {subscription_id}."
            )
        return sub

    def booking(self, booking_id: str) -> Booking:
        booking = self.bookings.get(booking_id)
        if booking is None:
            raise ShopError(404, "booking_not_found", f"There is no booking {booking_id}.")
        return booking

    def search(self, query: str = "") -> list[Product]:
        words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
        found = []
        for p in self.products.values():
            haystack = f"{p.sku} {p.name} {p.category} {p.description}".lower()
            if all(w in haystack for w in words):
                found.append(p)
        return found

    def performed(self, operation_id: str) -> int:
        """How many times the operation was performed (at most once, if all is well)."""
        return self.perform_counts[operation_id]

    # ----- operations ids ----------------------------------------------------

    def operation_id_for(self, key: tuple[str, ...], prefix: str) -> str:
        """One id per action, from the shop's own records, stable across revisions."""
        op_id = self._operation_ids.get(key)
        if op_id is None:
            op_id = self._operation_ids[key] = new_id(prefix, 6)
        return op_id

    # ----- propose -----------------------------------------------------------

    def propose(self, action: Action, now: datetime | None = None) -> Proposal:
        now = now or utcnow()
        args = action.args
        if action.kind == "exchange":
            return self._propose_exchange(
                action, args["order_id"], args["item_id"], args["replacement_sku"]
            )
        if action.kind == "cancel_subscription":
            return self._propose_cancel(action, args["subscription_id"])
        if action.kind == "change_booking":
            return self._propose_booking(action, args["booking_id"], args["starts_at"], now)
        raise ShopError(400, "invalid_request", f"Unknown action {action.kind}.")

    def _propose_exchange(self, action: Action, order_id: str, item_id: str, sku: str) -> Proposal:
        order = self.order(order_id)
        item = order.item(item_id)
        if item is None:
            raise ShopError(404, "item_not_found", f"Order {order_id} has no item {item_id}.")
        if item.status == "exchanged":
            raise ShopError(
                409,
                "already_exchanged",
                f"The {item.name} on order {order_id} was already exchanged.",
                exchange=item.exchange,
            )
        if item.status != "delivered":
            raise ShopError(
                409,
                "item_not_exchangeable",
                f"The {item.name} is {item.status}; it can be exchanged once it is delivered.",
            )
        replacement = self.products.get(sku)
        if replacement is None:
            raise ShopError(404, "product_not_found", f"There is no product with SKU {sku}.")
        if replacement.sku == item.sku:
            raise ShopError(422, "same_product", f"The {item.name} can't be exchanged for itself.")
        if replacement.category != item.category:
            raise ShopError(
                422,
                "not_exchangeable_for",
                f"The {item.name} can be exchanged only for other {item.category}.",
            )
        difference = replacement.price - item.price
        if difference > 0:
            cost, short_cost = (
                f", for {usd(difference)} more, charged to the card used for the order",
                f", for {usd(difference)} more",
            )
        elif difference < 0:
            cost, short_cost = (
                f", for {usd(difference)} less, refunded to the card used for the order",
                f", for {usd(difference)} less",
            )
        else:
            cost = short_cost = ", at no extra cost"
        op_id = self.operation_id_for(("exchange", order_id, item_id), "exc_")
        return Proposal(
            operation_id=op_id,
            action=action,
            terms={
                "order_id": order_id,
                "item_id": item_id,
                "replacement_sku": sku,
                "price_difference": money(difference),
            },
            summary=f"Exchange the {item.name} on order {order_id} for the {replacement.name}{cost}.",
            short=f"exchange the {item.name} for the {replacement.name}{short_cost}",
        )

    def _propose_cancel(self, action: Action, subscription_id: str) -> Proposal:
        sub = self.subscription(subscription_id)
        if sub.status == "cancelled":
            raise ShopError(
                409,
                "already_cancelled",
                f"The {sub.plan} subscription is already cancelled.",
                subscription=sub.to_json(),
            )
        end = sub.current_period_end
        end_day = f"{end.astimezone(STORE_TZ).strftime('%a, %b')} {end.astimezone(STORE_TZ).day}"
        op_id = self.operation_id_for(("cancel_subscription", subscription_id), "cnl_")
        return Proposal(
            operation_id=op_id,
            action=action,
            terms={
                "subscription_id": subscription_id,
                "plan": sub.plan,
                "price": money(sub.price),
                "ends_at": local_rfc3339(end),
                "refund": money(Decimal("0")),
                "member_discount_ends_at": local_rfc3339(end),
            },
            summary=(
                f"Cancel your {sub.plan} subscription ({subscription_id}, {usd(sub.price)} a month). "
                f"This month is paid and isn't refunded: your membership and its 10% member discount end on {end_day}, "
                "and nothing more is charged after that."
            ),
            short=f"cancel the {sub.plan} subscription; it ends on {end_day}, with no refund for this month",
        )

    def _propose_booking(
        self, action: Action, booking_id: str, starts_at: str, now: datetime
    ) -> Proposal:
        booking = self.booking(booking_id)
        if booking.status != "confirmed":
            raise ShopError(409, "booking_not_changeable", f"The booking is {booking.status}.")
        try:
            when = parse_rfc3339(starts_at)
        except ValueError as exc:
            raise ShopError(400, "invalid_request", f"starts_at {exc}.") from None
        local = when.astimezone(STORE_TZ)
        if when == booking.starts_at:
            raise ShopError(
                409,
                "no_change",
                f"Your fitting is already on {local_text(when)}.",
                booking=booking.to_json(),
            )
        if when < now + timedelta(hours=1):
            raise ShopError(422, "slot_unavailable", "Fittings can be booked from one hour ahead.")
        if when > now + timedelta(days=60):
            raise ShopError(422, "slot_unavailable", "Fittings can be booked up to 60 days ahead.")
        end = local + timedelta(minutes=booking.duration_minutes)
        if (
            local.minute not in (0, 30)
            or local.second
            or local.hour < OPENING_HOUR
            or (end.hour, end.minute) > (CLOSING_HOUR, 0)
            or end.date() != local.date()
        ):
            raise ShopError(
                422,
                "slot_unavailable",
                f"Fittings start on the hour or half hour between {OPENING_HOUR}:00 and {CLOSING_HOUR - 1}:30, store time.",
            )
        op_id = self.operation_id_for(("change_booking", booking_id, str(booking.version)), "bkc_")
        return Proposal(
            operation_id=op_id,
            action=action,
            terms={
                "booking_id": booking_id,
                "service": booking.service,
                "previous_starts_at": local_rfc3339(booking.starts_at),
                "starts_at": local_rfc3339(when),
                "change_fee": money(BOOKING_CHANGE_FEE),
            },
            summary=(
                f"Move your {booking.service.lower()} ({booking_id}) at Manzanita Outfitters Portland "
                f"from {local_text(booking.starts_at)} to {local_text(when)} (Pacific time), "
                f"for a {usd(BOOKING_CHANGE_FEE)} change fee charged to the {CARD}."
            ),
            short=f"move your {booking.service.lower()} to {local_text(when)}, for a {usd(BOOKING_CHANGE_FEE)} fee",
        )

    # ----- perform -----------------------------------------------------------

    def reapply(self, action: Action, operation_id: str) -> None:
        """Bring a fresh shop up to date with an operation performed before a restart: the
        same change, under the same operation id, not counted as performed here. An action
        that no longer applies (its slot passed, say) is left out."""
        try:
            proposal = self.propose(action)
        except ShopError:
            return
        for key, value in list(self._operation_ids.items()):
            if value == proposal.operation_id:
                self._operation_ids[key] = operation_id
        try:
            self.perform(
                Proposal(
                    operation_id, proposal.action, proposal.terms, proposal.summary, proposal.short
                )
            )
        except ShopError:
            return
        self.perform_counts[operation_id] -= 1

    def perform(self, proposal: Proposal, now: datetime | None = None) -> Outcome:
        """Do exactly what the proposal says. The caller checked it is still current."""
        now = now or utcnow()
        kind, terms = proposal.action.kind, proposal.terms
        if kind == "exchange":
            outcome = self._perform_exchange(proposal.operation_id, terms, now)
        elif kind == "cancel_subscription":
            outcome = self._perform_cancel(proposal.operation_id, terms, now)
        elif kind == "change_booking":
            outcome = self._perform_booking(proposal.operation_id, terms, now)
        else:
            raise ShopError(400, "invalid_request", f"Unknown action {kind}.")
        self.perform_counts[proposal.operation_id] += 1
        return outcome

    def _perform_exchange(self, op_id: str, terms: Mapping[str, Any], now: datetime) -> Outcome:
        order = self.order(terms["order_id"])
        item = order.item(terms["item_id"])
        assert item is not None
        replacement = self.products[terms["replacement_sku"]]
        difference = Decimal(terms["price_difference"]["amount"])
        new_item = Item(
            new_id("itm_", 4),
            replacement.sku,
            replacement.name,
            replacement.price,
            replacement.category,
            "preparing",
            replaces=item.item_id,
        )
        return_by = (now.astimezone(STORE_TZ) + timedelta(days=RETURN_DAYS)).date()
        exchange_id = new_id("exg_", 6)
        item.status = "exchanged"
        item.exchange = {
            "exchange_id": exchange_id,
            "operation_id": op_id,
            "replacement_item_id": new_item.item_id,
            "replacement_sku": replacement.sku,
            "price_difference": money(difference),
            "performed_at": format_rfc3339(now.replace(microsecond=0)),
            "return_by": return_by.isoformat(),
        }
        order.items.append(new_item)
        if difference:
            order.charges.append(
                {
                    "charge_id": new_id("chg_", 6),
                    "type": "charge" if difference > 0 else "refund",
                    "amount": money(abs(difference)),
                    "description": f"Price difference, exchange of the {item.name} for the {replacement.name}",
                    "operation_id": op_id,
                    "card": CARD,
                    "created_at": format_rfc3339(now.replace(microsecond=0)),
                }
            )
        result = {
            "exchange_id": exchange_id,
            "operation_id": op_id,
            "status": "completed",
            "order_id": order.order_id,
            "item_id": item.item_id,
            "replacement_item_id": new_item.item_id,
            "replacement_sku": replacement.sku,
            "price_difference": money(difference),
            "card": CARD,
            "return_by": return_by.isoformat(),
        }
        if difference > 0:
            money_text = f"{usd(difference)} was charged to the {CARD}."
        elif difference < 0:
            money_text = f"{usd(difference)} was refunded to the {CARD}."
        else:
            money_text = "There was nothing to pay."
        text = (
            f"Done: the {item.name} on order {order.order_id} is exchanged for the {replacement.name} "
            f"(new item {new_item.item_id}). {money_text} Please send the original back by {return_by.strftime('%b')} {return_by.day}."
        )
        return Outcome(201, result, text)

    def _perform_cancel(self, op_id: str, terms: Mapping[str, Any], now: datetime) -> Outcome:
        sub = self.subscription(terms["subscription_id"])
        sub.status = "cancelled"
        sub.cancelled_at = now.replace(microsecond=0)
        sub.ends_at = sub.current_period_end
        result = {**sub.to_json(), "operation_id": op_id}
        end = sub.ends_at.astimezone(STORE_TZ)
        text = f"Done: your {sub.plan} subscription is cancelled. It ends on {end.strftime('%a, %b')} {end.day}, and nothing more will be charged."
        return Outcome(200, result, text)

    def _perform_booking(self, op_id: str, terms: Mapping[str, Any], now: datetime) -> Outcome:
        booking = self.booking(terms["booking_id"])
        previous = booking.starts_at
        booking.starts_at = parse_rfc3339(terms["starts_at"])
        booking.version += 1
        booking.history.append(
            {
                "from": local_rfc3339(previous),
                "to": local_rfc3339(booking.starts_at),
                "operation_id": op_id,
                "changed_at": format_rfc3339(now.replace(microsecond=0)),
            }
        )
        booking.charges.append(
            {
                "charge_id": new_id("chg_", 6),
                "type": "charge",
                "amount": money(BOOKING_CHANGE_FEE),
                "description": "Fitting change fee",
                "operation_id": op_id,
                "card": CARD,
                "created_at": format_rfc3339(now.replace(microsecond=0)),
            }
        )
        result = {**booking.to_json(), "operation_id": op_id}
        text = f"Done: your fitting is now on {local_text(booking.starts_at)} at Manzanita Outfitters Portland. The {usd(BOOKING_CHANGE_FEE)} change fee was charged to the {CARD}."
        return Outcome(200, result, text)
