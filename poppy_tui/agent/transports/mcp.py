"""The MCP interface: the real MCP SDK client over Streamable HTTP.

The SDK hides HTTP: a 503 on tools/call surfaces only as MCPError -32603, and a timeout as
-32001. An httpx2.Auth flow sees every HTTP request and response, so it is where we sign a
fresh Poppy-Session JWT per request and where we learn the tools/call status, its
Retry-After, and whether the tools/call ever left (research notes, section 8).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, cast
from collections.abc import AsyncGenerator, Callable

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolResult,
    RequestParamsMeta,
)

from poppy_tui.safety.wording import possessive
from poppy_tui.agent.net.netguard import guarded_client_options
from poppy_tui.agent.net.http import (
    CONNECT_TIMEOUT_SECONDS,
    USER_AGENT,
    overall_deadline,
    parse_json_body,
)
from poppy_tui.agent.sessions import Sessions, is_invalid_session
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.agent.transports import Exchange, carried
from poppy_tui.agent.transports.mcp_strict import StrictJsonTransport
from poppy_tui.protocol.approval import Approval, approval_to_mcp_meta
from poppy_tui.protocol.challenges import Challenge, challenge_from_fields, parse_challenge
from poppy_tui.protocol.errors import ProtocolError, ProtocolViolation
from poppy_tui.protocol.operation import operation_from_mcp_result
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
    carries_an_operation,
    operation_in_success,
)
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.retry import parse_retry_after

MAX_ERROR_BODY_BYTES = 64 * 1024
# An MCP exchange is a session (initialize, then the call): it gets the same overall deadline
# as any fetch from a Company (agent/net/http.py), plus this long to set the session up. The SDK's
# own read timeout bounds each JSON-RPC answer however slowly its bytes arrive.
SESSION_SETUP_SECONDS = 10.0
# JSON-RPC errors that say the server did not run the tool: it doesn't know it, or the
# arguments don't fit it.
DEFINITE_REFUSALS = frozenset({METHOD_NOT_FOUND, INVALID_PARAMS})


@dataclass
class _Seen:
    """What the Auth flow saw of one JSON-RPC method's HTTP exchange."""

    sent: bool = False
    status: int | None = None
    retry_after: float | None = None
    body: Any = None
    www_authenticate: str | None = None


@dataclass
class PoppyAuth(httpx2.Auth):
    """Signs each HTTP request and records the answers the SDK would otherwise hide."""

    header_factory: Callable[[], dict[str, str]]
    seen: dict[str, _Seen] = field(default_factory=dict)
    last_error: _Seen | None = None
    # Set when a message from the server named a member twice (mcp_strict.py): (method, reason).
    malformed: tuple[str | None, str] | None = None

    def note_malformed(self, method: str | None, reason: str) -> None:
        if self.malformed is None:
            self.malformed = (method, reason)

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        request.headers.update(self.header_factory())
        method = _jsonrpc_method(request)
        record = self.seen.setdefault(method, _Seen()) if method else None
        if record is not None:
            record.sent = True
        response = yield request
        if record is not None:
            record.status = response.status_code
            record.retry_after = parse_retry_after(response.headers.get("retry-after"))
        if response.status_code >= 400:
            error = record or _Seen(sent=True, status=response.status_code)
            error.body = await _small_json_body(response)
            error.www_authenticate = response.headers.get("www-authenticate")
            self.last_error = error

    def sync_auth_flow(self, request: httpx2.Request):  # pragma: no cover - the SDK is async only
        raise RuntimeError("poppy-tui's MCP client is async only")


def _jsonrpc_method(request: httpx2.Request) -> str | None:
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return message.get("method") if isinstance(message, dict) else None


async def _small_json_body(response: httpx2.Response) -> Any:
    if "json" not in response.headers.get("content-type", ""):
        return None
    declared = response.headers.get("content-length")
    if declared is None or not declared.isdigit() or int(declared) > MAX_ERROR_BODY_BYTES:
        return None
    try:
        return parse_json_body(await response.aread())
    except (ValueError, httpx2.HTTPError):
        return None


def result_to_wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


