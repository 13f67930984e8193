"""An MCP Company written from the spec alone (no poppy_tui.demo imports), on the real MCP SDK
server, whose read tool is found only by its annotation: `subscription_details` is marked
`readOnlyHint` and its name says nothing, while `get_subscription` is marked `readOnlyHint:
false` (the Company says it writes, whatever its name). `cancel_subscription` needs approval
(Ops 4, over MCP: an error result whose structuredContent carries the operation).

`cancel_subscription` performs when `_meta` carries the approval of its revision (Ops 6), then
answers as `state.errors_after_perform` says: a plain tool error (an MCP SDK server reports a
tool that raised so, maybe after it committed: in doubt, Ops 7) that many times, else done.

With `marks_reads=False` it marks no tool at all: `get_subscription` reads, but only its name
says so, and poppy-tui must not take a name for the Company's word.

`state.calls` records every tool called, so a test sees that only the marked read ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, UTC
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .serving import LoopbackServer

APPROVAL_KEY = "personalagentprotocol.org/approval"  # Ops 6, MCP: where the approval comes


@dataclass
class McpReadState:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: str = "active"
    price: str = "18.00"
    errors_after_perform: int = 0
    performed: int = 0
    marks_reads: bool = True


def _text(text: str) -> list[TextContent]:
    return [TextContent(type="text", text=text)]


def build_mcp_read_app(state: McpReadState, base_url: str) -> Starlette:
    mcp = MCPServer("birch-coffee", log_level="WARNING")

    def subscription(subscription_id: str) -> dict[str, Any]:
        return {
            "subscription_id": subscription_id,
            "plan": "Birch Beans",
            "status": state.status,
            "price": {"amount": state.price, "currency": "USD"},
        }

    if state.marks_reads:

        @mcp.tool(
            description="A subscription's details.",
            annotations=ToolAnnotations(read_only_hint=True),
        )
        def subscription_details(subscription_id: str) -> CallToolResult:
            state.calls.append(("subscription_details", {"subscription_id": subscription_id}))
            data = subscription(subscription_id)
            return CallToolResult(content=_text(str(data)), structured_content=data)

        @mcp.tool(
            description="Looks like a read; the Company says it isn't.",
            annotations=ToolAnnotations(read_only_hint=False),
        )
        def get_subscription(subscription_id: str) -> CallToolResult:
            state.calls.append(("get_subscription", {"subscription_id": subscription_id}))
            return CallToolResult(content=_text("renewed"), structured_content={"renewed": True})

    else:

        @mcp.tool(description="Get a subscription.")
        def get_subscription(subscription_id: str) -> CallToolResult:
            state.calls.append(("get_subscription", {"subscription_id": subscription_id}))
            data = subscription(subscription_id)
            return CallToolResult(content=_text(str(data)), structured_content=data)

    @mcp.tool(description="Cancel a subscription. Needs the user's approval.")
    def cancel_subscription(subscription_id: str, context: Context) -> CallToolResult:
        state.calls.append(("cancel_subscription", {"subscription_id": subscription_id}))
        meta = context.request_context.meta or {}
        carried = meta.get(APPROVAL_KEY) if hasattr(meta, "get") else None
        if isinstance(carried, dict) and carried.get("operation_id") == f"cancel_{subscription_id}":
            if state.status != "cancelled":
                state.status = "cancelled"
                state.performed += 1
            if state.errors_after_perform > 0:
                state.errors_after_perform -= 1
                return CallToolResult(
                    is_error=True, content=_text("Error executing tool: database timeout")
                )
            return CallToolResult(content=_text("Cancelled."), structured_content={"done": True})
        expires = (datetime.now(UTC) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        operation = {
            "operation_id": f"cancel_{subscription_id}",
            "revision": "1",
            "summary": f"Cancel the Birch Beans subscription ({subscription_id}, $18.00 a month).",
            "terms": {
                "subscription_id": subscription_id,
                "price": {"amount": "18.00", "currency": "USD"},
            },
            "expires_at": expires,
        }
        return CallToolResult(
            is_error=True,
            content=_text("Needs approval."),
            structured_content={"operation": operation},
        )

    mcp.streamable_http_app(streamable_http_path="/mcp")
    manager = mcp.session_manager

    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Birch Coffee", "domain": base_url.split("://", 1)[1]},
                "apis": [{"type": "mcp", "url": f"{base_url}/mcp"}],
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        async with manager.run():
            yield

    return Starlette(
        routes=[
            Route("/.well-known/poppy.json", poppy_json),
            Route("/mcp", StreamableHTTPASGIApp(manager)),
        ],
        lifespan=lifespan,
    )


class McpReadCompany:
    def __init__(self, marks_reads: bool = True) -> None:
        self.state = McpReadState(marks_reads=marks_reads)
        self._served = LoopbackServer(
            lambda base_url: build_mcp_read_app(self.state, base_url),
            "the MCP read Company",
            lifespan="on",
        )
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()
