"""The demo Company's OpenAPI 3.1 document: detailed enough for a UI to build forms from,
and, with accounts, the sign-in each operation needs."""

from __future__ import annotations

from typing import Any

from poppy_tui.demo.accounts.users import ACTION_NEEDS, READ_NEEDS
from poppy_tui.protocol import conventions as c

_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,256}$"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    texts = {
        400: "Bad request (invalid_request, invalid_approval, unsupported_version)",
        403: "invalid_session",
        404: "Not found",
        409: "Conflict with the current state (already_exchanged, already_cancelled, no_change, ...)",
        422: "Not possible (slot_unavailable, not_exchangeable_for, ...)",
    }
    return {
        str(s): {"$ref": f"#/components/responses/E{s}"} if s in texts else {} for s in statuses
    }


def _approval_responses(success: dict[str, Any], success_status: str) -> dict[str, Any]:
    return {
        success_status: success,
        "403": _json(
            {"oneOf": [_ref("ApprovalRequired"), _ref("Error")]},
            "approval_required with the operation to approve (operations extension v2); "
            "extension_required when the request doesn't declare it; invalid_session.",
        ),
        "503": {
            "description": "Busy, or the operation is being performed: send the same request again after Retry-After.",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
            "content": {"application/json": {"schema": _ref("Error")}},
        },
        **_errors(400, 404, 409, 422),
    }


_APPROVAL_PARAMS = [
    {"$ref": "#/components/parameters/PoppyApproval"},
    {"$ref": "#/components/parameters/IdempotencyKey"},
]


