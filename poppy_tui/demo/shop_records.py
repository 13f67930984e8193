"""Manzanita Outfitters' records: its catalog, orders, subscription and booking, the actions
that need approval (`Action`, `Proposal`, `Outcome`), its refusals (`ShopError`) and how it
writes money and times. The shop that proposes and performs those actions is shop.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from collections.abc import Mapping

from poppy_tui.protocol.timestamps import format_rfc3339

try:
    from zoneinfo import ZoneInfo

    STORE_TZ: Any = ZoneInfo("America/Los_Angeles")
except (ImportError, KeyError):  # no tz database (ZoneInfoNotFoundError): a fixed offset
    STORE_TZ = timezone(timedelta(hours=-8), "PT")

CURRENCY = "USD"
CARD = "Visa ending 4242"
STORE_NAME = "Manzanita Outfitters"
FITTING_LOCATION = "Manzanita Outfitters Portland, 1221 NW Couch St, Portland, OR"
BOOKING_CHANGE_FEE = Decimal("10.00")
OPENING_HOUR, CLOSING_HOUR = 10, 18
RETURN_DAYS = 14

# The spec's examples name this operation for this exchange; keeping the name
# makes the demo read like the spec.
SPEC_EXCHANGE = ("exchange", "ord_7Hk2", "itm_4Qa")
SPEC_EXCHANGE_OPERATION_ID = "exc_5Rt2"


def money(amount: Decimal) -> dict[str, str]:
    return {"amount": f"{amount.quantize(Decimal('0.01'))}", "currency": CURRENCY}


def usd(amount: Decimal) -> str:
    return f"${abs(amount).quantize(Decimal('0.01')):,}"


def local_text(when: datetime) -> str:
    """e.g. "Fri, Dec 11 at 10:00 AM", in the store's time zone."""
    local = when.astimezone(STORE_TZ)
    hour = local.strftime("%I").lstrip("0")
    return f"{local.strftime('%a, %b')} {local.day} at {hour}:{local.strftime('%M %p')}"


def local_rfc3339(when: datetime) -> str:
    return format_rfc3339(when.astimezone(STORE_TZ).replace(microsecond=0))


class ShopError(Exception):
    """A request the shop refuses; `status` and `code` become the API error."""

    def __init__(self, status: int, code: str, description: str, **extra: Any) -> None:
        super().__init__(description)
        self.status = status
        self.code = code
        self.description = description
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "error_description": self.description, **self.extra}


@dataclass
class Product:
    sku: str
    name: str
    price: Decimal
    category: str
    description: str

    def to_json(self) -> dict[str, Any]:
        return {
            "sku": self.sku,
            "name": self.name,
            "price": money(self.price),
            "category": self.category,
            "description": self.description,
            "in_stock": True,
        }


@dataclass
class Item:
    item_id: str
    sku: str
    name: str
    price: Decimal
    category: str
    status: str  # delivered | shipped | preparing | exchanged
    replaces: str | None = None
    exchange: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "item_id": self.item_id,
            "sku": self.sku,
            "name": self.name,
            "price": money(self.price),
            "quantity": 1,
            "status": self.status,
        }
        if self.replaces:
            data["replaces"] = self.replaces
        if self.exchange:
            data["exchange"] = self.exchange
        return data


@dataclass
class Order:
    order_id: str
    placed_at: datetime
    status: str
    items: list[Item]
    payment_method: str = CARD
    charges: list[dict[str, Any]] = field(default_factory=list)

    def item(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.item_id == item_id), None)

    def to_json(self) -> dict[str, Any]:
        total = sum((i.price for i in self.items if i.replaces is None), Decimal("0"))
        return {
            "order_id": self.order_id,
            "placed_at": format_rfc3339(self.placed_at),
            "status": self.status,
            "items": [i.to_json() for i in self.items],
            "total": money(total),
            "payment_method": self.payment_method,
            "charges": list(self.charges),
        }


