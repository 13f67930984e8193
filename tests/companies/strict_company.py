"""A Company written from the operations extension v2 text alone (no poppy_tui.demo imports).

It differs from the demo where the spec lets it, so poppy-tui is tested against more than one
reading of the spec:
- another shape of domain objects (bookings), another operation_id and revision style;
- one action ("cancel booking bk_1") has the same operation_id on its API and in conversations,
  each interface issuing its own revisions (spec 3, "New terms": the Company decides which
  requests are for the same action);
- conversation replies say how it went in text only (Ops 6: "says how it went in a later
  message"); there is no structured status;
- a GET on each booking (in its OpenAPI) says whether it was cancelled;
- its Company Agent proposes before it acts: "What about bk_2?" gets "Shall I cancel bk_2?",
  and the confirmation that follows ("Yes please, go ahead") returns the operation for what it
  proposed in that conversation, so the same words are different actions in two conversations;
- an MCP server (the real MCP SDK, streamable HTTP) with a `cancel_booking` tool: the same
  action as the API's cancel, under the same operation_id;
- faults a test switches on: answer 500/502 after performing, or with any raw answer (an HTML
  page declared as JSON, a body cut off, duplicate members...), or an MCP tool error after
  performing; reuse one operation_id for every "rebook" request whatever the booking (a Company
  bug poppy-tui must flag); mint a new operation_id for every request (allowed once a Company
  forgot an operation after its expires_at, Ops 7); carry an operation in a success answer
  (a Company bug: Ops 4 puts it only in a refusal).

It is served by uvicorn on 127.0.0.1 in a background thread.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, UTC
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


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Revision:
    operation_id: str
    revision: str
    booking_id: str
    what: str  # "cancel" or "rebook:<date>"
    expires_at: datetime
    interface: str


@dataclass
class RawAnswer:
    """An answer exactly as sent: status, Content-Type, body bytes; `cut_off` promises more bytes
    than it sends (Content-Length), so the connection breaks mid-body."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    cut_off: bool = False
    perform: bool = True  # False: answered instead of performing (a refusal)


