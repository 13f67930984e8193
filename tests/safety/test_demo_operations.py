"""The demo Company's honest operations raise no finding (everything that affects the action is
in the summary, Ops §3; conformance rows A22, C10).

Everything is read through the protocol, over loopback HTTP: the catalogue from
the demo's own API, each operation from its `approval_required` answer, parsed
by the agent's own parser. Nothing is imported from the demo's shop internals,
so this checks what a Personal Agent would actually see.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from collections.abc import Iterator

import httpx
import pytest

from poppy_tui.demo.testing import AgentSession, company
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.operation import Operation, operation_from_message, parse_operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest
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
    assert (
        "at no extra cost" in summaries
        and "more, charged" in summaries
        and "isn't refunded" in summaries
    )


def test_honest_demo_operations_have_no_findings(demo_operations):
    for request, operation in demo_operations:
        findings = check_operation(operation, request)
        assert findings == [], (operation.summary, operation.terms, [f.message for f in findings])


def test_the_amount_shown_is_what_the_person_pays(demo_operations):
    by_kind: dict[str, list[str | None]] = {}
    for _, operation in demo_operations:
        by_kind.setdefault(operation.operation_id.split("_")[0], []).append(key_amount(operation))
    assert by_kind["cnl"] == [
        None
    ]  # cancelling charges nothing: the plan's price is not an amount to pay
    assert by_kind["bkc"] == ["USD 10.00"]  # the change fee
    assert "USD 70.00" in by_kind["exc"] and "USD 0.00" in by_kind["exc"]


# The same actions asked for in words, through the demo's conversation interface.
CONVERSATION = "/poppy/conversations"
ASKED_IN_WORDS = (
    "Hi! Can I exchange my Stormline jacket for the insulated one?",
    "Can I exchange my rain pants for size L?",
    "Please cancel my coffee subscription",
    "Can you move my fitting to Friday at 3pm?",
)


@pytest.fixture(scope="module")
def conversation_operations() -> Iterator[list[tuple[ConversationRequest, Operation]]]:
    with company() as shop:
        agent = AgentSession.at(shop)
        with httpx.Client(base_url=shop.base_url, timeout=10) as http:
            operations = []
            for text in ASKED_IN_WORDS:
                message = {"id": new_id("msg_"), "author": {"type": "agent"}, "text": text}
                response = http.post(
                    CONVERSATION, json={"message": message}, headers=agent.headers()
                )
                assert response.status_code == 201, response.text
                replies = [
                    e["message"]
                    for e in response.json()["events"]
                    if e["type"] == "message" and e["message"]["role"] == "company"
                ]
                found = [op for op in map(operation_from_message, replies) if op is not None]
                assert len(found) == 1, (text, replies)
                request = ConversationRequest(
                    shop.base_url + CONVERSATION, None, message["id"], text
                )
                operations.append((request, found[0]))
        yield operations


def test_honest_demo_operations_asked_in_words_have_no_warning(conversation_operations):
    """A conversation names no IDs, so an ID the summary describes in words is a note
    (info), never a warning on an honest operation."""
    assert {op.operation_id.split("_")[0] for _, op in conversation_operations} == {
        "exc",
        "cnl",
        "bkc",
    }
    for request, operation in conversation_operations:
        findings = check_operation(operation, request)
        assert [f for f in findings if f.severity != "info"] == [], (
            operation.summary,
            [f.message for f in findings],
        )


def test_honest_demo_operations_agree_with_their_resource_read_now():
    """Each operation's resource, read as poppy-tui reads it before the decision (the GET the
    demo's OpenAPI offers for the request's resource), raises no resource finding."""
    from poppy_tui.protocol.openapi import resource_url
    from poppy_tui.safety.resource_checks import compare_resource

    with company() as shop:
        agent = AgentSession.at(shop)
        with httpx.Client(base_url=shop.base_url, timeout=10) as http:
            document = http.get("/openapi.json").json()
            kinds = set()
            for path, body in _requests(http, agent):
                response = http.post(path, json=body, headers=agent.headers())
                assert response.status_code == 403, response.text
                operation = parse_operation(response.json()["operation"])
                url = resource_url(shop.base_url + path, document)
                assert url is not None and url != shop.base_url + path, path
                read = http.get(url, headers=agent.headers())
                assert read.status_code == 200, read.text
                comparison = compare_resource(operation.terms, read.json(), f"GET {url}")
                assert comparison.findings == (), (
                    operation.summary,
                    [f.message for f in comparison.findings],
                )
                assert comparison.named, (operation.terms, read.json())  # something was compared
                kinds.add(operation.operation_id.split("_")[0])
            assert kinds == {"exc", "cnl", "bkc"}
