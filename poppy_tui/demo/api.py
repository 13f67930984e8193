"""The REST API (JSON) and its OpenAPI 3.1 document."""

from __future__ import annotations

import json
import re
from typing import Any
from collections.abc import Awaitable, Callable

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


def error(
    status: int, code: str, description: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(
        {"error": code, "error_description": description, **extra},
        status_code=status,
        headers=headers,
    )


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
        raise Refusal(
            413, {"error": "invalid_request", "error_description": "The body is too large."}
        )
    if not raw.strip():
        if allow_empty:
            return {}
        raise Refusal(
            400,
            {"error": "invalid_request", "error_description": "A JSON object body is required."},
        )
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise Refusal(
            400, {"error": "invalid_request", "error_description": "The body is not valid JSON."}
        ) from None
    if not isinstance(body, dict):
        raise Refusal(
            400,
            {"error": "invalid_request", "error_description": "The body must be a JSON object."},
        )
    return body


def string_field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value or len(value) > 256:
        raise Refusal(
            400,
            {
                "error": "invalid_request",
                "error_description": f"{name} is required and must be a string.",
            },
        )
    return value


def read_approval(request: Request) -> Approval | None:
    raw = request.headers.get(c.HEADER_APPROVAL)
    if raw is None:
        return None
    try:
        return parse_approval_header(raw)
    except InvalidApproval as exc:
        raise Refusal(400, {"error": "invalid_approval", "error_description": str(exc)}) from None


def check_idempotency_key(request: Request) -> str | None:
    """The key, accepted bare (as the spec's example) or as an sf-string; None without one."""
    raw = request.headers.get(c.HEADER_IDEMPOTENCY_KEY)
    if raw is None:
        return None
    match = _IDEMPOTENCY_KEY_RE.match(raw.strip())
    if match is None:
        raise Refusal(
            400,
            {
                "error": "invalid_request",
                "error_description": "Idempotency-Key must be 1 to 255 visible characters.",
            },
        )
    return match.group(1)


async def check_key_reuse(
    ctx: CompanyContext, request: Request, key: str | None, owner: str
) -> None:
    """The draft's 422 for a key reused with another payload (section 2.7). At most once is keyed
    by the operation id (Ops 7), so a key used again for the same request changes nothing."""
    if key is None:
        return
    payload = await request.body()
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if not ctx.idempotency_keys.same_request(owner, key, request.method, target, payload):
        raise Refusal(
            422,
            {
                "error": "idempotency_key_reused",
                "error_description": "This Idempotency-Key was already used for a different request; "
                "send a new key with a new request.",
            },
        )


async def approval_needed(
    ctx: CompanyContext, request: Request, session: VerifiedSession, action: Action
) -> Response:
    """One request for an action that needs approval, through the API (spec 4, 6, 7)."""
    key = check_idempotency_key(request)
    caller = caller_of(request)
    # Token checks come before the extension's checks (Ops 6).
    ctx.require(caller, ACTION_NEEDS[action.kind], ACTION_WHAT[action.kind])
    await check_key_reuse(ctx, request, key, caller.owner)
    if not ctx.operations_in_use(request.headers):
        status, body = ctx.approval_unavailable()
        return JSONResponse(body, status_code=status)
    approval = read_approval(request)
    if approval is not None and ctx.counters.take_busy():
        return error(
            503,
            "temporarily_unavailable",
            "Busy; try again shortly.",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    channel = f"api:{request.method} {request.url.path}"
    answer = await ctx.desk.answer(action, approval, caller.owner, channel)
    if answer.kind == "approval_required":
        return JSONResponse(
            {"error": "approval_required", "operation": answer.operation}, status_code=403
        )
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
            return JSONResponse(
                {"subscriptions": [s.to_json() for s in shop.subscriptions.values()]}
            )

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
        action = Action.of(
            "cancel_subscription", subscription_id=request.path_params["subscription_id"]
        )
        return await approval_needed(ctx, request, session, action)

    async def change_booking(request: Request, session: VerifiedSession) -> Response:
        body = await json_body(request)
        action = Action.of(
            "change_booking",
            booking_id=request.path_params["booking_id"],
            starts_at=string_field(body, "starts_at"),
        )
        return await approval_needed(ctx, request, session, action)

    async def openapi(request: Request) -> Response:
        document = openapi_document(ctx.base_url)
        if ctx.accounts is not None:
            add_account_security(
                document, ctx.accounts.url("/authorize"), ctx.accounts.url("/token")
            )
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


# The OpenAPI document lives in openapi.py; these names stay importable from here.
from poppy_tui.demo.openapi import add_account_security, openapi_document  # noqa: E402