@dataclass
class StrictState:
    """What the Company knows; tests read and steer it."""

    bookings: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {
            "bk_1": {
                "id": "bk_1",
                "trip": "Lisbon, 3 nights",
                "status": "confirmed",
                "date": "2026-11-02",
            },
            "bk_2": {
                "id": "bk_2",
                "trip": "Porto, 2 nights",
                "status": "confirmed",
                "date": "2026-11-20",
            },
        }
    )
    revisions: dict[tuple[str, str], Revision] = field(default_factory=dict)
    performed: dict[str, list[Any]] = field(
        default_factory=dict
    )  # operation_id -> [first response]
    perform_count: dict[str, int] = field(default_factory=dict)
    expiry_seconds: float = 600.0
    # The expires_at the Company writes instead of now + expiry_seconds, as text (any RFC 3339
    # date-time: "9999-12-31T23:59:59Z", "1969-07-20T20:17:00Z"); its revisions are valid anyway.
    expires_at_text: str | None = None
    # Faults: answer this status (after performing) to the next N approvals that perform or replay.
    error_after_perform: int | None = None
    error_after_perform_times: int = 0
    # Raw answers (RawAnswer) given, after performing, to the next approvals instead of the Company's own.
    approval_answers: list[RawAnswer] = field(default_factory=list)
    # MCP: answer the next approvals with a tool error after performing: "plain" (text only, as
    # an MCP SDK server reports a tool that raised) or "json" (structuredContent with its own error).
    mcp_errors_after_perform: list[str] = field(default_factory=list)
    # Give every request that needs approval a new operation_id (as after forgetting the first).
    mint_operation_ids: bool = False
    # Carry the operation in a success answer (API 200, MCP isError false): a Company bug.
    operation_in_success: bool = False
    # Raw answers given to the next POSTs of an approval message, after accepting it.
    conversation_post_answers: list[RawAnswer] = field(default_factory=list)
    # Answer text-only "I'm not sure yet" to this many approval messages before saying it's done.
    conversation_silent_replies: int = 0
    received: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seen_messages: dict[tuple[str, str], Any] = field(default_factory=dict)
    _counter: Any = field(default_factory=lambda: itertools.count(1))
    # The OpenAPI's `paths`, when a test needs others than the usual ones.
    openapi_paths: dict[str, Any] | None = None
    # Where its conversation endpoint is, when not on its own origin (e.g. "http://localhost:PORT").
    conversation_origin: str | None = None
    reads: list[str] = field(
        default_factory=list
    )  # the path of every GET outside the well-known ones
    # say(conversation_id, text, extensions=None, data=None): the Company writes later, unprompted.
    say: Any = None
    # conversation_id -> the booking its Company Agent offered to cancel ("What about bk_2?"),
    # which a "go ahead" there then asks approval for.
    proposals: dict[str, str] = field(default_factory=dict)

    def approvals_received(self) -> list[str]:
        """The Poppy-Approval header of every HTTP request that carried one, in order."""
        return [h["poppy-approval"] for _, _, h, _ in self.received if h.get("poppy-approval")]

    def next_number(self) -> int:
        return next(self._counter)

    def operation_id_for(self, base: str) -> str:
        return f"{base}_{self.next_number()}" if self.mint_operation_ids else base

    def approved_revision(
        self, approval: tuple[str, str] | None, booking_id: str, what: str
    ) -> Revision | None:
        """The revision an approval names, if it is for this booking and action and still
        valid, or already performed (then its first answer is replayed, Ops 7)."""
        revision = self.revisions.get(approval) if approval is not None else None
        if revision is None or revision.booking_id != booking_id or revision.what != what:
            return None
        if revision.operation_id in self.performed or revision.expires_at > datetime.now(UTC):
            return revision
        return None

    def new_revision(
        self, operation_id: str, booking_id: str, what: str, interface: str
    ) -> Revision:
        number = self.next_number()
        revision = Revision(
            operation_id,
            f"{interface}-r{number}",
            booking_id,
            what,
            datetime.now(UTC) + timedelta(seconds=self.expiry_seconds),
            interface,
        )
        self.revisions[(operation_id, revision.revision)] = revision
        return revision

    def operation_json(self, revision: Revision) -> dict[str, Any]:
        booking = self.bookings[revision.booking_id]
        if revision.what == "cancel":
            summary = f"Cancel booking {booking['id']} ({booking['trip']}). No fee is charged."
            terms = {"booking_id": booking["id"], "action": "cancel"}
        else:
            date = revision.what.split(":", 1)[1]
            summary = (
                f"Move booking {booking['id']} ({booking['trip']}) to {date}. No fee is charged."
            )
            terms = {"booking_id": booking["id"], "action": "rebook", "date": date}
        return {
            "operation_id": revision.operation_id,
            "revision": revision.revision,
            "summary": summary,
            "terms": terms,
            "expires_at": self.expires_at_text or _stamp(revision.expires_at),
        }

    def perform(self, revision: Revision) -> dict[str, Any]:
        booking = self.bookings[revision.booking_id]
        if revision.what == "cancel":
            booking["status"] = "cancelled"
        else:
            booking["date"] = revision.what.split(":", 1)[1]
        self.perform_count[revision.operation_id] = (
            self.perform_count.get(revision.operation_id, 0) + 1
        )
        return dict(booking)


def _approval_of(value: str | None) -> tuple[str, str] | None:
    if not value:
        return None
    parsed = http_sfv.Dictionary()
    parsed.parse(value.encode("ascii"))
    try:
        return str(parsed["operation_id"].value), str(parsed["revision"].value)
    except KeyError:
        return None


def _declares_operations(request: Request) -> bool:
    return '"operations";v="2"' in request.headers.get("poppy-extensions", "").replace(" ", "")


