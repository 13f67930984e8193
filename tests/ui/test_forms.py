"""From OpenAPI and MCP schemas to composer forms, and from typed values to requests."""

from __future__ import annotations

import pytest

from poppy_tui.demo.api import openapi_document
from poppy_tui.ui.format import countdown
from poppy_tui.ui.schema_forms import FormError, api_actions, build_request, tool_actions

TOOLS = [
    {
        "name": "exchange_item",
        "description": "Exchange an item. Needs the user's approval.",
        "inputSchema": {
            "type": "object",
            "required": ["order_id", "quantity"],
            "properties": {
                "order_id": {"type": "string"},
                "quantity": {"type": "integer"},
                "gift": {"type": "boolean"},
                "size": {"enum": ["m", "l"]},
                "notes": {"type": "array"},
            },
        },
    },
    {"name": "list_orders", "inputSchema": {"type": "object", "properties": {}}},
]


def test_the_demo_openapi_becomes_forms_with_path_params_and_body_fields():
    actions = {a.label: a for a in api_actions(openapi_document("http://127.0.0.1:9"))}
    exchange = actions["POST /api/orders/{order_id}/exchanges"]
    assert exchange.needs_approval and exchange.has_body
    assert [(f.location, f.name, f.required) for f in exchange.fields] == [
        ("path", "order_id", True),
        ("body", "item_id", True),
        ("body", "replacement_sku", True),
    ]
    assert exchange.fields[1].example == "itm_4Qa"  # from the $ref'd ExchangeRequest schema
    assert not actions["GET /api/orders"].has_body


def test_build_api_request_fills_and_quotes_the_path():
    [exchange] = [a for a in api_actions(openapi_document("http://x")) if a.name == "exchangeItem"]
    built = build_request(
        exchange,
        {
            "path:order_id": "ord/7 ?",
            "body:item_id": "itm_4Qa",
            "body:replacement_sku": "stormline-insulated-m",
        },
    )
    assert built.path == "/api/orders/ord%2F7%20%3F/exchanges"
    assert built.body == {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}
    with pytest.raises(FormError, match="item_id is required"):
        build_request(exchange, {"path:order_id": "ord_1", "body:replacement_sku": "x"})


def test_tool_arguments_are_typed_from_the_schema():
    exchange, list_orders = tool_actions(TOOLS)
    assert exchange.needs_approval and not list_orders.fields
    built = build_request(
        exchange,
        {
            "argument:order_id": "ord_1",
            "argument:quantity": "2",
            "argument:gift": True,
            "argument:size": "l",
            "argument:notes": '["a"]',
        },
    )
    assert built.arguments == {
        "order_id": "ord_1",
        "quantity": 2,
        "gift": True,
        "size": "l",
        "notes": ["a"],
    }
    with pytest.raises(FormError, match="quantity"):
        build_request(exchange, {"argument:order_id": "ord_1", "argument:quantity": "two"})
    assert build_request(list_orders, {}).arguments == {}


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-1, "expired"),
        (0, "expired"),
        (5.9, "5s"),
        (65, "1m 05s"),
        (3600 * 2 + 180, "2h 03m"),
        (86400 * 3 + 3600 * 4, "3d 04h"),
    ],
)
def test_countdown(seconds, shown):
    assert countdown(seconds) == shown


def test_a_tool_without_a_title_is_listed_by_its_description():
    described = {
        "name": "get_order",
        "description": "Get one order.\nWith items.",
        "inputSchema": {"type": "object"},
    }
    titled = {
        "name": "x",
        "title": "Find X",
        "description": "Long words",
        "inputSchema": {"type": "object"},
    }
    bare = {"name": "ping", "inputSchema": {"type": "object"}}
    assert [a.title for a in tool_actions([described, titled, bare])] == [
        "Get one order.",
        "Find X",
        "ping",
    ]
