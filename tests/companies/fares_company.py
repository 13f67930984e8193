"""A Company written from the operations extension v2 text alone (no poppy_tui.demo imports) whose
prices move: "Quince Fares" changes a fare for a price, and the price may change between the
terms it offered and the approval it gets (Ops 3, "New terms"; Ops 6, check 3).

Each fare has a script a test sets: what the Company does with each approval it gets for that
fare, in order, on any interface (API, MCP, conversation):
- "reprice": the price changed; nothing is performed and the approval is answered with a new
  revision of the same operation (an operation for what the request asks, Ops 6);
- "busy" / "busy:N": 503 with no Retry-After / with `Retry-After: N` (Ops 7: the Company is
  unsure, or still performing; API only);
- "perform" (also what it does once the script is empty): performs, at most once per operation
  whatever revision is approved (Ops 3, Ops 7); an approval of a performed operation gets the
  first answer again.
Revisions live `expires_in` seconds by the Company's own clock (long by default: the tests move
the agent's clock by hand and the Company must not forget meanwhile).

Served by uvicorn on 127.0.0.1 in a background thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import http_sfv
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp_types import CallToolResult, TextContent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .serving import LoopbackServer

MCP_APPROVAL_KEY = "personalagentprotocol.org/approval"  # Ops 6, MCP


@dataclass
class Approval:
    """One approval the Company received."""

    interface: str
    fare_id: str
    operation_id: str
    revision: str
    at: float  # time.monotonic() when it arrived


@dataclass
class FaresState:
    prices: dict[str, int] = field(default_factory=lambda: {"f1": 120, "f2": 80, "f3": 200})
    # fare -> what to do with each approval for it, in order (see the module docstring)
    scripts: dict[str, list[str]] = field(default_factory=dict)
    expires_in: float = 7200.0
    # operation_id -> its revisions (number -> price), newest last
    revisions: dict[str, dict[str, int]] = field(default_factory=dict)
    performed: dict[str, dict[str, Any]] = field(default_factory=dict)  # op -> first answer
    perform_count: dict[str, int] = field(default_factory=dict)
    approvals: list[Approval] = field(default_factory=list)
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seen_messages: set[tuple[str, str]] = field(default_factory=set)
    numbers: int = 0

    def approvals_for(self, fare_id: str) -> list[Approval]:
        return [a for a in self.approvals if a.fare_id == fare_id]

    def next_number(self) -> int:
        self.numbers += 1
        return self.numbers

    # ---- the operation of a fare change ----------------------------------------------------------

    def operation(self, fare_id: str, interface: str, new: bool = False) -> dict[str, Any]:
        """The fare change's operation, at its newest revision (a new one when `new`)."""
        operation_id = f"chg_{fare_id}_{interface}"
        revisions = self.revisions.setdefault(operation_id, {})
        if new or not revisions:
            if revisions:
                self.prices[fare_id] += 15  # the price moved
            revisions[str(len(revisions) + 1)] = self.prices[fare_id]
        revision = str(len(revisions))
        price = revisions[revision]
        expires = datetime.now(UTC) + timedelta(seconds=self.expires_in)
        return {
            "operation_id": operation_id,
            "revision": revision,
            "summary": f"Change fare {fare_id} for **{price} EUR**.",
            "terms": {"fare": fare_id, "price": {"amount": price, "currency": "EUR"}},
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def answer(self, interface: str, fare_id: str, approval: tuple[str, str] | None) -> tuple:
        """("operation", op) / ("busy", retry_after or None) / ("performed", answer)."""
        if approval is None:
            return ("operation", self.operation(fare_id, interface))
        operation_id, revision = approval
        self.approvals.append(
            Approval(interface, fare_id, operation_id, revision, time.monotonic())
        )
        if operation_id in self.performed:
            return ("performed", self.performed[operation_id])  # the first answer again (Ops 7)
        revisions = self.revisions.get(operation_id, {})
        if revision not in revisions:
            return ("operation", self.operation(fare_id, interface))
        if revision != str(len(revisions)):
            return ("operation", self.operation(fare_id, interface))  # terms since changed
        script = self.scripts.get(fare_id) or []
        step = script.pop(0) if script else "perform"
        if step == "reprice":
            return ("operation", self.operation(fare_id, interface, new=True))
        if step.startswith("busy"):
            _, _, seconds = step.partition(":")
            return ("busy", int(seconds) if seconds else None)
        self.perform_count[operation_id] = self.perform_count.get(operation_id, 0) + 1
        done = {"fare": fare_id, "status": "changed", "price": revisions[revision]}
        self.performed[operation_id] = done
        return ("performed", done)


def _approval_header(value: str | None) -> tuple[str, str] | None:
    if not value:
        return None
    parsed = http_sfv.Dictionary()
    parsed.parse(value.encode("ascii"))
    try:
        return str(parsed["operation_id"].value), str(parsed["revision"].value)
    except KeyError:
        return None


def build_fares_app(state: FaresState, base_url: str) -> Starlette:
    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Quince Fares", "domain": base_url.split("://", 1)[1]},
                "apis": [
                    {"type": "openapi", "url": f"{base_url}/openapi.json"},
                    {"type": "mcp", "url": f"{base_url}/mcp"},
                ],
                "agent": {
                    "protocols": [{"type": "poppy", "endpoint": f"{base_url}/conversations"}]
                },
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    async def openapi(request: Request) -> Response:
        return JSONResponse(
            {
                "openapi": "3.1.0",
                "info": {"title": "Quince Fares", "version": "1"},
                "paths": {"/fares/{fare_id}/change": {"post": {"operationId": "changeFare"}}},
            }
        )

    async def change(request: Request) -> Response:
        fare_id = request.path_params["fare_id"]
        if fare_id not in state.prices:
            return JSONResponse({"error": "not_found"}, status_code=404)
        if "poppy-session" not in request.headers:
            return JSONResponse({"error": "invalid_session"}, status_code=403)
        approval = _approval_header(request.headers.get("poppy-approval"))
        kind, value = state.answer("api", fare_id, approval)
        if kind == "operation":
            return JSONResponse({"error": "approval_required", "operation": value}, status_code=403)
        if kind == "busy":
            headers = {} if value is None else {"retry-after": str(value)}
            return JSONResponse(
                {"error": "operation_in_progress"}, status_code=503, headers=headers
            )
        return JSONResponse(value, status_code=201)

    # ---- conversations -------------------------------------------------------------------------

    def company_says(conversation_id: str, text: str, **message: Any) -> None:
        events = state.conversations[conversation_id]
        events.append(
            {
                "id": f"evt_{len(events) + 1}",
                "type": "message",
                "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "message": {
                    "id": f"msg_quince{state.next_number():08d}",
                    "role": "company",
                    "author": {"type": "agent"},
                    "text": text,
                    **message,
                },
            }
        )

    def on_message(conversation_id: str, message: dict[str, Any]) -> None:
        approval = ((message.get("extensions") or {}).get("operations") or {}).get("approval")
        text = str(message.get("text", "")).lower()
        fare_id = next((f for f in state.prices if f in text), None)
        if isinstance(approval, dict):
            operation_id = str(approval.get("operation_id"))
            fare_id = operation_id.split("_")[1] if operation_id.count("_") >= 2 else None
            if fare_id not in state.prices:
                company_says(conversation_id, "That approval doesn't match anything I offered.")
                return
            key = (operation_id, str(approval.get("revision")))
            kind, value = state.answer("conversation", fare_id, key)
            if kind == "operation":
                company_says(
                    conversation_id,
                    "The price changed; here are the new terms.",
                    extensions={"operations": {"operation": value}},
                )
            elif kind == "performed":
                company_says(
                    conversation_id,
                    f"Done: fare {fare_id} changed.",
                    data={"status": "performed", "operation_id": operation_id},
                )
            else:
                company_says(conversation_id, "Still working on it.")
            return
        if fare_id is None:
            company_says(conversation_id, "Which fare?")
            return
        _, operation = state.answer("conversation", fare_id, None)
        company_says(
            conversation_id,
            f"I can change {fare_id} once you approve.",
            extensions={"operations": {"operation": operation}},
        )

    async def create_conversation(request: Request) -> Response:
        payload = await request.json()
        conversation_id = f"cnv_quince{state.next_number():08d}"
        state.conversations[conversation_id] = []
        state.seen_messages.add((conversation_id, str(payload["message"].get("id"))))
        on_message(conversation_id, payload["message"])
        return JSONResponse({"conversation_id": conversation_id}, status_code=201)

    async def post_message(request: Request) -> Response:
        conversation_id = request.path_params["conversation_id"]
        if conversation_id not in state.conversations:
            return JSONResponse({"error": "not_found"}, status_code=404)
        message = (await request.json())["message"]
        key = (conversation_id, str(message.get("id")))
        if key not in state.seen_messages:  # a repeated message ID adds nothing (spec 8.3)
            state.seen_messages.add(key)
            on_message(conversation_id, message)
        return JSONResponse({"accepted": True}, status_code=202)

    async def read_events(request: Request) -> Response:
        conversation_id = request.path_params["conversation_id"]
        events = state.conversations.get(conversation_id)
        if events is None:
            return JSONResponse({"error": "not_found"}, status_code=404)
        start = int(request.query_params.get("cursor") or 0)
        return JSONResponse(
            {
                "conversation_id": conversation_id,
                "events": events[start:],
                "cursor": str(len(events)),
                "has_more": False,
            }
        )

    session_manager = build_fares_mcp(state)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        async with session_manager.run():
            yield

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/mcp", StreamableHTTPASGIApp(session_manager)),
            Route("/.well-known/poppy.json", poppy_json),
            Route("/openapi.json", openapi),
            Route("/fares/{fare_id}/change", change, methods=["POST"]),
            Route("/conversations", create_conversation, methods=["POST"]),
            Route("/conversations/{conversation_id}/messages", post_message, methods=["POST"]),
            Route("/conversations/{conversation_id}/events", read_events),
        ],
    )