def openapi_document(base_url: str) -> dict[str, Any]:
    """A real description of the API, detailed enough for a UI to build forms from."""
    money = {
        "type": "object",
        "required": ["amount", "currency"],
        "properties": {
            "amount": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"},
            "currency": {"type": "string", "const": "USD"},
        },
    }
    schemas: dict[str, Any] = {
        "Money": money,
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {
                "error": {"type": "string"},
                "error_description": {"type": "string"},
                "extension": {"type": "string"},
            },
            "additionalProperties": True,
        },
        "Operation": {
            "type": "object",
            "description": "An operation of the operations extension v2.",
            "required": ["operation_id", "revision", "summary", "expires_at"],
            "properties": {
                "operation_id": _ID,
                "revision": _ID,
                "summary": {"type": "string"},
                "terms": {"type": "object"},
                "expires_at": {"type": "string", "format": "date-time"},
            },
        },
        "ApprovalRequired": {
            "type": "object",
            "required": ["error", "operation"],
            "properties": {
                "error": {"type": "string", "const": "approval_required"},
                "operation": _ref("Operation"),
            },
        },
        "Item": {
            "type": "object",
            "required": ["item_id", "sku", "name", "price", "quantity", "status"],
            "properties": {
                "item_id": _ID,
                "sku": {"type": "string"},
                "name": {"type": "string"},
                "price": _ref("Money"),
                "quantity": {"type": "integer"},
                "status": {
                    "type": "string",
                    "enum": ["delivered", "shipped", "preparing", "exchanged"],
                },
                "replaces": {
                    "type": "string",
                    "description": "The item this one replaces in an exchange.",
                },
                "exchange": {
                    "type": "object",
                    "description": "Set once the item was exchanged, with the operation_id that did it.",
                },
            },
        },
        "Order": {
            "type": "object",
            "required": ["order_id", "placed_at", "status", "items", "total"],
            "properties": {
                "order_id": _ID,
                "placed_at": {"type": "string", "format": "date-time"},
                "status": {"type": "string"},
                "items": {"type": "array", "items": _ref("Item")},
                "total": _ref("Money"),
                "payment_method": {"type": "string"},
                "charges": {"type": "array", "items": {"type": "object"}},
            },
        },
        "Product": {
            "type": "object",
            "required": ["sku", "name", "price"],
            "properties": {
                "sku": {"type": "string"},
                "name": {"type": "string"},
                "price": _ref("Money"),
                "category": {"type": "string"},
                "description": {"type": "string"},
                "in_stock": {"type": "boolean"},
            },
        },
        "Subscription": {
            "type": "object",
            "required": ["subscription_id", "plan", "price", "status"],
            "properties": {
                "subscription_id": _ID,
                "plan": {"type": "string"},
                "price": _ref("Money"),
                "interval": {"type": "string"},
                "status": {"type": "string", "enum": ["active", "cancelled"]},
                "current_period_end": {"type": "string", "format": "date-time"},
                "ends_at": {"type": "string", "format": "date-time"},
            },
        },
        "Booking": {
            "type": "object",
            "required": ["booking_id", "service", "starts_at", "status"],
            "properties": {
                "booking_id": _ID,
                "service": {"type": "string"},
                "location": {"type": "string"},
                "starts_at": {"type": "string", "format": "date-time"},
                "duration_minutes": {"type": "integer"},
                "status": {"type": "string"},
                "change_fee": _ref("Money"),
                "history": {"type": "array", "items": {"type": "object"}},
            },
        },
        "ExchangeRequest": {
            "type": "object",
            "title": "Exchange an item",
            "required": ["item_id", "replacement_sku"],
            "properties": {
                "item_id": {
                    "type": "string",
                    "title": "Item",
                    "description": "The item on the order to exchange, e.g. itm_4Qa.",
                    "examples": ["itm_4Qa"],
                },
                "replacement_sku": {
                    "type": "string",
                    "title": "Replacement",
                    "description": "The SKU of the product to get instead (same category).",
                    "examples": ["stormline-insulated-m"],
                },
            },
            "additionalProperties": False,
        },
        "Exchange": {
            "type": "object",
            "properties": {
                "exchange_id": {"type": "string"},
                "operation_id": _ID,
                "status": {"type": "string"},
                "order_id": _ID,
                "item_id": _ID,
                "replacement_item_id": _ID,
                "replacement_sku": {"type": "string"},
                "price_difference": _ref("Money"),
                "card": {"type": "string"},
                "return_by": {"type": "string", "format": "date"},
            },
        },
        "CancelRequest": {
            "type": "object",
            "title": "Cancel the subscription",
            "properties": {},
            "additionalProperties": False,
        },
        "BookingChangeRequest": {
            "type": "object",
            "title": "Change the booking",
            "required": ["starts_at"],
            "properties": {
                "starts_at": {
                    "type": "string",
                    "format": "date-time",
                    "title": "New start",
                    "description": "RFC 3339, on the hour or half hour, 10:00 to 17:30 store time (America/Los_Angeles).",
                }
            },
            "additionalProperties": False,
        },
    }

    def error_response(description: str) -> dict[str, Any]:
        return _json(_ref("Error"), description)

    needs_approval = {
        "x-poppy-approval": True,
        "description": "Needs the User's approval (operations extension v2): the first request returns 403 approval_required "
        "with an operation; send the same request again with Poppy-Approval.",
    }

    def path_param(name: str, example: str) -> dict:
        return {"name": name, "in": "path", "required": True, "schema": _ID, "example": example}

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Manzanita Outfitters API",
            "version": "1.0.0",
            "description": "Orders, exchanges, the Trailhead Coffee Club subscription and fitting bookings. "
            "Every request carries Poppy-Session and Poppy-Version: 0.4.",
        },
        "servers": [{"url": base_url}],
        "security": [{"PoppySession": []}],
        "paths": {
            "/api/orders": {
                "get": {
                    "operationId": "listOrders",
                    "summary": "List your orders",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {"orders": {"type": "array", "items": _ref("Order")}},
                            },
                            "Your orders",
                        ),
                        **_errors(400, 403),
                    },
                }
            },
            "/api/orders/{order_id}": {
                "get": {
                    "operationId": "getOrder",
                    "summary": "Get one order, with its items, exchanges and charges",
                    "parameters": [path_param("order_id", "ord_7Hk2")],
                    "responses": {
                        "200": _json(_ref("Order"), "The order"),
                        **_errors(400, 403, 404),
                    },
                }
            },
            "/api/orders/{order_id}/exchanges": {
                "post": {
                    "operationId": "exchangeItem",
                    "summary": "Exchange an item on an order for another product",
                    **needs_approval,
                    "parameters": [path_param("order_id", "ord_7Hk2"), *_APPROVAL_PARAMS],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("ExchangeRequest")}},
                    },
                    "responses": _approval_responses(
                        _json(_ref("Exchange"), "The exchange was performed"), "201"
                    ),
                }
            },
            "/api/products": {
                "get": {
                    "operationId": "searchProducts",
                    "summary": "Search the catalog",
                    "parameters": [
                        {
                            "name": "q",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string"},
                            "description": "Words to look for",
                        }
                    ],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "products": {"type": "array", "items": _ref("Product")}
                                },
                            },
                            "Matching products",
                        ),
                        **_errors(400, 403),
                    },
                }
            },
            "/api/subscriptions": {
                "get": {
                    "operationId": "listSubscriptions",
                    "summary": "List your subscriptions",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "subscriptions": {
                                        "type": "array",
                                        "items": _ref("Subscription"),
                                    }
                                },
                            },
                            "Your subscriptions",
                        ),
                        **_errors(400, 403),
                    },
                }
            },
            "/api/subscriptions/{subscription_id}": {
                "get": {
                    "operationId": "getSubscription",
                    "summary": "Get a subscription",
                    "parameters": [path_param("subscription_id", "sub_6Tc1")],
                    "responses": {
                        "200": _json(_ref("Subscription"), "The subscription"),
                        **_errors(400, 403, 404),
                    },
                }
            },
            "/api/subscriptions/{subscription_id}/cancel": {
                "post": {
                    "operationId": "cancelSubscription",
                    "summary": "Cancel a subscription at the end of the current period",
                    **needs_approval,
                    "parameters": [path_param("subscription_id", "sub_6Tc1"), *_APPROVAL_PARAMS],
                    "requestBody": {
                        "required": False,
                        "content": {"application/json": {"schema": _ref("CancelRequest")}},
                    },
                    "responses": _approval_responses(
                        _json(_ref("Subscription"), "The subscription, cancelled"), "200"
                    ),
                }
            },
            "/api/bookings": {
                "get": {
                    "operationId": "listBookings",
                    "summary": "List your bookings",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "bookings": {"type": "array", "items": _ref("Booking")}
                                },
                            },
                            "Your bookings",
                        ),
                        **_errors(400, 403),
                    },
                }
            },
            "/api/bookings/{booking_id}": {
                "get": {
                    "operationId": "getBooking",
                    "summary": "Get a booking",
                    "parameters": [path_param("booking_id", "bkg_2Fm8")],
                    "responses": {
                        "200": _json(_ref("Booking"), "The booking"),
                        **_errors(400, 403, 404),
                    },
                }
            },
            "/api/bookings/{booking_id}/change": {
                "post": {
                    "operationId": "changeBooking",
                    "summary": "Move a fitting appointment to another time (change fee applies)",
                    **needs_approval,
                    "parameters": [path_param("booking_id", "bkg_2Fm8"), *_APPROVAL_PARAMS],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("BookingChangeRequest")}},
                    },
                    "responses": _approval_responses(
                        _json(_ref("Booking"), "The booking, changed"), "200"
                    ),
                }
            },
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "PoppySession": {
                    "type": "apiKey",
                    "in": "header",
                    "name": c.HEADER_SESSION,
                    "description": "A Session JWT, signed for each request.",
                }
            },
            "parameters": {
                "PoppyApproval": {
                    "name": c.HEADER_APPROVAL,
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": 'The User\'s approval, e.g. operation_id="exc_5Rt2", revision="1791487200-k3Jd9Qx2mW8v".',
                },
                "IdempotencyKey": {
                    "name": c.HEADER_IDEMPOTENCY_KEY,
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "Accepted; retries are recognised by the operation id.",
                },
            },
            "responses": {
                "E400": error_response(
                    "Bad request (invalid_request, invalid_approval, unsupported_version)"
                ),
                "E403": error_response("invalid_session"),
                "E404": error_response("Not found"),
                "E409": error_response(
                    "Conflict with the current state (already_exchanged, already_cancelled, no_change, ...)"
                ),
                "E422": error_response(
                    "Not possible (slot_unavailable, not_exchangeable_for, same_product, ...)"
                ),
            },
        },
    }