def build_strict_app(state: StrictState, base_url: str) -> Starlette:
    async def poppy_json(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Strict Travel", "domain": base_url.split("://", 1)[1]},
                "apis": [
                    {"type": "openapi", "url": f"{base_url}/openapi.json"},
                    {"type": "mcp", "url": f"{base_url}/mcp"},
                ],
                "agent": {
                    "protocols": [
                        {
                            "type": "poppy",
                            "endpoint": f"{state.conversation_origin or base_url}/conversations",
                        }
                    ]
                },
                "extensions": {"operations": [{"version": "2"}]},
            }
        )

    async def openapi(request: Request) -> Response:
        return JSONResponse(
            {
                "openapi": "3.1.0",
                "info": {"title": "Strict Travel", "version": "1"},
                "paths": state.openapi_paths
                if state.openapi_paths is not None
                else {
                    "/bookings/{booking_id}": {
                        "get": {"operationId": "getBooking", "summary": "A booking"}
                    },
                    "/bookings/{booking_id}/cancel": {
                        "post": {
                            "operationId": "cancelBooking",
                            # Over 60 characters, as real summaries are: lists must not cut a few off.
                            "summary": "Cancel a booking; the fare rules decide the fee (none if refundable)",
                        }
                    },
                    "/bookings/{booking_id}/rebook": {"post": {"operationId": "rebookBooking"}},
                },
            }
        )

    async def get_booking(request: Request) -> Response:
        state.reads.append(request.url.path)
        booking = state.bookings.get(request.path_params["booking_id"])
        if booking is None:
            return JSONResponse({"error": "not_found"}, status_code=404)
        return JSONResponse(dict(booking))

    def raw_response(raw: RawAnswer) -> Response:
        headers = {"content-type": raw.content_type, **raw.headers}
        if raw.cut_off:
            headers["content-length"] = str(len(raw.body) + 64)
        return Response(raw.body, status_code=raw.status, headers=headers)

    def answer_approval(revision: Revision) -> Response:
        if state.approval_answers and not state.approval_answers[0].perform:
            return raw_response(state.approval_answers.pop(0))
        first = state.performed.get(revision.operation_id)
        if first is None:
            first = state.performed[revision.operation_id] = [state.perform(revision)]
        if state.error_after_perform is not None and state.error_after_perform_times > 0:
            state.error_after_perform_times -= 1
            return JSONResponse({"error": "internal_error"}, status_code=state.error_after_perform)
        if state.approval_answers:
            return raw_response(state.approval_answers.pop(0))
        return JSONResponse(first[0])

    async def api_action(request: Request, what: str) -> Response:
        booking_id = request.path_params["booking_id"]
        body = json.loads(await request.body() or b"null")
        state.received.append((request.method, request.url.path, dict(request.headers), body))
        if booking_id not in state.bookings:
            return JSONResponse({"error": "not_found"}, status_code=404)
        if "poppy-session" not in request.headers:
            return JSONResponse({"error": "invalid_session"}, status_code=403)
        if not _declares_operations(request):
            return JSONResponse(
                {"error": "extension_required", "extension": "operations"}, status_code=403
            )
        if what == "rebook":
            date = (
                (body or {}).get("date", "2026-12-01") if isinstance(body, dict) else "2026-12-01"
            )
            what = f"rebook:{date}"
            operation_id = "rbk_shared"  # the fault: one operation_id for every rebook request
        else:
            operation_id = f"cxl_{booking_id}"
        approval = _approval_of(request.headers.get("poppy-approval"))
        if state.mint_operation_ids:
            named = state.approved_revision(approval, booking_id, what)
            if named is not None:
                return answer_approval(named)
            operation_id = state.operation_id_for(operation_id)
        if approval is not None and approval[0] == operation_id:
            if operation_id in state.performed:
                return answer_approval(
                    state.revisions.get(
                        approval,
                        Revision(operation_id, "", booking_id, what, datetime.now(UTC), "api"),
                    )
                )
            revision = state.revisions.get(approval)
            if (
                revision is not None
                and revision.expires_at > datetime.now(UTC)
                and revision.booking_id == booking_id
                and revision.what == what
            ):
                return answer_approval(revision)
        revision = state.new_revision(operation_id, booking_id, what, "api")
        refusal = {"error": "approval_required", "operation": state.operation_json(revision)}
        if state.operation_in_success:
            return JSONResponse(refusal, status_code=200)  # the bug: a success status
        return JSONResponse(refusal, status_code=403)

    async def cancel(request: Request) -> Response:
        return await api_action(request, "cancel")

    async def rebook(request: Request) -> Response:
        return await api_action(request, "rebook")

    # ---- conversations ---------------------------------------------------------------------

    def company_says(
        conversation_id: str,
        text: str,
        extensions: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        events = state.conversations[conversation_id]
        message: dict[str, Any] = {
            "id": f"msg_strict{state.next_number():06d}",
            "role": "company",
            "author": {"type": "agent"},
            "text": text,
        }
        if extensions:
            message["extensions"] = extensions
        if data is not None:
            message["data"] = data
        events.append(
            {
                "id": f"evt_{len(events) + 1}",
                "type": "message",
                "created_at": _stamp(datetime.now(UTC)),
                "message": message,
            }
        )

    def on_message(conversation_id: str, message: dict[str, Any]) -> None:
        events = state.conversations[conversation_id]
        events.append(
            {
                "id": f"evt_{len(events) + 1}",
                "type": "message",
                "created_at": _stamp(datetime.now(UTC)),
                "message": {**message, "role": "user"},
            }
        )
        approval = ((message.get("extensions") or {}).get("operations") or {}).get("approval")
        if isinstance(approval, dict):
            key = (str(approval.get("operation_id")), str(approval.get("revision")))
            revision = state.revisions.get(key)
            if revision is None or revision.expires_at <= datetime.now(UTC):
                company_says(conversation_id, "That approval doesn't match anything I can do now.")
                return
            if state.conversation_silent_replies > 0:
                state.conversation_silent_replies -= 1
                company_says(conversation_id, "Thanks, I'm looking into it.")
                return
            if revision.operation_id not in state.performed:
                state.performed[revision.operation_id] = [state.perform(revision)]
            company_says(conversation_id, f"Done: booking {revision.booking_id} is now cancelled.")
            return
        text = str(message.get("text", "")).lower()

        def offer(booking_id: str) -> None:
            revision = state.new_revision(
                state.operation_id_for(f"cxl_{booking_id}"), booking_id, "cancel", "conversation"
            )
            company_says(
                conversation_id,
                f"I can cancel {booking_id} once you approve.",
                {"operations": {"operation": state.operation_json(revision)}},
            )

        if "go ahead" in text and conversation_id in state.proposals:
            offer(state.proposals.pop(conversation_id))
            return
        for booking_id in state.bookings:
            if booking_id in text and "what about" in text:
                state.proposals[conversation_id] = booking_id
                company_says(conversation_id, f"Shall I cancel {booking_id}?")
                return
            if booking_id in text and "cancel" in text:
                offer(booking_id)
                return
        company_says(conversation_id, "How can I help?")

    state.say = company_says

    async def create_conversation(request: Request) -> Response:
        payload = await request.json()
        conversation_id = f"cnv_strict{state.next_number():06d}"
        state.conversations[conversation_id] = []
        on_message(conversation_id, payload["message"])
        return JSONResponse({"conversation_id": conversation_id}, status_code=201)

    async def post_message(request: Request) -> Response:
        conversation_id = request.path_params["conversation_id"]
        if conversation_id not in state.conversations:
            return JSONResponse({"error": "not_found"}, status_code=404)
        payload = await request.json()
        message = payload["message"]
        key = (conversation_id, str(message.get("id")))
        if key not in state.seen_messages:  # a repeated message ID adds nothing (spec 8.3)
            state.seen_messages[key] = True
            on_message(conversation_id, message)
        carries_approval = "approval" in ((message.get("extensions") or {}).get("operations") or {})
        if carries_approval and state.conversation_post_answers:
            return raw_response(state.conversation_post_answers.pop(0))
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

    async def list_section(request: Request) -> Response:
        state.reads.append(request.url.path)
        return JSONResponse({"items": list(state.bookings.values())})

    session_manager = build_strict_mcp(state)

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
            Route("/bookings/{booking_id}", get_booking),
            Route("/bookings/{booking_id}/cancel", cancel, methods=["POST"]),
            Route("/bookings/{booking_id}/rebook", rebook, methods=["POST"]),
            Route("/conversations", create_conversation, methods=["POST"]),
            Route("/conversations/{conversation_id}/messages", post_message, methods=["POST"]),
            Route("/conversations/{conversation_id}/events", read_events),
            Route("/{section}", list_section),  # a collection: the bookings, all of them
        ],
    )


