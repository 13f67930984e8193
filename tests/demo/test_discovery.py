"""poppy.json and the OpenAPI document."""

from __future__ import annotations

import httpx
import pytest

from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.extensions import operations_extension_entry


def test_poppy_json_describes_the_company_as_served(company, http):
    response = http.get("/.well-known/poppy.json")
    assert response.status_code == 200
    doc = response.json()
    base = company.base_url
    assert doc["protocol_version"] == "0.4"
    assert doc["organization"] == {"name": "Manzanita Outfitters", "domain": company.domain}
    assert company.domain == f"127.0.0.1:{company.port}"
    assert doc["auth"]["issuer"] == base
    assert {"type": "openapi", "url": base + "/openapi.json"}.items() <= doc["apis"][0].items()
    assert {"type": "mcp", "url": base + "/mcp"}.items() <= doc["apis"][1].items()
    assert doc["agent"]["protocols"] == [
        {"type": "poppy", "endpoint": base + "/poppy/conversations"}
    ]
    assert doc["extensions"] == operations_extension_entry()
    parsed = parse_poppy_json(doc, served_host=company.domain, allow_loopback_http=True)
    assert parsed.supports_operations and parsed.audience == company.issuer
    assert (
        parsed.mcp_url == base + "/mcp"
        and parsed.conversation_endpoint == base + "/poppy/conversations"
    )


@pytest.mark.parametrize(
    ("version", "expected"), [(None, None), ("3", {"operations": [{"version": "3"}]})]
)
def test_poppy_json_can_advertise_no_extension_or_another_major(start, version, expected):
    company = start(extension_version=version)
    doc = httpx.get(company.discovery_url).json()
    assert doc.get("extensions") == expected
    assert not parse_poppy_json(
        doc, served_host=company.domain, allow_loopback_http=True
    ).supports_operations


def test_discovery_needs_no_session(http):
    assert http.get("/.well-known/poppy.json").status_code == 200
    assert http.get("/openapi.json").status_code == 200


def test_openapi_document_describes_the_actions_and_their_bodies(company, http):
    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert doc["servers"] == [{"url": company.base_url}]
    paths = doc["paths"]
    for path in ("/api/orders", "/api/orders/{order_id}", "/api/products"):
        assert "get" in paths[path]
    schemas = doc["components"]["schemas"]
    actions = {
        "/api/orders/{order_id}/exchanges": ("ExchangeRequest", {"item_id", "replacement_sku"}),
        "/api/bookings/{booking_id}/change": ("BookingChangeRequest", {"starts_at"}),
        "/api/subscriptions/{subscription_id}/cancel": ("CancelRequest", set()),
    }
    for path, (schema_name, required) in actions.items():
        post = paths[path]["post"]
        assert post["x-poppy-approval"] is True
        ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{schema_name}"
        schema = schemas[schema_name]
        assert set(schema.get("required", [])) == required
        assert all(schema["properties"][name]["type"] == "string" for name in required)
        assert "403" in post["responses"] and "503" in post["responses"]

    # Every $ref resolves.
    def refs(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    yield value
                else:
                    yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    for ref in refs(doc):
        section, name = ref.split("/")[2:4]
        assert name in doc["components"][section], ref


def test_unknown_paths_answer_json(http):
    response = http.get("/nope")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
