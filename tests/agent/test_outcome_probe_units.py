"""Pure parts of finding out another way: which GET reads the resource a request acted on, and
how a conversation reply is read (the documented convention)."""

from __future__ import annotations

import pytest

from poppy_tui.agent.outcome_probe import resource_url
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


@pytest.mark.parametrize("url,expected", [
    ("https://shop.example/api/orders/ord_7Hk2/exchanges", "https://shop.example/api/orders/ord_7Hk2"),
    ("https://shop.example/api/orders/ord_7Hk2", "https://shop.example/api/orders/ord_7Hk2"),
    ("https://shop.example/v2/bookings/bk_1/cancel?x=1", "https://shop.example/v2/bookings/bk_1"),
    ("https://shop.example/api/subscriptions/sub_1/cancel", None),  # no GET offered for it
])
def test_resource_url_is_the_longest_get_on_the_requests_path(url, expected):
    assert resource_url(url, OPENAPI) == expected


@pytest.mark.parametrize("document", [None, {}, {"paths": []}, {"paths": {"/x/{id}": "not an object"}}, "text"])
def test_resource_url_of_an_unusable_openapi_is_none(document):
    assert resource_url("https://shop.example/x/1", document) is None


@pytest.mark.parametrize("message,expected", [
    ({"text": "Done!"}, "words"),
    ({"text": "ok", "data": {"status": "performed"}}, "performed"),
    ({"data": {"status": "performed", "operation_id": "op_1"}}, "performed"),
    ({"data": {"status": "performed", "operation_id": "op_2"}}, "unrelated"),
    ({"data": {"status": "not_performed"}}, "not_performed"),
    ({"data": {"status": "in_progress"}}, "in_progress"),
    ({"data": {"status": "Performed"}}, "words"),
    ({"data": "performed"}, "words"),
    ("not a message", "words"),
])
def test_conversation_reply_reads_only_the_structured_convention(message, expected):
    assert conversation_reply(message, "op_1") == expected
