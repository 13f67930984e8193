"""Pure parts of finding out another way: which GET reads the resource a request acted on, and
how a conversation reply is read (the documented convention)."""

from __future__ import annotations

from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.outcome_probe import (
    next_probe_at,
    resource_url,
)
from poppy_tui.protocol.outcomes import conversation_reply

OPENAPI = {
    "paths": {
        "/api/orders": {"get": {}},
        "/api/orders/{order_id}": {"get": {}, "delete": {}},
        "/api/orders/{order_id}/exchanges": {"post": {}},
        "/api/subscriptions/{subscription_id}/cancel": {"post": {}},
        "/bookings/{booking_id}": {"get": {}},
    }
}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://shop.example/api/orders/ord_7Hk2/exchanges",
            "https://shop.example/api/orders/ord_7Hk2",
        ),
        # The request's own URL is never read, though a GET is declared on it (audit A47).
        ("https://shop.example/api/orders/ord_7Hk2", None),
        (
            "https://shop.example/v2/bookings/bk_1/cancel?x=1",
            "https://shop.example/v2/bookings/bk_1",
        ),
        ("https://shop.example/api/subscriptions/sub_1/cancel", None),  # no GET offered for it
    ],
)
def test_resource_url_is_the_longest_get_on_the_requests_path(url, expected):
    assert resource_url(url, OPENAPI) == expected


@pytest.mark.parametrize(
    "document", [None, {}, {"paths": []}, {"paths": {"/x/{id}": "not an object"}}, "text"]
)
def test_resource_url_of_an_unusable_openapi_is_none(document):
    assert resource_url("https://shop.example/x/1", document) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"text": "Done!"}, "words"),
        ({"text": "ok", "data": {"status": "performed"}}, "performed"),
        ({"data": {"status": "performed", "operation_id": "op_1"}}, "performed"),
        ({"data": {"status": "performed", "operation_id": "op_2"}}, "unrelated"),
        ({"data": {"status": "not_performed"}}, "not_performed"),
        ({"data": {"status": "in_progress"}}, "in_progress"),
        ({"data": {"status": "Performed"}}, "words"),
        ({"data": "performed"}, "words"),
        ("not a message", "words"),
    ],
)
def test_conversation_reply_reads_only_the_structured_convention(message, expected):
    assert conversation_reply(message, "op_1") == expected


@pytest.mark.parametrize(
    ("paths", "url", "expected"),
    [
        # A one-segment template would take the base path (or the collection's name) for an ID.
        ({"/{id}": {"get": {}}}, "https://shop.example/api/orders/ord_1/exchanges", None),
        ({"/{id}": {"get": {}}}, "https://shop.example/ord_1", None),
        ({"/{tenant}/{id}": {"get": {}}}, "https://shop.example/api/orders/ord_1/exchanges", None),
        # A collection or a fixed path is never "the resource".
        ({"/api": {"get": {}}}, "https://shop.example/api/orders/ord_1/exchanges", None),
        ({"/api/orders": {"get": {}}}, "https://shop.example/api/orders/ord_1/exchanges", None),
        (
            {"/api/orders/{order_id}/items": {"get": {}}},
            "https://shop.example/api/orders/ord_1/items/it_1/return",
            None,
        ),
        # A dot-segment is not an ID.
        ({"/orders/{order_id}": {"get": {}}}, "https://shop.example/orders/../admin/x", None),
        ({"/orders/{order_id}": {"get": {}}}, "https://shop.example/orders/%2e%2e/x", None),
        # The resource itself, under a base path, with the query dropped, on the request's own origin.
        (
            {"/orders/{order_id}": {"get": {}}},
            "https://shop.example/api/orders/ord_1/exchanges?x=1",
            "https://shop.example/api/orders/ord_1",
        ),
        (
            {"/orders/{order_id}": {"get": {}}, "/{id}": {"get": {}}},
            "https://shop.example:8443/orders/ord_1/cancel",
            "https://shop.example:8443/orders/ord_1",
        ),
    ],
)
def test_resource_url_reads_one_resource_never_a_collection(paths, url, expected):
    assert resource_url(url, {"paths": paths}) == expected