def build_fares_mcp(state: FaresState) -> StreamableHTTPSessionManager:
    """`change_fare` needs approval (Ops 4 MCP: an error result with the operation in
    structuredContent; the approval comes back in `_meta`, Ops 6)."""
    root = logging.getLogger()
    handlers_before, level_before = list(root.handlers), root.level
    server = MCPServer("quince-fares", log_level="WARNING")
    for handler in [h for h in root.handlers if h not in handlers_before]:
        root.removeHandler(handler)  # MCPServer configures logging; keep pytest's
    root.setLevel(level_before)

    @server.tool(description="Change a fare. Needs the user's approval.")
    def change_fare(fare_id: str, context: Context) -> CallToolResult:
        meta = context.request_context.meta or {}
        carried = meta.get(MCP_APPROVAL_KEY) if hasattr(meta, "get") else None
        approval = (
            (str(carried.get("operation_id")), str(carried.get("revision")))
            if isinstance(carried, dict)
            else None
        )
        if fare_id not in state.prices:
            return CallToolResult(
                is_error=True,
                content=[TextContent(type="text", text=f"No fare {fare_id}.")],
                structured_content={"error": "not_found"},
            )
        kind, value = state.answer("mcp", fare_id, approval)
        if kind == "operation":
            return CallToolResult(
                is_error=True,
                content=[TextContent(type="text", text="This needs the user's approval.")],
                structured_content={"operation": value},
            )
        if kind == "busy":
            return CallToolResult(
                is_error=True,
                content=[TextContent(type="text", text="Still working on it.")],
                structured_content={"error": "operation_in_progress"},
            )
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(value))],
            structured_content=dict(value),
        )

    server.streamable_http_app(streamable_http_path="/mcp")
    return server.session_manager


class FaresCompany:
    """Quince Fares served on 127.0.0.1 in a thread; stop() when done."""

    def __init__(self) -> None:
        self.state = FaresState()
        self._served = LoopbackServer(
            lambda base_url: build_fares_app(self.state, base_url),
            "Quince Fares",
            lifespan="on",
        )
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()
