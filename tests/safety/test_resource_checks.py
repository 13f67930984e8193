"""The terms against the resource as read just now (safety/resource_checks.py): pure, no I/O."""

from __future__ import annotations

import pytest

from poppy_tui.safety.findings import CODES
from poppy_tui.safety.resource_checks import compare_resource

ORDER = {
    "order_id": "ord_7Hk2",
    "status": "delivered",
    "items": [
        {
            "item_id": "itm_4Qa",
            "sku": "stormline-m",
            "price": {"amount": "129.00", "currency": "USD"},
            "status": "delivered",
        },
        {
            "item_id": "itm_8Rb",
            "sku": "trail-pants-m",
            "price": {"amount": "59.00", "currency": "USD"},
            "status": "exchanged",
        },
    ],
}
SOURCE = "GET /api/orders/ord_7Hk2"


def codes(terms, resource, source=SOURCE):
    return [f.code for f in compare_resource(terms, resource, source).findings]


@pytest.mark.parametrize(
    ("terms", "code"),
    [
        ({"order_id": "ord_7Hk2", "item_id": "itm_9Zz"}, "resource_mismatch"),
        ({"order_id": "ord_7Hk2", "item_id": "itm_8Rb"}, "resource_state"),
        (
            {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "price": {"amount": "99.00"}},
            "resource_price_mismatch",
        ),
    ],
    ids=["mismatch", "state", "price"],
)
def test_each_difference_found_is_a_danger_that_holds_the_approval_back(terms, code):
    """What compare_resource finds comes out as a danger (what the review and the confirmation
    count and show first), not merely a code listed as one."""
    found = compare_resource(terms, ORDER, SOURCE).findings
    assert [(f.code, f.severity) for f in found] == [(code, "danger")]
    assert CODES[code] == "danger"  # and docs/safety.md's table says so (safety/findings.py)


def test_an_exchange_of_an_item_the_order_does_not_hold_is_a_danger():
    comparison = compare_resource({"order_id": "ord_7Hk2", "item_id": "itm_9Zz"}, ORDER, SOURCE)
    assert [f.code for f in comparison.findings] == ["resource_mismatch"]
    message = comparison.findings[0].message
    assert (
        "terms.item_id" in message
        and '"itm_9Zz"' in message
        and '"itm_4Qa"' in message
        and SOURCE in message
    )
    assert comparison.findings[0].field == "terms.item_id"
    assert "items[0].item_id" in comparison.named


def test_the_item_the_terms_name_is_compared_not_its_neighbours():
    assert codes({"order_id": "ord_7Hk2", "item_id": "itm_4Qa"}, ORDER) == []
    # the other item was exchanged already: naming it is moot
    found = compare_resource({"order_id": "ord_7Hk2", "item_id": "itm_8Rb"}, ORDER, SOURCE)
    assert [f.code for f in found.findings] == ["resource_state"]
    assert (
        '"exchanged"' in found.findings[0].message
        and "items[1].status" in found.findings[0].message
    )


def test_a_cancelled_resource_makes_the_action_moot():
    subscription = {
        "subscription_id": "sub_6Tc1",
        "status": "Cancelled",
        "price": {"amount": "18.00", "currency": "USD"},
    }
    assert codes({"subscription_id": "sub_6Tc1"}, subscription, "get_subscription") == [
        "resource_state"
    ]
    assert (
        codes(
            {"subscription_id": "sub_6Tc1"},
            {**subscription, "status": "active"},
            "get_subscription",
        )
        == []
    )


def test_a_price_that_differs_from_the_resources_for_the_same_item():
    subscription = {
        "subscription_id": "sub_6Tc1",
        "status": "active",
        "price": {"amount": "18.00", "currency": "USD"},
    }
    terms = {"subscription_id": "sub_6Tc1", "price": {"amount": "12.00", "currency": "USD"}}
    assert codes(terms, subscription) == ["resource_price_mismatch"]
    assert codes({**terms, "price": {"amount": "18", "currency": "USD"}}, subscription) == []
    assert codes({**terms, "price": {"amount": "18.00", "currency": "EUR"}}, subscription) == [
        "resource_price_mismatch"
    ]
    # the item's own price, not the order's
    order_terms = {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "price": "99.00"}
    assert codes(order_terms, ORDER) == ["resource_price_mismatch"]


def test_a_booking_whose_id_or_present_value_differs():
    booking = {
        "id": "bk_2",
        "flight": "TP 123",
        "starts_at": "2026-12-05T10:00:00-08:00",
        "status": "confirmed",
    }
    # the plain `id` of a resource read as a booking answers for `booking_id`
    assert codes({"booking_id": "bk_1"}, booking, "GET /bookings/bk_1") == ["resource_mismatch"]
    assert codes({"booking_id": "bk_2"}, booking, "GET /bookings/bk_2") == []
    # the new start differs on purpose; the previous one must be the booking's now (same instant)
    assert (
        codes(
            {
                "booking_id": "bk_2",
                "previous_starts_at": "2026-12-05T18:00:00Z",
                "starts_at": "2026-12-06T10:00:00-08:00",
            },
            booking,
            "GET /bookings/bk_2",
        )
        == []
    )
    assert codes(
        {"booking_id": "bk_2", "previousStartsAt": "2026-12-04T10:00:00-08:00"},
        booking,
        "GET /bookings/bk_2",
    ) == ["resource_mismatch"]
    assert codes(
        {"booking_id": "bk_2", "flight_number": "TP 999"},
        {**booking, "flight_number": "TP 123"},
        "GET /bookings/bk_2",
    ) == ["resource_mismatch"]


def test_nothing_to_compare_is_no_finding():
    assert codes({"replacement_sku": "x-1"}, ORDER) == []
    assert codes({}, ORDER) == []
    assert codes({"order_id": "ord_7Hk2"}, ["not", "an", "object"]) == []


def test_hostile_values_are_quoted_sanitised():
    evil = {
        "order_id": "ord_7Hk2",
        "items": [{"item_id": "itm_\x1b]52;c;x\x07", "status": "delivered"}],
    }
    comparison = compare_resource(
        {"order_id": "ord_7Hk2", "item_id": "itm_4Qa"}, evil, "GET /api/orders/\x1b[2J"
    )
    message = comparison.findings[0].message
    assert "\x1b" not in message and "\x07" not in message and "\\x1b" in message


def test_hostile_shapes_never_raise():
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    assert isinstance(
        compare_resource({"order_id": "x_1", "price": 3}, deep, SOURCE).findings, tuple
    )
    assert (
        codes({"order_id": "ord_7Hk2"}, {"order_id": None, "status": 5, "price": {"amount": "NaN"}})
        == []
    )


def test_only_the_matching_field_is_named_when_one_matches():
    named = compare_resource({"order_id": "ord_7Hk2", "item_id": "itm_4Qa"}, ORDER, SOURCE).named
    assert "items[0].item_id" in named and "items[1].item_id" not in named and "order_id" in named
    unmatched = compare_resource(
        {"order_id": "ord_7Hk2", "item_id": "itm_9Zz"}, ORDER, SOURCE
    ).named
    assert {"items[0].item_id", "items[1].item_id"} <= unmatched