# What each operation needs when the Company has accounts (by operationId).
_OPERATION_NEEDS = {
    "listOrders": READ_NEEDS,
    "getOrder": READ_NEEDS,
    "listSubscriptions": READ_NEEDS,
    "getSubscription": READ_NEEDS,
    "listBookings": READ_NEEDS,
    "getBooking": READ_NEEDS,
    "exchangeItem": ACTION_NEEDS["exchange"],
    "cancelSubscription": ACTION_NEEDS["cancel_subscription"],
    "changeBooking": ACTION_NEEDS["change_booking"],
}


def add_account_security(document: dict[str, Any], authorize_url: str, token_url: str) -> None:
    """Describe sign-in in the OpenAPI document: the account's scopes per operation, and the
    401/403 challenges a request without them gets."""
    from poppy_tui.demo.accounts.users import SCOPE_DESCRIPTIONS

    components = document["components"]
    components["securitySchemes"]["Account"] = {
        "type": "oauth2",
        "description": "Sign in to the account (Poppy Direct, Device or Mediated Sign-In; see poppy.json auth). "
        "Send the access token as Authorization: Bearer beside Poppy-Session.",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": authorize_url,
                "tokenUrl": token_url,
                "scopes": dict(SCOPE_DESCRIPTIONS),
            }
        },
    }
    components["responses"]["E401"] = _json(
        _ref("Error"),
        "sign_in_required or invalid_token, also in WWW-Authenticate (Bearer error=..., scope=...)",
    )
    for path in document["paths"].values():
        for operation in path.values():
            needs = _OPERATION_NEEDS.get(operation.get("operationId"))
            if not needs:
                continue
            operation["security"] = [{"PoppySession": [], "Account": list(needs)}]
            operation["responses"]["401"] = {"$ref": "#/components/responses/E401"}
            operation["description"] = (
                operation.get("description", "")
                + " Needs sign-in: "
                + " ".join(needs)
                + "; without a scope the answer is 403 insufficient_scope."
            ).strip()
