"""The REST API (JSON) and its OpenAPI 3.1 document."""

from __future__ import annotations

import json
import re
from typing import Any, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.demo.accounts.guard import Caller, Challenge
from poppy_tui.demo.accounts.users import ACTION_NEEDS, READ_NEEDS
from poppy_tui.demo.context import RETRY_AFTER_SECONDS, CompanyContext, request_flags
from poppy_tui.demo.shop import Action, ShopError
from poppy_tui.demo.sessions import Refusal
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, parse_approval_header
from poppy_tui.protocol.errors import InvalidApproval
from poppy_tui.protocol.session_jwt import VerifiedSession

MAX_BODY_BYTES = 64 * 1024
_IDEMPOTENCY_KEY_RE = re.compile(r'^"?([\x21\x23-\x7e]{1,255})"?$')

Handler = Callable[[Request, VerifiedSession], Awaitable[Response]]

READ_WHAT = "see your orders, subscription and bookings"
ACTION_WHAT = {
    "exchange": "exchange an item",
    "cancel_subscription": "cancel your subscription",
    "change_booking": "move your fitting",
}


def error(status: int, code: str, description: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": code, "error_description": description, **extra}, status_code=status, headers=headers)


def refusal_response(refusal: Refusal) -> JSONResponse:
    return JSONResponse(refusal.body, status_code=refusal.status, headers=refusal.headers or None)


def guarded(
    ctx: CompanyContext, handler: Handler, needs: tuple[str, ...] = (), what: str = "do this"
) -> Callable[[Request], Awaitable[Response]]:
    """Session header checks first (spec 5.3), then the token checks and the scopes
    `needs` (spec 7), then the handler; shop refusals become errors."""

    async def endpoint(request: Request) -> Response:
        try:
            session = await ctx.sessions.check(request.headers)
            flags = request_flags(request.scope)
            flags["session"] = session
            caller = flags["caller"] = ctx.caller(request.headers, session)
            ctx.require(caller, needs, what)
            return await handler(request, session)
        except Challenge as challenge:
            return refusal_response(challenge.refusal())
        except Refusal as refusal:
            return refusal_response(refusal)
        except ShopError as exc:
            return JSONResponse(exc.body(), status_code=exc.status)

    return endpoint


def caller_of(request: Request) -> Caller:
    return request_flags(request.scope)["caller"]


async def json_body(request: Request, allow_empty: bool = False) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise Refusal(413, {"error": "invalid_request", "error_description": "The body is too large."})
    if not raw.strip():
        if allow_empty:
            return {}
        raise Refusal(400, {"error": "invalid_request", "error_description": "A JSON object body is required."})
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise Refusal(400, {"error": "invalid_request", "error_description": "The body is not valid JSON."}) from None
    if not isinstance(body, dict):
        raise Refusal(400, {"error": "invalid_request", "error_description": "The body must be a JSON object."})
    return body


def string_field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value or len(value) > 256:
        raise Refusal(400, {"error": "invalid_request", "error_description": f"{name} is required and must be a string."})
    return value


def read_approval(request: Request) -> Approval | None:
    raw = request.headers.get(c.HEADER_APPROVAL)
    if raw is None:
        return None
    try:
        return parse_approval_header(raw)
    except InvalidApproval as exc:
        raise Refusal(400, {"error": "invalid_approval", "error_description": str(exc)}) from None


def check_idempotency_key(request: Request) -> None:
    """Accepted bare (as the spec's example) or as an sf-string; at most once is keyed
    by the operation id, so the key itself changes nothing here."""
    raw = request.headers.get(c.HEADER_IDEMPOTENCY_KEY)
    if raw is not None and not _IDEMPOTENCY_KEY_RE.match(raw.strip()):
        raise Refusal(400, {"error": "invalid_request", "error_description": "Idempotency-Key must be 1 to 255 visible characters."})


async def approval_needed(ctx: CompanyContext, request: Request, session: VerifiedSession, action: Action) -> Response:
    """One request for an action that needs approval, through the API (spec 4, 6, 7)."""
    check_idempotency_key(request)
    caller = caller_of(request)
    # Token checks come before the extension's checks (Ops 6).
    ctx.require(caller, ACTION_NEEDS[action.kind], ACTION_WHAT[action.kind])
    if not ctx.operations_in_use(request.headers):
        status, body = ctx.approval_unavailable()
        return JSONResponse(body, status_code=status)
    approval = read_approval(request)
    if approval is not None and ctx.counters.take_busy():
        return error(503, "temporarily_unavailable", "Busy; try again shortly.", {"Retry-After": str(RETRY_AFTER_SECONDS)})
    channel = f"api:{request.method} {request.url.path}"
    answer = await ctx.desk.answer(action, approval, caller.owner, channel)
    if answer.kind == "approval_required":
        return JSONResponse({"error": "approval_required", "operation": answer.operation}, status_code=403)
    if answer.kind == "in_progress":
        return error(
            503,
            "operation_in_progress",
            f"Operation {answer.operation_id} is being performed; send the same request again to get its outcome.",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
            operation_id=answer.operation_id,
        )
    assert answer.outcome is not None
    if answer.kind == "performed" and ctx.counters.take_drop():
        request_flags(request.scope)["drop"] = True
    return JSONResponse(answer.outcome.result, status_code=answer.outcome.status_code)


def routes(ctx: CompanyContext) -> list[Route]:
    shop = ctx.shop

    async def list_orders(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse({"orders": [o.to_json() for o in shop.orders.values()]})

    async def get_order(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse(shop.order(request.path_params["order_id"]).to_json())

    async def list_products(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            found = shop.search(request.query_params.get("q", ""))
            return JSONResponse({"products": [p.to_json() for p in found]})

    async def list_subscriptions(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse({"subscriptions": [s.to_json() for s in shop.subscriptions.values()]})

    async def get_subscription(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse(shop.subscription(request.path_params["subscription_id"]).to_json())

    async def list_bookings(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse({"bookings": [b.to_json() for b in shop.bookings.values()]})

    async def get_booking(request: Request, session: VerifiedSession) -> Response:
        with shop.lock:
            return JSONResponse(shop.booking(request.path_params["booking_id"]).to_json())

    async def exchange(request: Request, session: VerifiedSession) -> Response:
        body = await json_body(request)
        action = Action.of(
            "exchange",
            order_id=request.path_params["order_id"],
            item_id=string_field(body, "item_id"),
            replacement_sku=string_field(body, "replacement_sku"),
        )
        return await approval_needed(ctx, request, session, action)

    async def cancel_subscription(request: Request, session: VerifiedSession) -> Response:
        await json_body(request, allow_empty=True)
        action = Action.of("cancel_subscription", subscription_id=request.path_params["subscription_id"])
        return await approval_needed(ctx, request, session, action)

    async def change_booking(request: Request, session: VerifiedSession) -> Response:
        body = await json_body(request)
        action = Action.of("change_booking", booking_id=request.path_params["booking_id"], starts_at=string_field(body, "starts_at"))
        return await approval_needed(ctx, request, session, action)

    async def openapi(request: Request) -> Response:
        document = openapi_document(ctx.base_url)
        if ctx.accounts is not None:
            add_account_security(document, ctx.accounts.url("/authorize"), ctx.accounts.url("/token"))
        return JSONResponse(document, headers={"Cache-Control": "max-age=60"})

    def r(path: str, handler: Handler, method: str, needs: tuple[str, ...] = ()) -> Route:
        return Route(path, guarded(ctx, handler, needs, READ_WHAT), methods=[method])

    # The catalogue is open to signed-out Sessions; the account's data needs poppy:read;
    # actions check their own scopes in approval_needed (after reading the body).
    return [
        Route("/openapi.json", openapi, methods=["GET"]),
        r("/api/orders", list_orders, "GET", READ_NEEDS),
        r("/api/orders/{order_id}", get_order, "GET", READ_NEEDS),
        r("/api/orders/{order_id}/exchanges", exchange, "POST"),
        r("/api/products", list_products, "GET"),
        r("/api/subscriptions", list_subscriptions, "GET", READ_NEEDS),
        r("/api/subscriptions/{subscription_id}", get_subscription, "GET", READ_NEEDS),
        r("/api/subscriptions/{subscription_id}/cancel", cancel_subscription, "POST"),
        r("/api/bookings", list_bookings, "GET", READ_NEEDS),
        r("/api/bookings/{booking_id}", get_booking, "GET", READ_NEEDS),
        r("/api/bookings/{booking_id}/change", change_booking, "POST"),
    ]


# ----- OpenAPI -----------------------------------------------------------------

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
    return {str(s): {"$ref": f"#/components/responses/E{s}"} if s in texts else {} for s in statuses}


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
        "properties": {"amount": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"}, "currency": {"type": "string", "const": "USD"}},
    }
    schemas: dict[str, Any] = {
        "Money": money,
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}, "extension": {"type": "string"}},
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
            "properties": {"error": {"type": "string", "const": "approval_required"}, "operation": _ref("Operation")},
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
                "status": {"type": "string", "enum": ["delivered", "shipped", "preparing", "exchanged"]},
                "replaces": {"type": "string", "description": "The item this one replaces in an exchange."},
                "exchange": {"type": "object", "description": "Set once the item was exchanged, with the operation_id that did it."},
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
                "item_id": {"type": "string", "title": "Item", "description": "The item on the order to exchange, e.g. itm_4Qa.", "examples": ["itm_4Qa"]},
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
        "CancelRequest": {"type": "object", "title": "Cancel the subscription", "properties": {}, "additionalProperties": False},
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
    path_param = lambda name, example: {"name": name, "in": "path", "required": True, "schema": _ID, "example": example}  # noqa: E731
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
                "get": {"operationId": "listOrders", "summary": "List your orders", "responses": {"200": _json({"type": "object", "properties": {"orders": {"type": "array", "items": _ref("Order")}}}, "Your orders"), **_errors(400, 403)}}
            },
            "/api/orders/{order_id}": {
                "get": {
                    "operationId": "getOrder",
                    "summary": "Get one order, with its items, exchanges and charges",
                    "parameters": [path_param("order_id", "ord_7Hk2")],
                    "responses": {"200": _json(_ref("Order"), "The order"), **_errors(400, 403, 404)},
                }
            },
            "/api/orders/{order_id}/exchanges": {
                "post": {
                    "operationId": "exchangeItem",
                    "summary": "Exchange an item on an order for another product",
                    **needs_approval,
                    "parameters": [path_param("order_id", "ord_7Hk2"), *_APPROVAL_PARAMS],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("ExchangeRequest")}}},
                    "responses": _approval_responses(_json(_ref("Exchange"), "The exchange was performed"), "201"),
                }
            },
            "/api/products": {
                "get": {
                    "operationId": "searchProducts",
                    "summary": "Search the catalog",
                    "parameters": [{"name": "q", "in": "query", "required": False, "schema": {"type": "string"}, "description": "Words to look for"}],
                    "responses": {"200": _json({"type": "object", "properties": {"products": {"type": "array", "items": _ref("Product")}}}, "Matching products"), **_errors(400, 403)},
                }
            },
            "/api/subscriptions": {
                "get": {"operationId": "listSubscriptions", "summary": "List your subscriptions", "responses": {"200": _json({"type": "object", "properties": {"subscriptions": {"type": "array", "items": _ref("Subscription")}}}, "Your subscriptions"), **_errors(400, 403)}}
            },
            "/api/subscriptions/{subscription_id}": {
                "get": {
                    "operationId": "getSubscription",
                    "summary": "Get a subscription",
                    "parameters": [path_param("subscription_id", "sub_6Tc1")],
                    "responses": {"200": _json(_ref("Subscription"), "The subscription"), **_errors(400, 403, 404)},
                }
            },
            "/api/subscriptions/{subscription_id}/cancel": {
                "post": {
                    "operationId": "cancelSubscription",
                    "summary": "Cancel a subscription at the end of the current period",
                    **needs_approval,
                    "parameters": [path_param("subscription_id", "sub_6Tc1"), *_APPROVAL_PARAMS],
                    "requestBody": {"required": False, "content": {"application/json": {"schema": _ref("CancelRequest")}}},
                    "responses": _approval_responses(_json(_ref("Subscription"), "The subscription, cancelled"), "200"),
                }
            },
            "/api/bookings": {
                "get": {"operationId": "listBookings", "summary": "List your bookings", "responses": {"200": _json({"type": "object", "properties": {"bookings": {"type": "array", "items": _ref("Booking")}}}, "Your bookings"), **_errors(400, 403)}}
            },
            "/api/bookings/{booking_id}": {
                "get": {
                    "operationId": "getBooking",
                    "summary": "Get a booking",
                    "parameters": [path_param("booking_id", "bkg_2Fm8")],
                    "responses": {"200": _json(_ref("Booking"), "The booking"), **_errors(400, 403, 404)},
                }
            },
            "/api/bookings/{booking_id}/change": {
                "post": {
                    "operationId": "changeBooking",
                    "summary": "Move a fitting appointment to another time (change fee applies)",
                    **needs_approval,
                    "parameters": [path_param("booking_id", "bkg_2Fm8"), *_APPROVAL_PARAMS],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("BookingChangeRequest")}}},
                    "responses": _approval_responses(_json(_ref("Booking"), "The booking, changed"), "200"),
                }
            },
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "PoppySession": {"type": "apiKey", "in": "header", "name": c.HEADER_SESSION, "description": "A Session JWT, signed for each request."}
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
                "E400": error_response("Bad request (invalid_request, invalid_approval, unsupported_version)"),
                "E403": error_response("invalid_session"),
                "E404": error_response("Not found"),
                "E409": error_response("Conflict with the current state (already_exchanged, already_cancelled, no_change, ...)"),
                "E422": error_response("Not possible (slot_unavailable, not_exchangeable_for, same_product, ...)"),
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
        "flows": {"authorizationCode": {"authorizationUrl": authorize_url, "tokenUrl": token_url, "scopes": dict(SCOPE_DESCRIPTIONS)}},
    }
    components["responses"]["E401"] = _json(
        _ref("Error"), "sign_in_required or invalid_token, also in WWW-Authenticate (Bearer error=..., scope=...)"
    )
    components["responses"]["E403Scope"] = _json(_ref("Error"), "insufficient_scope (WWW-Authenticate names the scopes needed)")
    for path in document["paths"].values():
        for operation in path.values():
            needs = _OPERATION_NEEDS.get(operation.get("operationId"))
            if not needs:
                continue
            operation["security"] = [{"PoppySession": [], "Account": list(needs)}]
            operation["responses"]["401"] = {"$ref": "#/components/responses/E401"}
