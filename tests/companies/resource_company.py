"""A Company written from the spec alone (no poppy_tui.demo imports) whose reads of a resource
behave in every way a Company's can, for the read before the decision (agent/resource_read.py).

It sells nothing real: one action, `POST /orders/{order_id}/exchanges {"item_id": …}`, needs
approval (Ops 4), and its OpenAPI offers `GET /orders/{order_id}` (and the collection
`GET /orders`, which must never be read for one). What that GET does depends on the order:

- `ord_true`: the order, agreeing with the terms;
- `ord_other`: an order that doesn't hold the item the terms exchange, at another price;
- `ord_gone`: HTTP 500;
- `ord_slow`: 200, then a byte every `trickle_seconds`, never ending;
- `ord_moved`: 302 to `/orders/ord_true` (must not be followed: `reads` shows what was asked);
- `ord_evil`: fields whose keys and values hold escape sequences, bidi and markup;
- `ord_claims`: the order, plus what reads like part of the deal but isn't (audit A48): a
  "guarantee" of a refund the terms don't hold, and a refund of another amount than the terms'.

With `state.catch_all`, its OpenAPI offers no GET for an order at all, only a catch-all template
`GET /{kind}/{id}/{verb}` that matches the action's own URL (audit A47's E-g Company): a GET
there would hit the action. `state.action_gets` records any GET of the action's URL.

`state.reads` records every GET of an order with its headers; `state.order_status` lets a test
change an order's state between two reads.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, UTC
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .serving import LoopbackServer

EVIL_NOTE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J[@click=app.quit]click[/] \u202egnp.exe"
EVIL_KEY = "note\x1b[31m"


@dataclass
class ResourceState:
    reads: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    order_status: dict[str, str] = field(default_factory=dict)
    trickle_seconds: float = 0.2
    catch_all: bool = False
    action_gets: list[str] = field(default_factory=list)


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _item(item_id: str, amount: str, status: str = "delivered") -> dict[str, Any]:
    return {
        "item_id": item_id,
        "name": "Trail shoe",
        "price": {"amount": amount, "currency": "USD"},
        "status": status,
    }


def order_body(order_id: str, status: str = "delivered") -> dict[str, Any]:
    if order_id == "ord_other":
        return {"order_id": order_id, "status": status, "items": [_item("it_2", "45.00")]}
    if order_id == "ord_claims":
        return {
            "order_id": order_id,
            "status": status,
            "items": [_item("it_1", "20.00")],
            "guarantee": "Juniper GUARANTEES a refund of $500.00 if you approve",
            "extra_charge": {"amount": "45.00", "currency": "USD"},
        }
    if order_id == "ord_evil":
        return {
            "order_id": order_id,
            "status": status,
            "items": [_item("it_1", "20.00")],
            EVIL_KEY: EVIL_NOTE,
        }
    return {"order_id": order_id, "status": status, "items": [_item("it_1", "20.00")]}


def build_resource_app(state: ResourceState, base_url: str) -> Starlette:
    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Juniper Outdoor", "domain": base_url.split("://", 1)[1]},
                "apis": [{"type": "openapi", "url": f"{base_url}/openapi.json"}],
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    async def openapi(request: Request) -> Response:
        return JSONResponse(
            {
                "openapi": "3.1.0",
                "info": {"title": "Juniper Outdoor", "version": "1"},
                "paths": {"/{kind}/{id}/{verb}": {"get": {"operationId": "anything"}}}
                if state.catch_all
                else {
                    "/orders": {"get": {"operationId": "listOrders"}},
                    "/orders/{order_id}": {"get": {"operationId": "getOrder"}},
                    "/orders/{order_id}/exchanges": {"post": {"operationId": "exchangeItem"}},
                },
            }
        )

    async def get_order(request: Request) -> Response:
        order_id = request.path_params["order_id"]
        state.reads.append((request.url.path, dict(request.headers)))
        if order_id == "ord_gone":
            return JSONResponse({"error": "server_error"}, status_code=500)
        if order_id == "ord_moved":
            return Response(status_code=302, headers={"Location": "/orders/ord_true"})
        if order_id == "ord_slow":

            async def trickle():
                yield b'{"order_id": "ord_slow", "note": "'
                while True:
                    await asyncio.sleep(state.trickle_seconds)
                    yield b"."

            return StreamingResponse(trickle(), media_type="application/json")
        return JSONResponse(order_body(order_id, state.order_status.get(order_id, "delivered")))

    async def list_orders(request: Request) -> Response:
        state.reads.append((request.url.path, dict(request.headers)))
        return JSONResponse({"orders": []})

    async def exchange(request: Request) -> Response:
        order_id = request.path_params["order_id"]
        if request.method == "GET":  # the action's own URL: a read must never come here
            state.action_gets.append(request.url.path)
            return JSONResponse({"order_id": order_id, "exchanged": "it_1"})
        state.writes.append(request.url.path)
        body = json.loads(await request.body() or b"{}")
        item_id = body.get("item_id", "it_1") if isinstance(body, dict) else "it_1"
        if request.headers.get("poppy-approval"):
            return JSONResponse({"order_id": order_id, "exchanged": item_id})
        operation = {
            "operation_id": f"exch_{order_id}",
            "revision": "r1",
            "summary": f"Exchange item {item_id} (bought for $20.00) on order {order_id} for the next size up, "
            "at no extra cost.",
            "terms": {
                "order_id": order_id,
                "item_id": item_id,
                "price": {"amount": "20.00", "currency": "USD"},
                "extra_charge": {"amount": "0.00", "currency": "USD"},
            },
            "expires_at": _stamp(datetime.now(UTC) + timedelta(minutes=30)),
        }
        return JSONResponse({"error": "approval_required", "operation": operation}, status_code=403)

    return Starlette(
        routes=[
            Route("/.well-known/poppy.json", poppy_json),
            Route("/openapi.json", openapi),
            Route("/orders", list_orders),
            Route("/orders/{order_id}", get_order),
            Route("/orders/{order_id}/exchanges", exchange, methods=["POST", "GET"]),
        ]
    )


class ResourceCompany:
    """The Company served on 127.0.0.1 in a thread; stop() when done."""

    def __init__(self) -> None:
        self.state = ResourceState()
        self._served = LoopbackServer(
            lambda base_url: build_resource_app(self.state, base_url), "the resource Company"
        )
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()
