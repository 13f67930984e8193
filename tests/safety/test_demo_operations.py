"""The demo Company's honest operations raise no finding (#11.8).

Everything is read through the protocol, over loopback HTTP: the catalogue from
the demo's own API, each operation from its `approval_required` answer, parsed
by the agent's own parser. Nothing is imported from the demo's shop internals,
so this checks what a Personal Agent would actually see.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterator

import httpx
import pytest

from poppy_tui.demo.testing import AgentSession, company
from poppy_tui.protocol.operation import Operation, parse_operation
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.safety.discrepancies import check_operation, key_amount


def _requests(http: httpx.Client, agent: AgentSession) -> list[tuple[str, dict[str, Any]]]:
    """Every action the demo offers: each delivered item against each other product
    of its category, each subscription cancelled, each booking moved a day later."""

    def get(path: str) -> Any:
        response = http.get(path, headers=agent.headers())
        assert response.status_code == 200, response.text
        return response.json()

    products = get("/api/products")["products"]
    category = {p["sku"]: p["category"] for p in products}
    found: list[tuple[str, dict[str, Any]]] = []
    for order in get("/api/orders")["orders"]:
        for item in order["items"]:
            if item["status"] != "delivered":
                continue
            for product in products:
                if product["category"] == category[item["sku"]] and product["sku"] != item["sku"]:
                    body = {"item_id": item["item_id"], "replacement_sku": product["sku"]}
                    found.append((f"/api/orders/{order['order_id']}/exchanges", body))
    for subscription in get("/api/subscriptions")["subscriptions"]:
        found.append((f"/api/subscriptions/{subscription['subscription_id']}/cancel", {}))
    for booking in get("/api/bookings")["bookings"]:
        later = (datetime.fromisoformat(booking["starts_at"]) + timedelta(days=1)).isoformat()
        found.append((f"/api/bookings/{booking['booking_id']}/change", {"starts_at": later}))
    return found


@pytest.fixture(scope="module")
def demo_operations() -> Iterator[list[tuple[ApiRequest, Operation]]]:
    with company() as shop:
        agent = AgentSession.at(shop)
        with httpx.Client(base_url=shop.base_url, timeout=10) as http:
            operations = []
            for path, body in _requests(http, agent):
                response = http.post(path, json=body, headers=agent.headers())
                assert response.status_code == 403, response.text
                operation = parse_operation(response.json()["operation"])
                operations.append((ApiRequest("POST", shop.base_url + path, body), operation))
        yield operations


def test_every_kind_of_demo_operation_is_covered(demo_operations):
    prefixes = {operation.operation_id.split("_")[0] for _, operation in demo_operations}
    assert {"exc", "cnl", "bkc"} <= prefixes
    summaries = " ".join(operation.summary for _, operation in demo_operations)
    assert "at no extra cost" in summaries and "more, charged" in summaries and "isn't refunded" in summaries


def test_honest_demo_operations_have_no_findings(demo_operations):
    for request, operation in demo_operations:
        findings = check_operation(operation, request)
        assert findings == [], (operation.summary, operation.terms, [f.message for f in findings])


def test_the_amount_shown_is_what_the_person_pays(demo_operations):
    by_kind: dict[str, list[str | None]] = {}
    for _, operation in demo_operations:
        by_kind.setdefault(operation.operation_id.split("_")[0], []).append(key_amount(operation))
    assert by_kind["cnl"] == [None]  # cancelling charges nothing: the plan's price is not an amount to pay
    assert by_kind["bkc"] == ["USD 10.00"]  # the change fee
    assert "USD 70.00" in by_kind["exc"] and "USD 0.00" in by_kind["exc"]
