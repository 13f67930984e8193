"""Assembles the demo Company: poppy.json, the API, MCP and conversations in one
Starlette app, behind the fault wrapper."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from poppy_tui.demo import api
from poppy_tui.demo.context import ORGANIZATION_NAME, CompanyContext, request_flags
from poppy_tui.demo.conversation import Conversations
from poppy_tui.demo.mcp_server import McpGate, build_mcp
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.extensions import operations_extension_entry

CONVERSATIONS_PATH = "/poppy/conversations"


def poppy_document(ctx: CompanyContext) -> dict[str, Any]:
    base = ctx.base_url
    document: dict[str, Any] = {
        "protocol_version": c.POPPY_VERSION,
        "organization": {"name": ORGANIZATION_NAME, "domain": ctx.domain},
        "auth": ctx.accounts.auth_block() if ctx.accounts is not None else {"issuer": ctx.issuer},
        "agent": {
            "protocols": [
                {"type": c.CONVERSATION_PROTOCOL_TYPE, "endpoint": base + CONVERSATIONS_PATH}
            ]
        },
        "apis": [
            {
                "type": "openapi",
                "url": base + "/openapi.json",
                "description": "Orders, exchanges, the coffee subscription and fitting bookings",
            },
            {
                "type": "mcp",
                "url": base + "/mcp",
                "description": "Product search, orders, exchanges, subscription and bookings",
            },
        ],
    }
    if ctx.supports_operations_v2:
        document["extensions"] = operations_extension_entry()
    elif ctx.extension_version is not None:
        document["extensions"] = {c.EXTENSION_NAME: [{"version": ctx.extension_version}]}
    return document


class DroppedOnPurpose(Exception):
    """The drop_after_perform fault: the connection closes after the response headers."""


class FaultWrapper:
    """Outermost ASGI layer: `slow` delays, and a flagged response is cut off.

    Raising after `http.response.start` makes uvicorn close the socket without a
    500, so the client sees a dropped connection, never an HTTP error.
    """

    def __init__(self, app: Any, ctx: CompanyContext) -> None:
        self.app = app
        self.ctx = ctx

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        flags = request_flags(scope)
        if self.ctx.faults.slow:
            await asyncio.sleep(self.ctx.faults.slow)

        async def cut_send(message) -> None:
            if flags.get("drop"):
                if message["type"] == "http.response.start":
                    await send(message)
                raise DroppedOnPurpose("drop_after_perform")
            await send(message)

        await self.app(scope, receive, cut_send)


async def _json_http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "server_error")
    return JSONResponse(
        {"error": code, "error_description": getattr(exc, "detail", "")}, status_code=status
    )


def build_app(ctx: CompanyContext) -> FaultWrapper:
    _, session_manager = build_mcp(ctx)
    conversations = Conversations(ctx)

    async def poppy_json(request: Request) -> Response:
        return JSONResponse(poppy_document(ctx), headers={"Cache-Control": "max-age=60"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        async with session_manager.run():
            yield

    app = Starlette(
        routes=[
            Route(c.WELL_KNOWN_PATH, poppy_json, methods=["GET"]),
            *api.routes(ctx),
            Route("/mcp", McpGate(ctx, session_manager)),
            *conversations.routes(CONVERSATIONS_PATH),
            *(ctx.accounts.routes() if ctx.accounts is not None else []),
        ],
        lifespan=lifespan,
        exception_handlers={404: _json_http_error, 405: _json_http_error},
    )
    return FaultWrapper(app, ctx)