@dataclass
class Subscription:
    subscription_id: str
    plan: str
    price: Decimal
    interval: str
    status: str  # active | cancelled
    started_at: datetime
    current_period_end: datetime
    cancelled_at: datetime | None = None
    ends_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "subscription_id": self.subscription_id,
            "plan": self.plan,
            "price": money(self.price),
            "interval": self.interval,
            "status": self.status,
            "started_at": format_rfc3339(self.started_at),
            "current_period_end": local_rfc3339(self.current_period_end),
            "member_discount": "10% off everything in the shop",
        }
        if self.cancelled_at:
            data["cancelled_at"] = format_rfc3339(self.cancelled_at)
        if self.ends_at:
            data["ends_at"] = local_rfc3339(self.ends_at)
        return data


@dataclass
class Booking:
    booking_id: str
    service: str
    location: str
    starts_at: datetime
    duration_minutes: int
    status: str
    version: int = 1
    charges: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "booking_id": self.booking_id,
            "service": self.service,
            "location": self.location,
            "starts_at": local_rfc3339(self.starts_at),
            "duration_minutes": self.duration_minutes,
            "status": self.status,
            "change_fee": money(BOOKING_CHANGE_FEE),
            "charges": list(self.charges),
            "history": list(self.history),
        }


@dataclass(frozen=True)
class Action:
    """An action that needs approval, as asked: kind plus its parameters."""

    kind: str  # exchange | cancel_subscription | change_booking
    params: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, kind: str, **params: str) -> Action:
        return cls(kind, tuple(sorted(params.items())))

    @property
    def args(self) -> dict[str, str]:
        return dict(self.params)


@dataclass(frozen=True)
class Proposal:
    """What the shop would do for an action, now: the content of one revision."""

    operation_id: str
    action: Action
    terms: Mapping[str, Any]
    summary: str
    short: str  # lower-case clause for "This needs the user's approval: <short>."


@dataclass(frozen=True)
class Outcome:
    """What performing did: the response as it would be without operations."""

    status_code: int
    result: dict[str, Any]
    text: str


def catalog() -> list[Product]:
    def p(sku: str, name: str, price: str, category: str, description: str) -> Product:
        return Product(sku, name, Decimal(price), category, description)

    shell = "Waterproof, breathable 3-layer shell with a storm hood."
    insulated = "The Stormline shell with 100 g recycled synthetic insulation, for cold wet days."
    return [
        p("stormline-m", "Stormline Jacket (M)", "129.00", "jackets", shell),
        p("stormline-l", "Stormline Jacket (L)", "129.00", "jackets", shell),
        p(
            "stormline-insulated-m",
            "Stormline Insulated Jacket (M)",
            "199.00",
            "jackets",
            insulated,
        ),
        p(
            "stormline-insulated-l",
            "Stormline Insulated Jacket (L)",
            "209.00",
            "jackets",
            insulated,
        ),
        p(
            "cascade-rain-pants-m",
            "Cascade Rain Pants (M)",
            "79.00",
            "pants",
            "Full-zip waterproof pants.",
        ),
        p(
            "cascade-rain-pants-l",
            "Cascade Rain Pants (L)",
            "79.00",
            "pants",
            "Full-zip waterproof pants.",
        ),
        p(
            "merino-trail-socks-m",
            "Merino Trail Socks (M)",
            "24.00",
            "socks",
            "Cushioned merino wool hiking socks.",
        ),
        p(
            "merino-trail-socks-l",
            "Merino Trail Socks (L)",
            "24.00",
            "socks",
            "Cushioned merino wool hiking socks.",
        ),
        p(
            "ridgeline-daypack-28",
            "Ridgeline Daypack 28L",
            "89.00",
            "packs",
            "A 28-litre daypack with a rain cover.",
        ),
        p(
            "trailhead-coffee-club",
            "Trailhead Coffee Club",
            "18.00",
            "subscriptions",
            "A bag of small-roaster coffee every month; members get 10% off.",
        ),
    ]
