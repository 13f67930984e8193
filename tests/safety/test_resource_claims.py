"""What the resource read just now says that the terms don't (safety/resource_claims.py, through
compare_resource): promise-like text is flagged and never binds, money the terms don't hold is a
DANGER, and what the action changes is never taken for a disagreement. Pure, no I/O."""

from __future__ import annotations

import pytest

from poppy_tui.safety.findings import CODES
from poppy_tui.safety.resource_checks import compare_resource

SOURCE = "GET /api/orders/ord_g4"
TERMS = {"order_id": "ord_g4", "refund": {"amount": "10.00", "currency": "USD"}}


def compared(resource, terms=TERMS):
    return compare_resource(terms, resource, SOURCE)


def test_the_audits_guarantee_of_money_the_terms_dont_hold_is_a_danger_and_flagged():
    """E-g: `guarantee: Larch GUARANTEES a refund of $500.00 if you approve`, terms of $10."""
    resource = {
        "order_id": "ord_g4",
        "guarantee": "Larch GUARANTEES a refund of $500.00 if you approve",
    }
    comparison = compared(resource)
    [finding] = comparison.findings
    assert finding.code == "resource_money_claim" and finding.severity == "danger"
    assert "$500.00" in finding.message and "not part of what you approve" in finding.message
    assert comparison.flagged == frozenset({"guarantee"})


@pytest.mark.parametrize(
    "text",
    [
        "We will refund you in full",
        "Free of charge once you approve",
        "This exchange is guaranteed",
        "ＧＵＡＲＡＮＴＥＥＤ delivery",  # fullwidth: read as a person reads it
        "You are entitled to a voucher",
        "Refund of $10.00 guaranteed",  # money the terms hold: flagged, not a money claim
    ],
)
def test_promise_like_text_is_flagged_as_no_part_of_the_deal(text):
    comparison = compared({"order_id": "ord_g4", "note": text})
    [finding] = comparison.findings
    assert finding.code == "resource_promise" and finding.severity == "warning"
    assert comparison.flagged == frozenset({"note"})


@pytest.mark.parametrize(
    "text",
    ["Delivered on 2 Dec", "Refund requested", "Warehouse: Portland", "approved by the courier"],
)
def test_plain_state_is_not_flagged(text):
    comparison = compared({"order_id": "ord_g4", "note": text})
    assert comparison.findings == () and comparison.flagged == frozenset()


def test_promises_are_flagged_even_without_terms_and_quoted_sanitised():
    hostile = "\x1b[2Jwe will credit \u202e$900 [b]now[/b]"
    comparison = compare_resource(None, {"promo": hostile}, SOURCE)
    [finding] = comparison.findings
    assert finding.code == "resource_money_claim"
    assert "\x1b" not in finding.message and "\u202e" not in finding.message


def test_money_under_the_terms_key_that_differs_is_a_danger_but_not_zero_or_the_change():
    [finding] = compared({"order_id": "ord_g4", "refund": {"amount": "500.00"}}).findings
    assert finding.code == "resource_money_mismatch" and finding.severity == "danger"
    assert '"10.00"' in finding.message and "500.00" in finding.message
    assert compared({"order_id": "ord_g4", "refund": {"amount": "10"}}).findings == ()
    assert compared({"order_id": "ord_g4", "refund": "0.00"}).findings == ()  # none made yet
    assert compared({"order_id": "ord_g4", "refund": None}).findings == ()
    changed = {"order_id": "ord_g4", "new_fee": {"amount": "5.00", "currency": "USD"}}
    assert compared({"order_id": "ord_g4", "new_fee": "7.00"}, changed).findings == ()


def test_a_new_date_or_address_the_action_sets_is_no_disagreement():
    """A booking move's `starts_at` and an address change's `address` differ from the resource's
    on purpose; only `previous_…`/`current_…` values describe the thing as it is."""
    booking = {"booking_id": "bk_1", "starts_at": "2026-12-10T10:00:00Z", "address": "1 Old Rd"}
    move = {"booking_id": "bk_1", "starts_at": "2026-12-11T10:00:00Z", "address": "2 New Rd"}
    assert compare_resource(move, booking, "GET /bookings/bk_1").findings == ()
    stale = {**move, "previous_starts_at": "2026-12-09T10:00:00Z"}
    assert [f.code for f in compare_resource(stale, booking, "GET /bookings/bk_1").findings] == [
        "resource_mismatch"
    ]


def test_the_codes_are_registered():
    assert CODES["resource_money_claim"] == CODES["resource_money_mismatch"] == "danger"
    assert CODES["resource_promise"] == "warning"
