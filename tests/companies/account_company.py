"""A Company with accounts, written from the spec text alone (no poppy_tui imports at all).

"Birch Market" differs from the demo where the spec allows:
- it verifies every Session JWT itself: fetches the agent's Client ID Metadata Document from the
  client_id URL, then the JWKS at its jwks_uri, and checks the ES256 signature with the key the
  JWT's `kid` names (or, with `reject_identity`, refuses every agent with 401 unauthorized_client);
- ordering needs sign-in with the `orders` scope: without an access token it answers 401 with
  `WWW-Authenticate: Bearer error="sign_in_required", scope="orders"` (and the same as JSON);
  with a token lacking the scope, 403 insufficient_scope;
- an operation returned signed in belongs to the account: any Session signed in as the same
  user may approve it; signed out, approving it gets the sign-in challenge again (Ops 3);
- a wishlist entry needs an approval but not sign-in: an operation returned signed out is
  bound to its Session;
- its conversation answers an order request signed out with an `authorization` event, and an
  approval message for an account's operation sent signed out with an `authorization` event and
  words ("Please sign in first"); a message sent again with the same ID gets the first answer and
  adds nothing (spec 8.3); a done action is reported in `data` (status, operation_id);
- its MCP server (the real MCP SDK) has `place_order`: signed out, the HTTP request is refused with
  401 and `WWW-Authenticate: Bearer error="sign_in_required"` (the MCP authorization model), an
  unknown token with 401 invalid_token; signed in, the tool returns the operation (isError, in
  structuredContent) and performs it when `_meta` carries the approval (Ops 4, 6);
- it can end Sessions (`ended_sessions`): any request in one gets 403 invalid_session, and the
  same action asked again in a new Session gets a new revision of the same operation_id, bound
  to that new Session (Ops 3, "New terms");
- it can hold the next request carrying an approval before it checks its tokens
  (`hold_next_approval`), so a test can renew the agent's token while the answer is pending.

Served by uvicorn on 127.0.0.1 in a background thread. Tokens are handed out by the test
(`tokens`), as a real Company's authorization server would after a sign-in.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, UTC
from typing import Any

import httpx
import http_sfv
import jwt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp_types import CallToolResult, TextContent

from .hold import Hold
from .serving import LoopbackServer

NAME = "Birch Market"
CHALLENGE = 'Bearer error="sign_in_required", scope="orders", error_description="Sign in to order"'


@dataclass
class Op:
    operation_id: str
    revision: str
    what: str
    owner: tuple[str, str]  # ("account", user) or ("session", session id)
    expires_at: datetime


@dataclass
class AccountState:
    tokens: dict[str, tuple[str, tuple[str, ...]]] = field(
        default_factory=dict
    )  # token -> (user, scopes)
    reject_identity: bool = False
    ops: dict[tuple[str, str], Op] = field(default_factory=dict)
    performed: dict[str, int] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)  # headers of every checked request
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    fetched: list[str] = field(default_factory=list)
    ended_sessions: set[str] = field(default_factory=set)
    # (conversation_id, message id) -> the answer first given to it (spec 8.3).
    answered_messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # The sid of every request that carried an approval, in order.
    approval_sessions: list[str] = field(default_factory=list)
    # The signed-in user (None: signed out) of every request that carried an approval, in order:
    # whose access token carried it (Ops 3: an account's operation, approved while signed in to it).
    approval_users: list[str | None] = field(default_factory=list)
    # conversation_id -> what the Company offers, unprompted, at the next read of that conversation
    # (an operation bound to the Session, or account, of that read).
    offers: dict[str, str] = field(default_factory=dict)
    # Report a performed approval message with an `authorization` event beside the word it is done.
    sign_in_event_when_done: bool = False
    # Holds the next request carrying an approval (API header, MCP _meta, conversation message) before its tokens are
    # checked, until the test releases it (tests/companies/hold.py).
    hold_next_approval: Hold | None = None

    async def hold_if_asked(self) -> None:
        hold, self.hold_next_approval = self.hold_next_approval, None
        if hold is not None:
            await hold()


class Refused(Exception):
    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.response = JSONResponse(body, status_code=status, headers=headers)


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_app(state: AccountState, base_url: str) -> Starlette:
    keys: dict[tuple[str, str], Any] = {}

    async def agent_key(client_id: str, kid: str) -> Any:
        if (client_id, kid) in keys:
            return keys[(client_id, kid)]
        async with httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=5) as client:
            state.fetched.append(client_id)
            cimd = (await client.get(client_id)).json()
            if cimd.get("client_id") != client_id:
                raise Refused(
                    401, {"error": "invalid_client", "error_description": "client_id mismatch"}
                )
            jwks = (await client.get(cimd["jwks_uri"])).json()
        for entry in jwks.get("keys", []):
            if entry.get("kty") == "EC" and "d" not in entry:
                keys[(client_id, entry["kid"])] = jwt.algorithms.ECAlgorithm.from_jwk(
                    json.dumps(entry)
                )
        if (client_id, kid) not in keys:
            raise Refused(401, {"error": "invalid_client", "error_description": "unknown key"})
        return keys[(client_id, kid)]

    async def check(request: Request) -> tuple[str, str | None]:
        """(session id, signed-in user or None); raises Refused."""
        token = request.headers.get("poppy-session", "")
        state.received.append({"path": request.url.path, **dict(request.headers)})
        if state.reject_identity:
            raise Refused(
                401,
                {
                    "error": "unauthorized_client",
                    "error_description": f"{NAME} does not work with this agent",
                },
                {"WWW-Authenticate": 'Bearer error="unauthorized_client"'},
            )
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
            if header.get("alg") != "ES256" or "jwk" in header:
                raise ValueError("bad header")
            key = await agent_key(unverified["iss"], header["kid"])
            claims = jwt.decode(token, key, algorithms=["ES256"], audience=base_url)
        except Refused:
            raise
        except Exception as exc:  # noqa: BLE001
            raise Refused(
                403, {"error": "invalid_session", "error_description": str(exc)}
            ) from None
        if claims["sid"] in state.ended_sessions:
            raise Refused(
                403, {"error": "invalid_session", "error_description": "this Session has ended"}
            )
        user = None
        authorization = request.headers.get("authorization", "")
        if authorization.startswith("Bearer "):
            found = state.tokens.get(authorization[len("Bearer ") :])
            if found is None:
                raise Refused(
                    401,
                    {"error": "invalid_token"},
                    {"WWW-Authenticate": 'Bearer error="invalid_token"'},
                )
            user = found[0]
        return claims["sid"], user

    def needs_orders(request: Request, user: str | None) -> None:
        if user is None:
            raise Refused(
                401,
                {
                    "error": "sign_in_required",
                    "scope": "orders",
                    "error_description": "Sign in to order",
                },
                {"WWW-Authenticate": CHALLENGE},
            )
        token = request.headers["authorization"][len("Bearer ") :]
        if "orders" not in state.tokens[token][1]:
            raise Refused(
                403,
                {"error": "insufficient_scope", "scope": "orders"},
                {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="orders"'},
            )

    def approval_of(request: Request) -> tuple[str, str] | None:
        raw = request.headers.get("poppy-approval")
        if not raw:
            return None
        parsed = http_sfv.Dictionary()
        parsed.parse(raw.encode("ascii"))
        return str(parsed["operation_id"].value), str(parsed["revision"].value)

    def new_op(operation_id: str, what: str, owner: tuple[str, str]) -> JSONResponse:
        op = Op(
            operation_id,
            f"v{next(state.counter)}",
            what,
            owner,
            datetime.now(UTC) + timedelta(minutes=10),
        )
        state.ops[(operation_id, op.revision)] = op
        body = {
            "operation_id": operation_id,
            "revision": op.revision,
            "summary": f"**{what}** at {NAME}",
            "expires_at": _stamp(op.expires_at),
        }
        return JSONResponse({"error": "approval_required", "operation": body}, status_code=403)

    async def action(request: Request, operation_id: str, what: str, account: bool) -> Response:
        if request.headers.get("poppy-approval"):
            await state.hold_if_asked()
        try:
            sid, user = await check(request)
            if account:
                needs_orders(request, user)
            approval = approval_of(request)
            if approval is not None:
                state.approval_sessions.append(sid)
                state.approval_users.append(user)
            if approval is not None and approval in state.ops:
                op = state.ops[approval]
                allowed = (
                    (op.owner == ("account", user))
                    if op.owner[0] == "account"
                    else (op.owner == ("session", sid))
                )
                if not allowed:
                    return JSONResponse(
                        {"error": "forbidden", "error_description": "not yours"}, status_code=403
                    )
                state.performed[operation_id] = state.performed.get(operation_id, 0) + 1
                return JSONResponse({"done": what, "operation_id": operation_id})
            owner = ("account", user) if user is not None else ("session", sid)
            return new_op(operation_id, what, owner)
        except Refused as refused:
            return refused.response

    async def order(request: Request) -> Response:
        return await action(request, "ord_birch_1", "Order 2 kg of oats", account=True)

    async def wishlist(request: Request) -> Response:
        return await action(request, "wsh_birch_1", "Share your wishlist", account=False)

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
                    "/orders": {"post": {"operationId": "placeOrder", "summary": "Place an order"}},
                    "/wishlist/share": {
                        "post": {"operationId": "shareWishlist", "summary": "Share the wishlist"}
                    },
                },
            }
        )

    def event(conversation_id: str, kind: str, **fields: Any) -> dict[str, Any]:
        events = state.conversations[conversation_id]
        made = {
            "id": f"evt_{len(events) + 1}",
            "type": kind,
            "created_at": _stamp(datetime.now(UTC)),
            **fields,
        }
        events.append(made)
        return made

    def company_message(conversation_id: str, text: str, **extra: Any) -> dict[str, Any]:
        message = {
            "id": f"msg_birch{next(state.counter):06d}",
            "role": "company",
            "author": {"type": "agent"},
            "text": text,
            **extra,
        }
        return event(conversation_id, "message", message=message)

    def sign_in_asked(conversation_id: str) -> dict[str, Any]:
        return event(
            conversation_id,
            "authorization",
            error="sign_in_required",
            scope="orders",
            error_description="Sign in to order",
        )

    def operation_message(
        conversation_id: str, operation_id: str, what: str, owner: tuple[str, str]
    ) -> list:
        refused = new_op(operation_id, what, owner)
        operation = json.loads(refused.body)["operation"]
        return [
            company_message(
                conversation_id,
                f"I can do that once you approve: {what}.",
                extensions={"operations": {"operation": operation}},
            )
        ]

    def on_message(
        conversation_id: str, message: dict[str, Any], sid: str, user: str | None
    ) -> list:
        """The events this message led to (also appended to the conversation)."""
        event(conversation_id, "message", message={**message, "role": "user"})
        approval = ((message.get("extensions") or {}).get("operations") or {}).get("approval")
        if isinstance(approval, dict):
            state.approval_sessions.append(sid)
            state.approval_users.append(user)
            key = (str(approval.get("operation_id")), str(approval.get("revision")))
            op = state.ops.get(key)
            if op is None or op.expires_at <= datetime.now(UTC):
                return [
                    company_message(
                        conversation_id, "That approval doesn't match anything I can do now."
                    )
                ]
            if op.owner[0] == "account" and user is None:
                # Ops 3: a signed-out Session of the same agent and User gets a challenge.
                return [
                    sign_in_asked(conversation_id),
                    company_message(conversation_id, "Please sign in first; then I can go ahead."),
                ]
            allowed = (
                op.owner == ("account", user)
                if op.owner[0] == "account"
                else op.owner == ("session", sid)
            )
            if not allowed:
                return [company_message(conversation_id, "I can't do that one for you.")]
            state.performed[op.operation_id] = state.performed.get(op.operation_id, 0) + 1
            done = company_message(
                conversation_id,
                f"Done: {op.what}.",
                data={"status": "performed", "operation_id": op.operation_id},
            )
            return (
                [sign_in_asked(conversation_id), done] if state.sign_in_event_when_done else [done]
            )
        text = str(message.get("text", "")).lower()
        if "oats" in text:
            if user is None:
                return [sign_in_asked(conversation_id)]
            return operation_message(
                conversation_id, "ord_birch_1", "Order 2 kg of oats", ("account", user)
            )
        if "wishlist" in text:
            owner = ("account", user) if user is not None else ("session", sid)
            return operation_message(conversation_id, "wsh_birch_1", "Share your wishlist", owner)
        return [company_message(conversation_id, "How can I help?")]

    async def create_conversation(request: Request) -> Response:
        try:
            sid, user = await check(request)
        except Refused as refused:
            return refused.response
        conversation_id = f"cnv_birch{next(state.counter)}"
        state.conversations[conversation_id] = []
        payload = json.loads(await request.body() or b"{}")
        message = payload.get("message") if isinstance(payload, dict) else None
        if isinstance(message, dict) and message.get("text"):
            on_message(conversation_id, message, sid, user)
        elif user is None:
            sign_in_asked(conversation_id)
        return JSONResponse({"conversation_id": conversation_id}, status_code=201)

    async def post_message(request: Request) -> Response:
        sent = json.loads(await request.body() or b"{}")
        said = sent.get("message") if isinstance(sent, dict) else None
        operations = (
            ((said.get("extensions") or {}).get("operations") or {})
            if isinstance(said, dict)
            else {}
        )
        if isinstance(operations, dict) and "approval" in operations:
            await state.hold_if_asked()
        try:
            sid, user = await check(request)
        except Refused as refused:
            return refused.response
        conversation_id = request.path_params["conversation_id"]
        if conversation_id not in state.conversations:
            return JSONResponse({"error": "conversation_not_found"}, status_code=404)
        message = (json.loads(await request.body() or b"{}") or {}).get("message") or {}
        key = (conversation_id, str(message.get("id")))
        if (
            key in state.answered_messages
        ):  # the same ID again: the original response, nothing added
            return JSONResponse(state.answered_messages[key], status_code=202)
        events = on_message(conversation_id, message, sid, user)
        answer = {
            "conversation_id": conversation_id,
            "events": events,
            "cursor": str(len(state.conversations[conversation_id])),
            "has_more": False,
        }
        state.answered_messages[key] = answer
        return JSONResponse(answer, status_code=202)

    async def read_events(request: Request) -> Response:
        try:
            sid, user = await check(request)
        except Refused as refused:
            return refused.response
        conversation_id = request.path_params["conversation_id"]
        offer = state.offers.pop(conversation_id, None)
        if offer is not None:
            owner = ("account", user) if user is not None else ("session", sid)
            operation_message(conversation_id, "wsh_birch_1", offer, owner)
        events = state.conversations.get(conversation_id, [])
        start = int(request.query_params.get("cursor") or 0)
        return JSONResponse(
            {
                "conversation_id": conversation_id,
                "events": events[start:],
                "cursor": str(len(events)),
                "has_more": False,
            }
        )

    # ---- MCP ---------------------------------------------------------------------------------

    root = logging.getLogger()
    handlers_before, level_before = list(root.handlers), root.level
    mcp = MCPServer("birch-market", log_level="WARNING")
    for handler in [h for h in root.handlers if h not in handlers_before]:
        root.removeHandler(handler)  # MCPServer configures the root logger; pytest owns it
    root.setLevel(level_before)

    @mcp.tool(description="Order oats at Birch Market. Needs sign-in and the user's approval.")
    async def place_order(kg: int, ctx: Context) -> CallToolResult:
        sid, user = ctx.request_context.request.scope["birch"]
        meta = ctx.request_context.meta
        raw = meta if isinstance(meta, dict) else (getattr(meta, "model_extra", None) or {})
        approval = raw.get("personalagentprotocol.org/approval")
        if isinstance(approval, dict):
            state.approval_sessions.append(sid)
            state.approval_users.append(user)
            op = state.ops.get((str(approval.get("operation_id")), str(approval.get("revision"))))
            if (
                op is not None
                and op.owner == ("account", user)
                and op.expires_at > datetime.now(UTC)
            ):
                state.performed[op.operation_id] = state.performed.get(op.operation_id, 0) + 1
                return CallToolResult(
                    content=[TextContent(type="text", text=f"Done: {op.what}.")],
                    structured_content={"done": op.what, "operation_id": op.operation_id},
                )
        refused = new_op("ord_birch_1", f"Order {kg} kg of oats", ("account", user))
        operation = json.loads(refused.body)["operation"]
        return CallToolResult(
            is_error=True,
            content=[
                TextContent(type="text", text="Not done yet. This needs the user's approval.")
            ],
            structured_content={"operation": operation},
        )

    @mcp.tool(description="Share your wishlist. Needs the user's approval, not sign-in.")
    async def share_wishlist(ctx: Context) -> CallToolResult:
        sid, user = ctx.request_context.request.scope["birch"]
        meta = ctx.request_context.meta
        raw = meta if isinstance(meta, dict) else (getattr(meta, "model_extra", None) or {})
        approval = raw.get("personalagentprotocol.org/approval")
        owner = ("account", user) if user is not None else ("session", sid)
        if isinstance(approval, dict):
            state.approval_sessions.append(sid)
            state.approval_users.append(user)
            op = state.ops.get((str(approval.get("operation_id")), str(approval.get("revision"))))
            if op is not None and op.owner == owner:
                state.performed[op.operation_id] = state.performed.get(op.operation_id, 0) + 1
                return CallToolResult(
                    content=[TextContent(type="text", text="Shared.")],
                    structured_content={"done": op.what},
                )
        operation = json.loads(new_op("wsh_birch_1", "Share your wishlist", owner).body)[
            "operation"
        ]
        return CallToolResult(
            is_error=True,
            content=[
                TextContent(type="text", text="Not done yet. This needs the user's approval.")
            ],
            structured_content={"operation": operation},
        )

    mcp.streamable_http_app(streamable_http_path="/mcp")
    mcp_app = StreamableHTTPASGIApp(mcp.session_manager)

    async def mcp_gate(scope, receive, send) -> None:
        """The MCP authorization model: a tools/call that needs sign-in is refused at the HTTP layer."""
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
        meta = (call.get("params") or {}).get("_meta") if isinstance(call, dict) else None
        if isinstance(meta, dict) and "personalagentprotocol.org/approval" in meta:
            await state.hold_if_asked()
        try:
            sid, user = await check(Request(scope))
        except Refused as refused:
            await refused.response(scope, receive, send)
            return
        called = (call.get("params") or {}).get("name") if isinstance(call, dict) else None
        if (
            isinstance(call, dict)
            and call.get("method") == "tools/call"
            and called == "place_order"
            and user is None
        ):
            error = {
                "code": -32001,
                "message": "Sign in to order",
                "data": {"error": "sign_in_required", "scope": "orders"},
            }
            await JSONResponse(
                {"jsonrpc": "2.0", "id": call.get("id"), "error": error},
                status_code=401,
                headers={"WWW-Authenticate": CHALLENGE},
            )(scope, receive, send)
            return
        scope["birch"] = (sid, user)
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

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/mcp", _Asgi(mcp_gate)),
            Route("/.well-known/poppy.json", poppy_json),
            Route("/openapi.json", openapi),
            Route("/orders", order, methods=["POST"]),
            Route("/wishlist/share", wishlist, methods=["POST"]),
            Route("/conversations", create_conversation, methods=["POST"]),
            Route("/conversations/{conversation_id}/messages", post_message, methods=["POST"]),
            Route("/conversations/{conversation_id}/events", read_events),
        ],
    )


class _Asgi:
    """An ASGI callable as a Route endpoint (Starlette treats a plain function as a request handler)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        await self.app(scope, receive, send)


class AccountCompany:
    """Birch Market served on 127.0.0.1 in a thread; stop() when done."""

    def __init__(self) -> None:
        self.state = AccountState()
        self._served = LoopbackServer(
            lambda base_url: build_app(self.state, base_url), "the account Company", "on"
        )
        self.base_url = self._served.base_url

    def stop(self) -> None:
        self._served.stop()
