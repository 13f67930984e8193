"""The simulated Company's faces: its API, its MCP server (the real MCP SDK over streamable HTTP)
and its conversations (the core spec's conversation endpoints, as tests/companies/ serve them),
on 127.0.0.1 with uvicorn. Written from the spec alone (no poppy_tui imports, nothing from
poppy_tui/demo/); what it decides is world.py's, which a test swaps per simulated world.

The faces, each the spec's form of an `Answer`:
- API (Ops 4, 6): `POST /items/{item}/{verb}` with `{"qty": n}`; the approval in
  `Poppy-Approval`. An operation is a 403 `approval_required`; performed is a 200 with the result;
  refused a 409; busy a 503 with or without Retry-After; a sign-in challenge a 401 with
  `WWW-Authenticate: Bearer error="sign_in_required"`; a revoked token a 401 `invalid_token`.
- MCP: the tool `act(verb, item, qty)`; the approval in `_meta`. The operation comes as an error
  result with it in structuredContent; refused, an error result with `{"error": "not_performed"}`
  (the structured word poppy-tui reads as a refusal, docs/protocol-choices.md); HTTP-layer
  answers (503, 5xx, 401 challenges, a dropped connection) come from a gate in front of the SDK's
  app, as the MCP authorization model puts challenges there.
- Conversations: `POST /conversations`, `POST /conversations/{id}/messages`,
  `GET /conversations/{id}/events`; a message's answer carries its events (the 0.2 `?wait=`
  form), later reads page through the rest. An operation is in a Company message's
  `extensions.operations.operation`; the outcome of an approval message in `data.status`
  (performed, not_performed), or in words only; a sign-in request is an `authorization` event.
  A message sent again with the same ID gets its first answer and adds nothing (spec 8.3).
- A dropped connection sends the status line and headers, then closes (uvicorn closes a
  connection whose app fails after the response started): after performing it is a 200 cut off,
  before performing a 5xx cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import http_sfv
import jwt
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp_types import CallToolResult, TextContent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.companies.serving import LoopbackServer

from .world import Answer, Asked, World

NAME = "Quince Hire"
MCP_APPROVAL_KEY = "personalagentprotocol.org/approval"  # Ops 6, MCP
CHALLENGE = 'Bearer error="sign_in_required", scope="orders", error_description="Sign in first"'
REFUSED_TOKEN = 'Bearer error="invalid_token"'
# Only a simulation step that never releases a held request waits this long.
LONGEST_HOLD_SECONDS = 30.0


class Dropped(Exception):
    """Raised after the response started: uvicorn then closes the connection (no 500)."""


@dataclass
class SendHold:
    """Holds the next request carrying an approval, before or after the Company performs it,
    while the simulation drops the agent that sent it (a kill mid-send)."""

    after_performing: bool
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)  # the Company has answered

    async def wait(self) -> None:
        self.arrived.set()
        await asyncio.to_thread(self.release.wait, LONGEST_HOLD_SECONDS)


def session_of(request_headers: Any) -> str | None:
    """The Session's ID from the Poppy-Session JWT (this Company trusts it unchecked: the
    simulation is about operations, not identity)."""
    token = request_headers.get("poppy-session", "")
    try:
        return str(jwt.decode(token, options={"verify_signature": False})["sid"])
    except Exception:  # noqa: BLE001 - no Session, or none readable
        return None


def bearer_of(request_headers: Any) -> str | None:
    value = request_headers.get("authorization", "")
    return value[len("Bearer ") :] if value.startswith("Bearer ") else None


def approval_header(value: str | None) -> tuple[str, str] | None:
    if not value:
        return None
    parsed = http_sfv.Dictionary()
    try:
        parsed.parse(value.encode("ascii"))
        return str(parsed["operation_id"].value), str(parsed["revision"].value)
    except (KeyError, ValueError, UnicodeEncodeError):
        return None


def http_answer(answer: Answer) -> Response:
    """An Answer over HTTP (API, and MCP's HTTP layer); `drop` is the caller's."""
    headers: dict[str, str] = {}
    if answer.kind == "operation":
        body: dict[str, Any] = {"error": "approval_required", "operation": answer.body}
    elif answer.kind == "performed":
        body = dict(answer.body or {})
    elif answer.kind == "challenge":
        body = {"error": "sign_in_required", "scope": "orders"}
        headers["WWW-Authenticate"] = CHALLENGE
    elif answer.kind == "invalid_token":
        body = {"error": "invalid_token"}
        headers["WWW-Authenticate"] = REFUSED_TOKEN
    elif answer.kind == "busy":
        body = {"error": "busy", "error_description": "being performed, or not known yet"}
        if answer.retry_after is not None:
            headers["Retry-After"] = str(answer.retry_after)
    elif answer.kind == "refused":
        body = dict(answer.body or {"error": "not_performed"})
    else:
        body = {"error": "internal_error"}
    return JSONResponse(body, status_code=answer.status, headers=headers)


async def send_dropped(answer: Answer, send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": answer.status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"400")],
        }
    )
    raise Dropped("the connection is dropped on purpose")


class SimCompany:
    """Served on 127.0.0.1 for a whole test run; `world` is replaced for each simulated world."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._served = LoopbackServer(self._build, "the simulated Company", lifespan="on")
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()

    # ---- the approval hold ----------------------------------------------------------------------

    async def _answer_approval(self, asked, approval, token, sid) -> Answer:
        hold, self.world.hold = self.world.hold, None
        try:
            if hold is not None and not hold.after_performing:
                await hold.wait()
            answer = self.world.approval(asked, approval, token, sid)
            if hold is not None and hold.after_performing:
                await hold.wait()
            return answer
        finally:
            if hold is not None:
                hold.done.set()

    # ---- the app --------------------------------------------------------------------------------

    def _build(self, base_url: str) -> Any:
        company = self

        async def poppy_json(request: Request) -> Response:
            return JSONResponse(
                {
                    "protocol_version": "0.4",
                    "organization": {"name": NAME, "domain": base_url.split("://", 1)[1]},
                    "auth": {"issuer": base_url, "device": {"scopes": ["poppy:read", "orders"]}},
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
                    "info": {"title": NAME, "version": "1"},
                    "paths": {
                        "/items/{item}/hold": {"post": {"operationId": "holdItem"}},
                        "/items/{item}/order": {"post": {"operationId": "orderItem"}},
                    },
                }
            )

        async def api_action(request: Request) -> Response:
            world = company.world
            verb = request.path_params["verb"]
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                body = {}
            qty = body.get("qty", 1) if isinstance(body, dict) else 1
            asked = Asked("api", verb, request.path_params["item"], int(qty))
            token, sid = bearer_of(request.headers), session_of(request.headers)
            approval = approval_header(request.headers.get("poppy-approval"))
            if approval is None:
                return http_answer(world.first_request(asked, token, sid))
            answer = await company._answer_approval(asked, approval, token, sid)
            if answer.kind == "drop":
                return _DroppedResponse(answer)
            return http_answer(answer)

        # ---- conversations ------------------------------------------------------------------

        def event(conversation_id: str, kind: str, **fields: Any) -> dict[str, Any]:
            events = company.world.conversations[conversation_id]
            made = {
                "id": f"evt_{len(events) + 1}",
                "type": kind,
                "created_at": company.world.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
                **fields,
            }
            events.append(made)
            return made

        def says(conversation_id: str, text: str, **extra: Any) -> dict[str, Any]:
            message = {
                "id": f"msg_q{company.world.number():06d}",
                "role": "company",
                "author": {"type": "agent"},
                "text": text,
                **extra,
            }
            return event(conversation_id, "message", message=message)

        def sign_in_asked(conversation_id: str) -> list[dict[str, Any]]:
            return [
                event(
                    conversation_id,
                    "authorization",
                    error="sign_in_required",
                    scope="orders",
                    error_description="Sign in first",
                ),
                says(conversation_id, "Please sign in first; then I can go ahead."),
            ]

        def as_events(conversation_id: str, answer: Answer) -> list[dict[str, Any]]:
            if answer.kind == "operation":
                return [
                    says(
                        conversation_id,
                        "I can do that once you approve.",
                        extensions={"operations": {"operation": answer.body}},
                    )
                ]
            if answer.kind == "performed":
                data = {"status": "performed", "operation_id": answer.operation_id}
                return [says(conversation_id, "Done.", data=data)]
            if answer.kind == "words":
                return [says(conversation_id, "All done, thanks!")]
            if answer.kind == "refused":
                data = {"status": "not_performed"}
                return [says(conversation_id, "I could not do that one.", data=data)]
            if answer.kind == "challenge":
                return sign_in_asked(conversation_id)
            if answer.kind == "unhelpful":
                return [says(conversation_id, "How can I help? One thing per conversation.")]
            return []  # no_reply: accepted, nothing said yet

        def on_message(conversation_id: str, message: dict, token, sid) -> tuple[Answer, list]:
            world = company.world
            event(conversation_id, "message", message={**message, "role": "user"})
            operations = (message.get("extensions") or {}).get("operations") or {}
            approval = operations.get("approval") if isinstance(operations, dict) else None
            if isinstance(approval, dict):
                topic = world.topics.get(conversation_id)
                verb, item = topic if topic is not None else ("hold", "?")
                asked = Asked("conversation", verb, item, 1, conversation_id)
                key = (str(approval.get("operation_id")), str(approval.get("revision")))
                return ("approval", asked, key), []
            asked = world.conversation_asks(conversation_id, str(message.get("text", "")))
            if asked is None:
                answer = Answer("unhelpful")
            else:
                answer = world.first_request(asked, token, sid)
            if answer.kind == "invalid_token":
                return answer, []
            return answer, as_events(conversation_id, answer)

        def page(conversation_id: str, events: list, status: int) -> Response:
            all_events = company.world.conversations[conversation_id]
            answer = {
                "conversation_id": conversation_id,
                "events": events,
                "cursor": str(len(all_events)),
                "has_more": False,
            }
            return JSONResponse(answer, status_code=status)

        async def deliver(request: Request, conversation_id: str, created: bool) -> Response:
            world = company.world
            payload = json.loads(await request.body() or b"{}")
            message = payload.get("message") if isinstance(payload, dict) else None
            if not isinstance(message, dict):
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            token, sid = bearer_of(request.headers), session_of(request.headers)
            key = (conversation_id, str(message.get("id")))
            if key in world.answered_messages:  # spec 8.3: the first answer, nothing added
                return JSONResponse(world.answered_messages[key], status_code=202)
            status = 201 if created else 202
            result, events = on_message(conversation_id, message, token, sid)
            if isinstance(result, tuple):  # an approval message
                _, asked, approval = result
                performed_before = world.performed_ids()
                answer = await company._answer_approval(asked, approval, token, sid)
                performed_now = world.performed_ids() != performed_before
                if answer.kind in ("busy", "error", "drop", "invalid_token"):
                    if performed_now or approval[0] in performed_before:
                        # Taken and performed: a resend with this ID gets the outcome (spec 8.3).
                        said = {"status": "performed", "operation_id": approval[0]}
                        kept = [says(conversation_id, "Done.", data=said)]
                        world.answered_messages[key] = _page_body(world, conversation_id, kept)
                    if answer.kind == "drop":
                        return _DroppedResponse(answer)
                    return http_answer(answer)
                events = as_events(conversation_id, answer)
            elif result.kind == "invalid_token":
                return http_answer(result)
            response = page(conversation_id, events, status)
            world.answered_messages[key] = json.loads(bytes(response.body))
            return response

        async def create_conversation(request: Request) -> Response:
            user, refused = company.world.user_of(bearer_of(request.headers))
            if refused:
                return http_answer(Answer("invalid_token", status=401))
            return await deliver(request, company.world.new_conversation(), created=True)

        async def post_message(request: Request) -> Response:
            conversation_id = request.path_params["conversation_id"]
            if conversation_id not in company.world.conversations:
                return JSONResponse({"error": "conversation_not_found"}, status_code=404)
            return await deliver(request, conversation_id, created=False)

        async def read_events(request: Request) -> Response:
            conversation_id = request.path_params["conversation_id"]
            events = company.world.conversations.get(conversation_id)
            if events is None:
                return JSONResponse({"error": "conversation_not_found"}, status_code=404)
            start = int(request.query_params.get("cursor") or 0)
            return page(conversation_id, events[start:], 200)

        # ---- MCP ----------------------------------------------------------------------------

        root = logging.getLogger()
        handlers_before, level_before = list(root.handlers), root.level
        mcp = MCPServer("quince-hire", log_level="WARNING")
        for handler in [h for h in root.handlers if h not in handlers_before]:
            root.removeHandler(handler)  # MCPServer configures the root logger; pytest owns it
        root.setLevel(level_before)

        @mcp.tool(description="Hold or order an item. Needs the user's approval.")
        async def act(verb: str, item: str, qty: int, ctx: Context) -> CallToolResult:
            answer: Answer = ctx.request_context.request.scope["sim_answer"]
            if answer.kind == "performed":
                return CallToolResult(
                    content=[TextContent(type="text", text=f"Done: {verb} {item}.")],
                    structured_content=dict(answer.body or {}),
                )
            if answer.kind == "operation":
                return CallToolResult(
                    is_error=True,
                    content=[TextContent(type="text", text="Not done yet: needs your approval.")],
                    structured_content={"operation": answer.body},
                )
            return CallToolResult(
                is_error=True,
                content=[TextContent(type="text", text="Not done.")],
                structured_content={"error": "not_performed"},
            )

        mcp.streamable_http_app(streamable_http_path="/mcp")
        mcp_app = StreamableHTTPASGIApp(mcp.session_manager)

        async def mcp_gate(scope, receive, send) -> None:
            if scope["type"] != "http":
                await mcp_app(scope, receive, send)
                return
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body", False):
                    break
            try:
                call = json.loads(body) if body else {}
            except ValueError:
                call = {}
            params = (call.get("params") or {}) if isinstance(call, dict) else {}
            if isinstance(call, dict) and call.get("method") == "tools/call":
                request = Request(scope)
                token, sid = bearer_of(request.headers), session_of(request.headers)
                arguments = params.get("arguments") or {}
                asked = Asked(
                    "mcp",
                    str(arguments.get("verb")),
                    str(arguments.get("item")),
                    int(arguments.get("qty") or 1),
                )
                carried = (params.get("_meta") or {}).get(MCP_APPROVAL_KEY)
                if isinstance(carried, dict):
                    approval = (str(carried.get("operation_id")), str(carried.get("revision")))
                    answer = await company._answer_approval(asked, approval, token, sid)
                else:
                    answer = company.world.first_request(asked, token, sid)
                if answer.kind == "drop":
                    await send_dropped(answer, send)
                if answer.kind not in ("performed", "operation", "refused"):
                    await http_answer(answer)(scope, receive, send)
                    return
                scope["sim_answer"] = answer
            sent = False

            async def replay():
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await mcp_app(scope, replay, send)

        @contextlib.asynccontextmanager
        async def lifespan(app):
            async with mcp.session_manager.run():
                yield

        app = Starlette(
            lifespan=lifespan,
            routes=[
                Route("/mcp", _Asgi(mcp_gate)),
                Route("/.well-known/poppy.json", poppy_json),
                Route("/openapi.json", openapi),
                Route("/items/{item}/{verb}", api_action, methods=["POST"]),
                Route("/conversations", create_conversation, methods=["POST"]),
                Route("/conversations/{conversation_id}/messages", post_message, methods=["POST"]),
                Route("/conversations/{conversation_id}/events", read_events),
            ],
        )

        async def noting_failures(scope, receive, send) -> None:
            try:
                await app(scope, receive, send)
            except Dropped:
                raise
            except Exception as exc:
                # A failure of the Company itself, not an answer it chose: the simulation fails.
                company.world.errors.append(f"{scope.get('path')}: {exc!r}")
                raise

        return noting_failures


def _page_body(world: World, conversation_id: str, events: list) -> dict[str, Any]:
    return {
        "conversation_id": conversation_id,
        "events": events,
        "cursor": str(len(world.conversations[conversation_id])),
        "has_more": False,
    }


class _DroppedResponse(Response):
    """Starts the response, then drops the connection."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(b"")
        self.answer = answer

    async def __call__(self, scope, receive, send) -> None:
        await send_dropped(self.answer, send)


class _Asgi:
    """An ASGI callable as a Route endpoint (Starlette treats a plain function as a request handler)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        await self.app(scope, receive, send)