@pytest.mark.parametrize(
    ("paths", "url", "expected"),
    [
        # A catch-all GET template matching the action's own path (the audit's E-g Company).
        (
            {"/api/{kind}/{id}/{verb}": {"get": {}}},
            "https://shop.example/api/orders/ord_g4/returns",
            None,
        ),
        # ... and beside it the resource's own GET, which is read instead.
        (
            {"/api/{kind}/{id}/{verb}": {"get": {}}, "/api/orders/{id}": {"get": {}}},
            "https://shop.example/api/orders/ord_g4/returns",
            "https://shop.example/api/orders/ord_g4",
        ),
        # A trailing slash or a query is the same path: not read either.
        ({"/orders/{id}": {"get": {}}}, "https://shop.example/orders/ord_1/", None),
        ({"/orders/{id}": {"get": {}}}, "https://shop.example/orders/ord_1?x=1", None),
        # Never below it: a template longer than the request's path matches nothing.
        ({"/orders/{id}/{part}": {"get": {}}}, "https://shop.example/orders/ord_1", None),
    ],
)
def test_the_read_is_never_the_requests_own_url_or_below_it(paths, url, expected):
    assert resource_url(url, {"paths": paths}) == expected


# ---- the spacing: 30 s, doubling, at most 10 min, until expires_at ------------------------------

T0 = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)


def _schedule(expires_after: float, looks: int = 12) -> list[float]:
    """Seconds after the outcome became unknown at which each look is due, if every look
    happens exactly when due (the clock is passed in: nothing sleeps)."""
    expires_at = T0 + timedelta(seconds=expires_after)
    due, now = [], T0
    for _ in range(looks):
        at = next_probe_at(T0, now, expires_at)
        if at is None:
            break
        due.append((at - T0).total_seconds())
        now = at
    return due


def test_looks_are_spaced_30_s_doubling_up_to_10_min():
    assert _schedule(10_000, looks=9) == [1, 31, 91, 211, 451, 931, 1531, 2131, 2731]
    gaps = [b - a for a, b in zip(_schedule(10_000), _schedule(10_000)[1:], strict=False)]
    assert gaps[:6] == [30, 60, 120, 240, 480, 600] and set(gaps[5:]) == {600}


def test_looks_stop_at_expires_at():
    assert _schedule(100) == [1, 31, 91, 100]  # the last one when the terms expire, then none
    assert next_probe_at(T0, T0 + timedelta(seconds=100), T0 + timedelta(seconds=100)) is None
    assert next_probe_at(T0, T0 + timedelta(days=1), T0 + timedelta(seconds=100)) is None


def test_a_late_or_early_look_keeps_the_schedule():
    expires_at = T0 + timedelta(days=1)
    # Stopped for an hour: the next look is on the 10-minute grid, not 30 s after waking up.
    late = next_probe_at(T0, T0 + timedelta(seconds=3600), expires_at)
    assert (late - T0).total_seconds() == 3931
    # Looked early (a person's "look now"): the next look is still the scheduled one.
    assert (next_probe_at(T0, T0 + timedelta(seconds=40), expires_at) - T0).total_seconds() == 91
    # A years-long backlog is arithmetic, not a loop of a million steps.
    far = next_probe_at(T0, T0 + timedelta(days=3650), T0 + timedelta(days=4000))
    assert T0 + timedelta(days=3650) < far <= T0 + timedelta(days=3650, seconds=600)


def test_the_api_origins_are_the_company_and_its_openapi_never_its_other_interfaces():
    from poppy_tui.agent.companies import api_origins
    from poppy_tui.agent.store.records import CompanyRecord

    document = {
        "apis": [
            {"type": "openapi", "url": "https://API.shop.example/openapi.json"},
            {"type": "mcp", "url": "https://mcp.shop.example/mcp"},
            {"type": "openapi", "url": 7},
        ],
        "agent": {"protocols": [{"type": "poppy", "endpoint": "https://chat.shop.example/c"}]},
    }
    company = CompanyRecord(
        1, "https://shop.example", "shop.example", "Shop", document, True, "u", "s", "", ""
    )
    assert api_origins(company) == {"https://shop.example", "https://api.shop.example"}
