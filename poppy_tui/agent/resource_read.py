"""The resource an operation changes, read from the Company before the person decides.

A person approves terms the Company wrote. What no summary shows is the thing the action
changes as it is now, read independently of the summary: the order an exchange is for, the
subscription a cancellation ends. This module finds where the Company offers a read of it and
reads it once, bounded, with nothing written:

- an API request: the GET in the Company's OpenAPI for the request path's resource
  (`POST /api/orders/{id}/exchanges` -> `GET /api/orders/{id}`), by the rule the outcome probe
  uses (`protocol/openapi.resource_url`: one resource, never a collection, never the request's
  own URL or a path below it), on the Company's own API origin only;
- an MCP tool call: another tool of the same server that the Company marks read-only
  (`mcp_read_call` below); never one guessed by its name;
- a conversation: only an API resource the terms name by its URL or path; otherwise none.

Every read goes through agent/net (netguard, no redirects, no cookies) with the operation's
Session (the account's current Session and Bearer for an operation returned signed in), a
size cap and one overall deadline. What was read, or why nothing was, is kept in the store
(`resource_reads`, store/resource_reads.py) with when and where from. safety/resource_checks.py
compares it with the terms. Where no safe read exists the problem says "no read offered"
(store/resource_reads.NO_READ_OFFERED), which the screens tell apart from a failed read.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable, Mapping

from poppy_tui.agent.companies import api_origins, origin_of
from poppy_tui.agent.store import OperationRecord, Status
from poppy_tui.agent.store.connection import now_utc
from poppy_tui.agent.store.resource_reads import ResourceRead, no_read_offered
from poppy_tui.protocol.openapi import resource_url
from poppy_tui.protocol.outcomes import NotSent, Unknown
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from poppy_tui.safety.identifiers import _is_id_key
from poppy_tui.safety.resource_checks import source_label  # noqa: F401 (importable from here too)
from poppy_tui.safety.sanitize import sanitize_line
from poppy_tui.safety.terms_values import _flatten

if TYPE_CHECKING:
    import httpx2

    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.store import CompanyRecord, Store

log = logging.getLogger(__name__)

# A resource is a small JSON object; anything bigger is not read to the end.
MAX_RESOURCE_BYTES = 256 * 1024
# The whole read, from the first connection to the last byte, whatever the request timeout:
# a person is waiting to see it (and, before the confirmation, to confirm).
READ_DEADLINE_SECONDS = 10.0
# Before the confirmation dialog the person waits for the read: a shorter bound.
CONFIRM_DEADLINE_SECONDS = 4.0
# Statuses before the decision is carried out: waiting, withdrawn, or approved within the grace period.
READABLE = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)


def mcp_read_call(
    tool: str, arguments: Mapping[str, Any], tools: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]] | None:
    """The read to call for an operation that `tool(arguments)` returned, or None.

    Only a tool the Company marks read-only (`annotations.readOnlyHint: true`) and not
    destructive, other than the call's own, every argument it requires an ID (`…_id`, `sku`,
    `number`…) the call passed too (so it reads one thing the call named, never a list or a
    search). Calling a tool is an action the person didn't ask for: a name that merely reads
    like a read (`get_subscription`) is never taken for one (audit A47). Among several, the one
    whose IDs come first in the call's arguments (the order, before the item), then by name.
    Only the required IDs are passed, with the call's values. The outcome probe reads with the
    same rule (Ops 7)."""
    order = list(arguments)
    best: tuple[tuple[int, str], str, dict[str, Any]] | None = None
    for described in tools:
        name = described.get("name")
        if not isinstance(name, str) or name == tool:
            continue
        marks = described.get("annotations")
        annotations: dict[str, Any] = marks if isinstance(marks, dict) else {}
        if (
            annotations.get("readOnlyHint") is not True
            or annotations.get("destructiveHint") is True
        ):
            continue
        given = described.get("inputSchema")
        schema: dict[str, Any] = given if isinstance(given, dict) else {}
        required = schema.get("required")
        if (
            not isinstance(required, list)
            or not required
            or not all(isinstance(r, str) for r in required)
        ):
            continue
        if not all(r in arguments and _is_id_key(r) and _plain(arguments[r]) for r in required):
            continue
        rank = (min(order.index(r) for r in required), name)
        if best is None or rank < best[0]:
            best = (rank, name, {r: arguments[r] for r in required})
    return None if best is None else (best[1], best[2])


def _plain(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def named_api_url(terms: Any, company: CompanyRecord) -> str | None:
    """A URL or path in the terms on the Company's API (`"resource": "/api/orders/ord_7Hk2"`),
    made absolute on its origin; None when the terms name none."""
    origins = api_origins(company)
    for path, value in _flatten(terms):
        if not path or not isinstance(value, str) or len(value) > 2000:
            continue
        text = value.strip()
        if text.startswith("/") and not text.startswith("//"):
            return origin_of(company.base_url) + text
        if text.lower().startswith(("https://", "http://")) and origin_of(text) in origins:
            return text
    return None


class ResourceReader:
    """Reads and keeps the resource of one operation at a time; the Agent facade owns it."""

    def __init__(
        self,
        store: Callable[[], Store],
        sessions: Callable[[], Sessions],
        client: Callable[[], Awaitable[httpx2.AsyncClient]],
        fetch_openapi: Callable[[CompanyRecord], Awaitable[dict]],
        mcp: Callable[[], Any],
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._client = client
        self._fetch_openapi = fetch_openapi
        self._mcp = mcp

    async def read(
        self, operation_row: int, deadline: float = READ_DEADLINE_SECONDS
    ) -> ResourceRead | None:
        """Read and keep the operation's resource now; None when the operation is past its
        decision (nothing is read for it). Never raises for anything a Company does."""
        store = self._store()
        op = store.get_operation(operation_row)
        if op.status not in READABLE:
            return None
        source, body, problem = "", None, None
        try:
            async with asyncio.timeout(deadline):
                source, body, problem = await self._read(op)
        except TimeoutError:
            problem = f"no complete answer within {deadline:g} s"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours must not take the review down
            log.exception(
                "reading the resource of operation %s failed inside poppy-tui", operation_row
            )
            problem = f"poppy-tui failed while reading it ({type(exc).__name__})"
        if not source and problem is None:
            problem = no_read_offered("nowhere to read it")
        read = ResourceRead(
            op.id,
            op.current.id,
            source,
            now_utc(),
            body is not None and problem is None,
            body,
            problem,
        )
        store.save_resource_read(read)
        return read

    async def _read(self, op: OperationRecord) -> tuple[str, Any, str | None]:
        store = self._store()
        company = store.get_company(op.company.id)
        request = op.request
        # An operation returned signed out is the Session's (that its current revision came in);
        # one returned signed in is the account's, read from the current Session with the
        # access token (Ops 3).
        session_id = (
            company.session_id if op.account_owned else (op.current.session_id or op.session_id)
        )
        token = await self._sessions().access_token(company) if op.account_owned else None
        if isinstance(request, ApiRequest):
            return await self._read_api(company, request.url, session_id, token)
        if isinstance(request, McpRequest):
            return await self._read_mcp(company, request, session_id, token)
        if isinstance(request, ConversationRequest):
            url = named_api_url(op.current.terms, company)
            if url is None:
                return (
                    "",
                    None,
                    no_read_offered("a conversation names no API resource in these terms"),
                )
            return await self._read_api(company, url, session_id, token)
        return "", None, no_read_offered("nowhere to read it")

    async def _read_api(
        self, company: CompanyRecord, request_url: str, session_id: str, token: str | None
    ) -> tuple[str, Any, str | None]:
        from poppy_tui.agent.net import http

        if origin_of(request_url) not in api_origins(company):
            return (
                "",
                None,
                no_read_offered(
                    "the request went elsewhere than the Company's API, so nothing is read there"
                ),
            )
        from poppy_tui.agent.companies import openapi_url

        if openapi_url(company) is None:
            return (
                "",
                None,
                no_read_offered("the Company lists no OpenAPI document to find a read in"),
            )
        try:
            document = await self._fetch_openapi(company)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an OpenAPI that can't be fetched: couldn't read
            return (
                "",
                None,
                f"no OpenAPI document to find a read in ({sanitize_line(str(exc), 200).text})",
            )
        url = resource_url(request_url, document)
        if url is None:
            return (
                "",
                None,
                no_read_offered(
                    "the Company's OpenAPI offers no GET for this resource, other than the action's own URL"
                ),
            )
        source = f"GET {url}"
        if origin_of(url) not in api_origins(company):
            return source, None, "the read is not on the Company's API, so it was not sent"
        headers = await self._sessions().signed_in_headers(company, session_id, token)
        headers["Accept"] = "application/json"
        answer = await http.request(
            await self._client(), "GET", url, headers=headers, limit=MAX_RESOURCE_BYTES
        )
        if isinstance(answer, (NotSent, Unknown)):
            return source, None, sanitize_line(answer.detail or "no answer", 300).text
        if 300 <= answer.status < 400:
            return (
                source,
                None,
                f"the Company answered HTTP {answer.status}, a redirect, which poppy-tui does not follow",
            )
        if answer.error:
            return source, None, sanitize_line(answer.error, 300).text
        if not 200 <= answer.status < 300:
            code = answer.body.get("error") if isinstance(answer.body, dict) else None
            said = f" ({sanitize_line(code, 60).text})" if isinstance(code, str) else ""
            return source, None, f"the Company answered HTTP {answer.status}{said}"
        if not isinstance(answer.body, dict):
            return source, None, "the answer is not a JSON object"
        return source, answer.body, None

    async def _read_mcp(
        self, company: CompanyRecord, request: McpRequest, session_id: str, token: str | None
    ) -> tuple[str, Any, str | None]:
        def choose(tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
            return mcp_read_call(request.tool, request.arguments, tools)

        call, body, problem = await self._mcp().read_with_tool(
            company,
            request.server_url,
            choose,
            session_id=session_id,
            token=token,
            limit=MAX_RESOURCE_BYTES,
        )
        if call is None:
            return (
                "",
                None,
                problem
                or no_read_offered(
                    f"the MCP server marks no tool read-only that reads what "
                    f"{sanitize_line(request.tool, 60).text} names"
                ),
            )
        name, args = call
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        return f"MCP {name}({shown})", body, problem