def build_strict_mcp(state: StrictState) -> StreamableHTTPSessionManager:
    """The MCP server: `cancel_booking` needs approval (Ops 4 MCP: an error result with the
    operation in structuredContent; the approval comes back in `_meta`, Ops 6)."""
    root = logging.getLogger()
    handlers_before, level_before = list(root.handlers), root.level
    server = MCPServer("strict-travel", log_level="WARNING")
    for handler in [h for h in root.handlers if h not in handlers_before]:
        root.removeHandler(handler)  # MCPServer configures logging; keep pytest's
    root.setLevel(level_before)

    def tool_error(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
        return CallToolResult(
            is_error=True,
            content=[TextContent(type="text", text=text)],
            structured_content=structured,
        )

    @server.tool(description="Cancel a booking. Needs the user's approval.")
    def cancel_booking(booking_id: str, context: Context) -> CallToolResult:
        meta = context.request_context.meta or {}
        carried = meta.get(MCP_APPROVAL_KEY) if hasattr(meta, "get") else None
        approval = (
            (str(carried.get("operation_id")), str(carried.get("revision")))
            if isinstance(carried, dict)
            else None
        )
        state.received.append(
            ("TOOL", "cancel_booking", {}, {"booking_id": booking_id, "approval": approval})
        )
        if booking_id not in state.bookings:
            return tool_error(f"No booking {booking_id}.", {"error": "not_found"})
        revision = state.approved_revision(approval, booking_id, "cancel")
        if revision is not None and (
            state.mint_operation_ids or revision.operation_id == f"cxl_{booking_id}"
        ):
            first = state.performed.get(revision.operation_id)
            if first is None:
                first = state.performed[revision.operation_id] = [state.perform(revision)]
            if state.mcp_errors_after_perform:
                kind = state.mcp_errors_after_perform.pop(0)
                if kind == "plain":
                    return tool_error("Error executing tool cancel_booking: database timeout")
                return tool_error(
                    "Something went wrong.",
                    {"error": "internal_error", "message": "database timeout"},
                )
            return CallToolResult(
                content=[TextContent(type="text", text=f"Cancelled {booking_id}.")],
                structured_content=dict(first[0]),
            )
        revision = state.new_revision(
            state.operation_id_for(f"cxl_{booking_id}"), booking_id, "cancel", "mcp"
        )
        text = f"Not done yet. This needs the user's approval: cancel {booking_id}."
        result = tool_error(text, {"operation": state.operation_json(revision)})
        if state.operation_in_success:
            result.is_error = False  # the bug: a success flag on a refusal
        return result

    server.streamable_http_app(streamable_http_path="/mcp")
    return server.session_manager


class StrictCompany:
    """The strict Company served on 127.0.0.1 in a thread; stop() when done."""

    def __init__(self) -> None:
        self.state = StrictState()
        self._served = LoopbackServer(
            lambda base_url: build_strict_app(self.state, base_url),
            "the strict Company",
            lifespan="on",
        )
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()