class McpTransport:
    def __init__(
        self, sessions: Sessions, timeout_seconds: float, allow_loopback: bool = True
    ) -> None:
        self._sessions = sessions
        self._timeout = timeout_seconds
        self._allow_loopback = allow_loopback

    def _client(self, auth: PoppyAuth) -> httpx2.AsyncClient:
        # Each MCP call is several HTTP requests, each with its own Session JWT: the next one is
        # signed while the one before waits (Sessions.sign_spares).
        options = guarded_client_options(
            self._allow_loopback, while_waiting=self._sessions.sign_spares
        )
        options["transport"] = StrictJsonTransport(options["transport"], auth.note_malformed)
        return httpx2.AsyncClient(
            **options,
            auth=auth,
            # Uncompressed, so mcp_strict.py can check each message's bytes for duplicate members.
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
            timeout=httpx2.Timeout(
                self._timeout + 5, connect=min(CONNECT_TIMEOUT_SECONDS, self._timeout)
            ),
            follow_redirects=False,
        )

    async def _run(
        self, company: CompanyRecord, url: str, session_id: str, work, token: str | None = None
    ) -> tuple[Any, PoppyAuth, BaseException | None]:
        bearer = {"Authorization": f"Bearer {token}"} if token else {}
        auth = PoppyAuth(lambda: {**self._sessions.headers(company, session_id), **bearer})
        outcome: Any = None
        failure: BaseException | None = None
        try:
            async with asyncio.timeout(overall_deadline(self._timeout) + SESSION_SETUP_SECONDS):
                async with self._client(auth) as http_client:
                    async with streamable_http_client(url, http_client=http_client) as (
                        read,
                        write,
                    ):
                        async with ClientSession(
                            read, write, read_timeout_seconds=self._timeout
                        ) as session:
                            await session.initialize()
                            outcome = await work(session)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the SDK raises exception groups and its own errors
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            failure = exc
        return outcome, auth, failure

    @staticmethod
    async def _tool_list(session: ClientSession) -> list[dict[str, Any]]:
        """Every tool the server lists, with its schema and what its annotations say about reading."""
        tools: list[dict[str, Any]] = []
        cursor = None
        for _ in range(50):  # a bound on pages, so a server can't keep us listing forever
            from mcp_types import PaginatedRequestParams

            page = await session.list_tools(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            for tool in page.tools:
                described: dict[str, Any] = {
                    "name": tool.name,
                    "description": tool.description or "",
                    "inputSchema": tool.input_schema,
                }
                annotations = getattr(tool, "annotations", None)
                if annotations is not None:
                    described["annotations"] = {
                        "readOnlyHint": getattr(annotations, "read_only_hint", None),
                        "destructiveHint": getattr(annotations, "destructive_hint", None),
                    }
                tools.append(described)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def list_tools(self, company: CompanyRecord, url: str) -> list[dict[str, Any]]:
        token = await self._sessions.access_token(company)
        result, auth, failure = await self._run(
            company, url, company.session_id, self._tool_list, token
        )
        if auth.malformed is not None:
            raise RuntimeError(
                f"could not list {possessive(company.name)} MCP tools: the answer is malformed: {auth.malformed[1]}"
            )
        if failure is not None:
            raise RuntimeError(
                f"could not list {possessive(company.name)} MCP tools: {_describe(failure, auth)}"
            )
        return result

    async def read_with_tool(
        self,
        company: CompanyRecord,
        url: str,
        choose: Callable[[list[dict[str, Any]]], tuple[str, dict[str, Any]] | None],
        *,
        session_id: str,
        token: str | None,
        limit: int,
    ) -> tuple[tuple[str, dict[str, Any]] | None, Any, str | None]:
        """In one MCP session: list the tools, call the read `choose` picks from them (None: no
        read), and return (the call, the data it read, or why nothing usable came back). Only
        reads: `choose` never picks the tool the operation came from (resource_read.py)."""
        picked: list[tuple[str, dict[str, Any]]] = []

        async def work(session: ClientSession) -> CallToolResult | None:
            choice = choose(await self._tool_list(session))
            if choice is None:
                return None
            picked.append(choice)
            return await session.call_tool(choice[0], choice[1], read_timeout_seconds=self._timeout)

        result, auth, failure = await self._run(company, url, session_id, work, token)
        call = picked[0] if picked else None
        if auth.malformed is not None:
            return call, None, f"the MCP server's answer is malformed: {auth.malformed[1]}"
        if failure is not None:
            return call, None, _describe(failure, auth)
        if call is None or not isinstance(result, CallToolResult):
            return None, None, None
        wire = result_to_wire(result)
        if len(json.dumps(wire, ensure_ascii=False).encode("utf-8")) > limit:
            return call, None, f"the answer is more than the {limit} bytes allowed"
        try:
            carries_operation = operation_from_mcp_result(wire) is not None
        except ProtocolError:
            carries_operation = True  # a malformed operation is still not the resource
        if carries_operation:
            return (
                call,
                None,
                "the read tool answered with an operation to approve, not the resource",
            )
        if result.is_error:
            return call, None, f"the tool answered with an error: {_text_of(wire)[:200]}"
        data = wire.get("structuredContent")
        if data is None:
            try:
                data = parse_json_body(_text_of(wire).encode("utf-8"))
            except ValueError:
                data = None
        if not isinstance(data, dict):
            return call, None, "the tool's answer is not a JSON object"
        return call, data, None

    async def call(
        self,
        company: CompanyRecord,
        url: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        session_id: str,
        approval: Approval | None = None,
        account_owned: bool = False,
    ) -> Exchange:
        # RequestParamsMeta is an open map (any key); the approval is one of its keys.
        meta = (
            cast(RequestParamsMeta, approval_to_mcp_meta(approval))
            if approval is not None
            else None
        )
        retried = False
        while True:

            async def work(session: ClientSession) -> CallToolResult:
                return await session.call_tool(
                    tool, arguments, read_timeout_seconds=self._timeout, meta=meta
                )

            token = await self._sessions.access_token(company)

            account = self._sessions.signed_in_account(company) if token is not None else None
            result, auth, failure = await self._run(company, url, session_id, work, token)
            error = auth.last_error
            if error is not None and is_invalid_session(error.status, error.body):
                verdict = self._sessions.on_invalid_session(
                    company, session_id, approval is not None, retried, account_owned
                )
                if verdict.retry:
                    company, session_id, retried = verdict.company, verdict.company.session_id, True
                    continue
                return Exchange(
                    NotPerformed(error.status, "invalid_session", error.body),
                    error.status,
                    {"status": error.status, "body": error.body},
                    session_id,
                    verdict.detail,
                    True,
                    token_fingerprint=carried(token),
                    account=account,
                )
            challenge = self._challenge(result, auth, failure)
            if challenge is not None:
                status = (
                    error.status
                    if error is not None
                    else auth.seen.get("tools/call", _Seen()).status
                )
                body = error.body if error is not None else {"error": challenge.error}
                return Exchange(
                    NotPerformed(status, challenge.error, body),
                    status,
                    {"status": status, "body": body},
                    session_id,
                    self._sessions.challenge_detail(company, challenge),
                    challenge=challenge,
                    token_fingerprint=carried(token),
                    account=account,
                )
            return dataclasses.replace(
                self._classify(company, result, auth, failure, session_id),
                token_fingerprint=carried(token),
                account=account,
            )

    @staticmethod
    def _challenge(result: Any, auth: PoppyAuth, failure: BaseException | None) -> Challenge | None:
        """Sign-in challenges come at the HTTP layer (401/403 with WWW-Authenticate and a JSON
        body, the MCP authorization model), or as a JSON-RPC error whose data repeats them."""
        error = auth.last_error
        if error is not None:
            found = parse_challenge(
                error.status, {"www-authenticate": error.www_authenticate or ""}, error.body
            )
            if found is not None:
                return found
        mcp_error = _find(failure, MCPError) if failure is not None else None
        if mcp_error is not None and isinstance(getattr(mcp_error, "data", None), dict):
            return challenge_from_fields(mcp_error.data)
        return None

    def _classify(
        self,
        company: CompanyRecord,
        result: Any,
        auth: PoppyAuth,
        failure: BaseException | None,
        session_id: str,
    ) -> Exchange:
        call = auth.seen.get("tools/call", _Seen())
        if auth.malformed is not None:
            method, reason = auth.malformed
            error = ProtocolError(
                "response", f"the MCP server's {method or 'answer'} is malformed: {reason}"
            )
            return Exchange(
                BadResponse(error, call.status),
                call.status,
                {"error": str(error)},
                session_id,
                str(error),
            )
        if isinstance(result, CallToolResult):
            wire = result_to_wire(result)
            status = call.status
            try:
                operation = operation_from_mcp_result(wire)
            except ProtocolError as exc:
                # An error result carrying an operation (Ops 4): a refusal, whose operation is unusable.
                return Exchange(
                    BadResponse(exc, status, refusal=True), status, wire, session_id, str(exc)
                )
            if operation is not None:
                if not self._sessions.declares_operations(company):
                    violation = ProtocolViolation(
                        "structuredContent.operation",
                        "the tool returned an operation to a client that did not declare the operations extension",
                    )
                    return Exchange(
                        BadResponse(violation, status, refusal=True),
                        status,
                        wire,
                        session_id,
                        str(violation),
                    )
                return Exchange(
                    ApprovalRequired(operation),
                    status,
                    wire,
                    session_id,
                    carrier_text=_text_of(wire),
                )
            if result.is_error:
                # "tool_error" unless the Company names one of the refusals the spec defines: to an
                # approval, a plain tool error is in doubt (outcomes.as_approval_answer).
                text = _text_of(wire)
                structured = wire.get("structuredContent")
                named = structured.get("error") if isinstance(structured, dict) else None
                code = named if named in c.APPROVAL_REFUSAL_CODES else "tool_error"
                return Exchange(NotPerformed(status, code, wire), status, wire, session_id, text)
            if carries_an_operation(wire.get("structuredContent")):
                # Success-flagged (isError false) yet carrying an operation: neither (Ops 4, Ops 5).
                violation = operation_in_success(
                    "a tool result with isError false", "an error result (isError true)"
                )
                return Exchange(
                    BadResponse(violation, status, success=True),
                    status,
                    wire,
                    session_id,
                    str(violation),
                )
            return Exchange(Performed(status, wire), status, wire, session_id)
        if failure is None:  # pragma: no cover - work() always returns a CallToolResult
            failure = RuntimeError("the MCP call returned nothing")
        detail = _describe(failure, auth)
        record = {"error": detail, "status": call.status, "body": call.body}
        if not call.sent:
            return Exchange(NotSent(detail), None, record, session_id, detail)
        if call.status in (503, 429):
            return Exchange(
                RetryLater(call.retry_after, f"HTTP {call.status}"),
                call.status,
                record,
                session_id,
                detail,
            )
        if call.status is not None and call.status >= 400 and call.status not in (502, 504):
            code = (
                call.body.get("error")
                if isinstance(call.body, dict) and isinstance(call.body.get("error"), str)
                else None
            )
            return Exchange(
                NotPerformed(call.status, code or f"http_{call.status}", call.body),
                call.status,
                record,
                session_id,
                detail,
            )
        mcp_error = _find(failure, MCPError)
        if (
            mcp_error is not None
            and mcp_error.code in DEFINITE_REFUSALS
            and call.status is not None
            and call.status < 300
        ):
            # The server refused to run the tool at all. Other codes may be the SDK's own
            # stand-ins for a broken stream (-32000) or an HTTP error (-32603): unknown.
            return Exchange(
                NotPerformed(
                    call.status,
                    f"mcp_error_{mcp_error.code}",
                    {"code": mcp_error.code, "message": mcp_error.message},
                ),
                call.status,
                record,
                session_id,
                detail,
            )
        return Exchange(Unknown(detail), call.status, record, session_id, detail)


def _find(exc: BaseException, kind: type) -> Any:
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()) or ():
        found = _find(inner, kind)
        if found is not None:
            return found
    if exc.__cause__ is not None and exc.__cause__ is not exc:
        return _find(exc.__cause__, kind)
    return None


def _describe(exc: BaseException, auth: PoppyAuth) -> str:
    inner = exc
    while getattr(inner, "exceptions", None):
        inner = inner.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(inner, TimeoutError):
        return "the MCP server did not answer in time"
    if isinstance(inner, MCPError):
        if inner.code == REQUEST_TIMEOUT:
            return f"the MCP server did not answer in time ({inner.message})"
        return f"MCP error {inner.code}: {inner.message}"
    return f"{type(inner).__name__}: {inner}"


def _text_of(wire: dict[str, Any]) -> str:
    parts = [
        item.get("text", "")
        for item in wire.get("content", [])
        if isinstance(item, dict) and item.get("type") == "text"
    ]
    return " ".join(p for p in parts if isinstance(p, str))[:2000]
