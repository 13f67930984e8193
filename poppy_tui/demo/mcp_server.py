"""The MCP server (MCP SDK `MCPServer`, streamable HTTP), mounted at /mcp.

`McpGate` wraps the SDK's ASGI app: it runs the Session header checks on every
HTTP request (refusing with the same 400/403 JSON as the API), and answers
503 + Retry-After itself for an approved tools/call whose operation is being
performed, when the caller may approve that operation (Ops 6 check 1 before
check 2), or under the `busy` fault, because a tool result can't carry an HTTP
status. Everything else is the SDK.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp_types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import Field
from starlette.datastructures import Headers

from poppy_tui.demo.accounts.guard import Challenge
from poppy_tui.demo.accounts.users import ACTION_NEEDS, READ_NEEDS
from poppy_tui.demo.context import RETRY_AFTER_SECONDS, CompanyContext, request_flags
from poppy_tui.demo.operations import Answer
from poppy_tui.demo.sessions import Refusal
from poppy_tui.demo.shop import Action, ShopError
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval, approval_from_mcp_meta
from poppy_tui.protocol.errors import InvalidApproval

# The tools that only read say so (MCP tool annotations): an agent may call them before the
# person decides (poppy-tui reads the resource an operation changes only with such a tool).
READS = ToolAnnotations(read_only_hint=True, destructive_hint=False)

MAX_MCP_BODY_BYTES = 4 * 1024 * 1024
# A JSON-RPC server error code for "not finished yet, retry" on a 503 (the SDK
# passes a JSON-RPC error body through as MCPError, so the agent sees the reason).
OPERATION_IN_PROGRESS_CODE = -32050

# What each tool needs when the Company has accounts (search is open to everyone).
TOOL_NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "list_orders": (READ_NEEDS, "see your orders"),
    "get_order": (READ_NEEDS, "see your orders"),
    "get_subscription": (READ_NEEDS, "see your subscription"),
    "get_booking": (READ_NEEDS, "see your bookings"),
    "exchange_item": (ACTION_NEEDS["exchange"], "exchange an item"),
    "cancel_subscription": (ACTION_NEEDS["cancel_subscription"], "cancel your subscription"),
    "change_booking": (ACTION_NEEDS["change_booking"], "move your fitting"),
}


def _http_scope(context: Context) -> dict[str, Any]:
    """The ASGI scope of the HTTP request a tool call came in (this server is served over
    streamable HTTP only, so there always is one)."""
    request = context.request_context.request
    assert request is not None
    return request.scope


def _text(text: str) -> list[ContentBlock]:
    return [TextContent(type="text", text=text)]


def _data_result(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=_text(json.dumps(data, indent=2, ensure_ascii=False)), structured_content=data
    )


def _tool_error(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(is_error=True, content=_text(text), structured_content=structured)


def _shop_error(exc: ShopError) -> CallToolResult:
    return _tool_error(exc.description, exc.body())


def build_mcp(ctx: CompanyContext) -> tuple[MCPServer, StreamableHTTPSessionManager]:
    root = logging.getLogger()
    handlers_before = list(root.handlers)
    level_before = root.level
    mcp = MCPServer(
        "manzanita-outfitters",
        title="Manzanita Outfitters",
        instructions="Search the catalog, look up orders, exchange items, cancel the coffee subscription, move fittings. "
        "Exchanges, cancellations and booking changes need the user's approval (Poppy operations extension v2).",
        log_level="WARNING",
    )
    # MCPServer calls logging.basicConfig, which puts a handler on the root logger
    # printing to stderr; the TUI shares the terminal, so undo it.
    for handler in [h for h in root.handlers if h not in handlers_before]:
        root.removeHandler(handler)
    root.setLevel(level_before)

    shop = ctx.shop

    async def needs_approval(tool: str, action: Action, context: Context) -> CallToolResult:
        caller = request_flags(_http_scope(context))["caller"]
        if not ctx.operations_in_use(context.headers):
            return _tool_error(ctx.approval_unavailable_text())
        try:
            approval = approval_from_mcp_meta(context.request_context.meta)
        except InvalidApproval as exc:
            return _tool_error(
                f"The approval in _meta is not valid: {exc}",
                {"error": "invalid_approval", "error_description": str(exc)},
            )
        try:
            answer = await ctx.desk.answer(action, approval, caller.owner, f"mcp:{tool}")
        except ShopError as exc:
            return _shop_error(exc)
        if answer.kind == "in_progress":
            # The gate answers 503 when it sees this first; here a duplicate slipped
            # past it, so wait for the outcome rather than call it a failure.
            assert answer.record is not None
            outcome = await ctx.desk.wait_finished(answer.record)
            if outcome is None:  # it ended without performing: judge this call afresh
                return await needs_approval(tool, action, context)
            answer = Answer("replayed", answer.operation_id, outcome=outcome)
        if answer.kind == "approval_required":
            assert answer.operation is not None
            return _tool_error(
                f"Not done yet. This needs the user's approval: {answer.short}.",
                {"operation": answer.operation},
            )
        assert answer.outcome is not None
        if answer.kind == "performed" and ctx.counters.take_drop():
            request_flags(_http_scope(context))["drop"] = True
        return CallToolResult(
            content=_text(answer.outcome.text), structured_content=answer.outcome.result
        )

    @mcp.tool(
        description="Search the Manzanita Outfitters catalog by words in the name, SKU or category.",
        annotations=READS,
    )
    def search_products(
        query: Annotated[
            str, Field(description="Words to look for, e.g. 'insulated jacket'.", max_length=200)
        ] = "",
    ) -> CallToolResult:
        with shop.lock:
            return _data_result({"products": [p.to_json() for p in shop.search(query)]})

    @mcp.tool(description="List the customer's orders.", annotations=READS)
    def list_orders() -> CallToolResult:
        with shop.lock:
            return _data_result({"orders": [o.to_json() for o in shop.orders.values()]})

    @mcp.tool(description="Get one order with its items, exchanges and charges.", annotations=READS)
    def get_order(
        order_id: Annotated[str, Field(description="The order, e.g. ord_7Hk2.", max_length=256)],
    ) -> CallToolResult:
        try:
            with shop.lock:
                return _data_result(shop.order(order_id).to_json())
        except ShopError as exc:
            return _shop_error(exc)

    @mcp.tool(
        description="Get a subscription, e.g. the Trailhead Coffee Club (sub_6Tc1).",
        annotations=READS,
    )
    def get_subscription(
        subscription_id: Annotated[str, Field(description="e.g. sub_6Tc1", max_length=256)],
    ) -> CallToolResult:
        try:
            with shop.lock:
                return _data_result(shop.subscription(subscription_id).to_json())
        except ShopError as exc:
            return _shop_error(exc)

    @mcp.tool(description="Get a booking, e.g. the jacket fitting (bkg_2Fm8).", annotations=READS)
    def get_booking(
        booking_id: Annotated[str, Field(description="e.g. bkg_2Fm8", max_length=256)],
    ) -> CallToolResult:
        try:
            with shop.lock:
                return _data_result(shop.booking(booking_id).to_json())
        except ShopError as exc:
            return _shop_error(exc)

    @mcp.tool(
        description="Exchange an item on an order for another product of the same kind. Needs the user's approval."
    )
    async def exchange_item(
        order_id: Annotated[str, Field(description="The order, e.g. ord_7Hk2.", max_length=256)],
        item_id: Annotated[
            str, Field(description="The item on the order, e.g. itm_4Qa.", max_length=256)
        ],
        replacement_sku: Annotated[
            str,
            Field(
                description="The SKU to get instead, e.g. stormline-insulated-m.", max_length=256
            ),
        ],
        ctx_: Context,
    ) -> CallToolResult:
        action = Action.of(
            "exchange", order_id=order_id, item_id=item_id, replacement_sku=replacement_sku
        )
        return await needs_approval("exchange_item", action, ctx_)

    @mcp.tool(
        description="Cancel a subscription at the end of its current period. Needs the user's approval."
    )
    async def cancel_subscription(
        subscription_id: Annotated[
            str, Field(description="The subscription, e.g. sub_6Tc1.", max_length=256)
        ],
        ctx_: Context,
    ) -> CallToolResult:
        return await needs_approval(
            "cancel_subscription",
            Action.of("cancel_subscription", subscription_id=subscription_id),
            ctx_,
        )

    @mcp.tool(
        description="Move a fitting booking to a new start time (a change fee applies). Needs the user's approval."
    )
    async def change_booking(
        booking_id: Annotated[
            str, Field(description="The booking, e.g. bkg_2Fm8.", max_length=256)
        ],
        starts_at: Annotated[
            str,
            Field(
                description="New start, RFC 3339, on the hour or half hour, 10:00-17:30 store time (America/Los_Angeles).",
                json_schema_extra={"format": "date-time"},
                max_length=64,
            ),
        ],
        ctx_: Context,
    ) -> CallToolResult:
        return await needs_approval(
            "change_booking",
            Action.of("change_booking", booking_id=booking_id, starts_at=starts_at),
            ctx_,
        )

    mcp.streamable_http_app(streamable_http_path="/mcp")
    return mcp, mcp.session_manager


class McpGate:
    """ASGI wrapper in front of the SDK's streamable HTTP app."""

    def __init__(self, ctx: CompanyContext, session_manager: StreamableHTTPSessionManager) -> None:
        self.ctx = ctx
        self.inner = StreamableHTTPASGIApp(session_manager)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            session = await self.ctx.sessions.check(headers)
        except Refusal as refusal:
            await _send_json(send, refusal.status, refusal.body, refusal.headers)
            return
        flags = request_flags(scope)
        flags["session"] = session
        try:
            flags["caller"] = caller = self.ctx.caller(headers, session)
        except Challenge as challenge:  # a bad token: refused whatever the request
            await _send_json(send, challenge.status, challenge.body(), challenge.headers())
            return
        if scope["method"] != "POST":
            await self.inner(scope, receive, send)
            return
        body, more = await _read_body(receive)
        if more:
            await _send_json(
                send,
                413,
                {"error": "invalid_request", "error_description": "The request body is too large."},
            )
            return
        tool, rpc_id = _tool_called(body)
        if tool in TOOL_NEEDS:
            needs, what = TOOL_NEEDS[tool]
            try:
                self.ctx.require(caller, needs, what)
            except Challenge as challenge:
                # The MCP authorization model: the HTTP request is refused with a
                # WWW-Authenticate challenge; the JSON-RPC error body gives the SDK the reason.
                error = {
                    "code": c.MCP_CHALLENGE_CODE,
                    "message": challenge.description,
                    "data": challenge.body(),
                }
                challenge_headers = challenge.headers()
                if (
                    self.ctx.accounts is not None
                ):  # MCP authorization: where to learn about sign-in (RFC 9728 5.1)
                    metadata_url = self.ctx.base_url + self.ctx.accounts.mcp_resource_metadata_path
                    challenge_headers["WWW-Authenticate"] += f', resource_metadata="{metadata_url}"'
                answer = {"jsonrpc": "2.0", "id": rpc_id, "error": error}
                await _send_json(send, challenge.status, answer, challenge_headers)
                return
        busy = self._busy_answer(body, headers, caller.owner)
        if busy is not None:
            await _send_json(send, 503, busy, {"Retry-After": str(RETRY_AFTER_SECONDS)})
            return
        await self.inner(scope, _replay(body, receive), send)

    def _busy_answer(self, body: bytes, headers: Headers, owner: str) -> dict[str, Any] | None:
        approval, rpc_id = _approval_in_tools_call(body)
        if approval is None or not self.ctx.operations_in_use(headers):
            return None
        data: dict[str, Any]
        if self.ctx.counters.take_busy():
            reason, data = "Busy; try again shortly.", {"error": "temporarily_unavailable"}
        elif self.ctx.desk.in_progress(approval.operation_id, owner):
            # Only to a caller that may approve it (check 1 before check 2, Ops 6): anyone else's
            # call goes to the tool, which handles it as a request without an approval, and
            # learns nothing of another owner's operation.
            reason = f"Operation {approval.operation_id} is being performed; call the tool again with the same approval."
            data = {"error": "operation_in_progress", "operation_id": approval.operation_id}
        else:
            return None
        data["retry_after"] = RETRY_AFTER_SECONDS
        return {
            "jsonrpc": "2.0",
            "id": rpc_id,
            "error": {"code": OPERATION_IN_PROGRESS_CODE, "message": reason, "data": data},
        }


def _tool_called(body: bytes) -> tuple[str | None, Any]:
    """The tool a tools/call names, and the JSON-RPC id (None, None for anything else)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None, None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return (name if isinstance(name, str) else None), message.get("id")


def _approval_in_tools_call(body: bytes) -> tuple[Approval | None, Any]:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None, None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    try:
        return approval_from_mcp_meta(meta if isinstance(meta, dict) else None), message.get("id")
    except InvalidApproval:
        return None, None  # the tool reports it


async def _read_body(receive) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_MCP_BODY_BYTES:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _replay(body: bytes, receive):
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _send_json(
    send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(body).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
    ]
    raw_headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": data, "more_body": False})


__all__ = ["McpGate", "build_mcp", "OPERATION_IN_PROGRESS_CODE"]
