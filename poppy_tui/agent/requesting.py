"""A person's (or an agent's) request to a Company through poppy-tui: an API call, a tool call, a
conversation message. Each is recorded before it is sent, sent once (again only where that is
safe: it never left, or the Company asked briefly to wait and the request is idempotent), and
its answer recorded (request_results.py says what it means for the caller). The `Agent` facade's
call_api, call_tool, say and refresh_conversation are these."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from poppy_tui.agent.errors import AgentError
from poppy_tui.agent.request_results import ConversationResult, RequestResult, request_result

if TYPE_CHECKING:
    from poppy_tui.agent import companies as discovery
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
    from poppy_tui.agent.transports import Exchange
    from poppy_tui.agent.transports.api import ApiTransport
    from poppy_tui.agent.transports.conversation import Conversations
    from poppy_tui.protocol.retry import BackoffPolicy

# A first request (no approval yet) is resent on its own only when that is safe: it never
# left (NotSent), or the Company asked us to wait briefly and the request is idempotent
# (a GET, or a write carrying its Idempotency-Key).
FIRST_REQUEST_SENDS = 3
FIRST_REQUEST_MAX_WAIT = 5.0


class RequestingAgent(Protocol):
    """What requests use of the agent (the `Agent` facade meets it)."""

    @property
    def store(self) -> Store: ...
    @property
    def config(self) -> Config: ...
    @property
    def sessions(self) -> Sessions: ...
    @property
    def api(self) -> ApiTransport: ...
    @property
    def mcp(self) -> Any: ...
    @property
    def conversations(self) -> Conversations: ...
    @property
    def backoff(self) -> BackoffPolicy: ...
    async def refresh_company(
        self, company: CompanyRecord, force: bool = False
    ) -> discovery.Refreshed: ...
    async def token_refused(self, company: CompanyRecord, fingerprint: str | None) -> None: ...
    def outcome_for_request(self, op: OperationRecord, request_id: int) -> OperationRecord: ...
    def read_resource_soon(self, operation_row: int) -> None: ...


async def call_api(
    agent: RequestingAgent,
    company: CompanyRecord,
    method: str,
    path_or_url: str,
    body: Any = None,
    origin: str = "cli",
) -> RequestResult:
    import uuid

    from poppy_tui.agent import companies as discovery
    from poppy_tui.agent.transports.api import WRITE_METHODS
    from poppy_tui.protocol.requests import ApiRequest

    company = await _fresh(agent, company)
    try:
        url = discovery.resolve_api_url(company, path_or_url, agent.config.allow_loopback)
    except ValueError as exc:
        raise AgentError(str(exc)) from None
    request = ApiRequest(method=method.upper(), url=url, body=body)
    request_id = agent.store.add_request(company.id, request, origin)
    # The first request's own key; the approval's resend gets another (Ops 6).
    key = str(uuid.uuid4()) if request.method in WRITE_METHODS else None
    idempotent = key is not None or request.method in ("GET", "HEAD", "OPTIONS")
    declared = agent.sessions.declares_operations(company)
    exchange = await _first_request(
        agent,
        lambda c: agent.api.send(c, request, session_id=c.session_id, idempotency_key=key),
        company,
        idempotent,
    )
    return await _answered(agent, company, request_id, exchange, "api", declared)


async def call_tool(
    agent: RequestingAgent,
    company: CompanyRecord,
    tool: str,
    arguments: dict | None = None,
    origin: str = "cli",
) -> RequestResult:
    from poppy_tui.agent import companies as discovery
    from poppy_tui.protocol.requests import McpRequest

    company = await _fresh(agent, company)
    url = discovery.mcp_url(company)
    if url is None:
        raise AgentError(f"{company.name} lists no MCP server in its poppy.json")
    request = McpRequest(server_url=url, tool=tool, arguments=dict(arguments or {}))
    request_id = agent.store.add_request(company.id, request, origin)
    declared = agent.sessions.declares_operations(company)
    exchange = await _first_request(
        agent,
        lambda c: agent.mcp.call(c, url, tool, request.arguments, session_id=c.session_id),
        company,
        False,
    )
    return await _answered(agent, company, request_id, exchange, "mcp", declared)


async def say(
    agent: RequestingAgent,
    company: CompanyRecord,
    text: str,
    conversation_row: int | None = None,
    origin: str = "cli",
) -> ConversationResult:
    from poppy_tui.agent import companies as discovery
    from poppy_tui.protocol.outcomes import NotPerformed, describe

    company = await _fresh(agent, company)
    if not text.strip():
        raise AgentError("there is nothing to say")
    endpoint = discovery.conversation_endpoint(company)
    if conversation_row is not None:
        _, owner_company, endpoint, _, _ = agent.store.get_conversation(conversation_row)
        if owner_company != company.id:
            raise AgentError("that conversation is with another Company")
    if endpoint is None:
        raise AgentError(f"{company.name} offers no conversations in its poppy.json")
    declared = agent.sessions.declares_operations(company)
    said = await agent.conversations.say(company, endpoint, text, conversation_row, origin)
    await _notice_refused_token(agent, company, said.exchange)
    why = said.exchange.detail or describe(said.exchange.outcome)
    outcome = said.exchange.outcome
    if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
        company = await _recheck_after(agent, said.exchange, company)
        why = discovery.explain_extension_required(company, outcome.body, declared)
    if said.conversation_row is None:
        raise AgentError(
            f"{company.name} did not start the conversation: {why}", said.exchange.challenge
        )
    detail = "" if said.delivered else f"the message was not delivered: {why}"
    for row in said.ingested.operation_rows:
        agent.read_resource_soon(row)
    challenge = said.exchange.challenge or next(iter(said.ingested.challenges), None)
    return ConversationResult(
        said.conversation_row,
        said.conversation_id or "",
        said.ingested.messages,
        said.ingested.operation_rows,
        said.delivered,
        detail,
        said.ingested.problems,
        challenge,
        said.request_id,
    )


async def refresh_conversation(agent: RequestingAgent, conversation_row: int) -> ConversationResult:
    _, company_id, _, conversation_id, _ = agent.store.get_conversation(conversation_row)
    company = agent.store.get_company(company_id)
    got = await agent.conversations.read(company, conversation_row)
    return ConversationResult(
        conversation_row,
        conversation_id,
        got.messages,
        got.operation_rows,
        True,
        "; ".join(got.problems),
        got.problems,
        next(iter(got.challenges), None),
    )


# ---- the parts they share -------------------------------------------------------------------------


async def _fresh(agent: RequestingAgent, company: CompanyRecord) -> CompanyRecord:
    """The Company with an up-to-date poppy.json, read before a new request decides whether to
    declare the operations extension. A failed refresh keeps the stored copy."""
    return (await agent.refresh_company(company)).company


async def _first_request(
    agent: RequestingAgent,
    send: Callable[[CompanyRecord], Awaitable[Exchange]],
    company: CompanyRecord,
    idempotent: bool,
) -> Exchange:
    from poppy_tui.protocol.outcomes import NotSent, RetryLater

    exchange: Exchange | None = None
    for number in range(1, FIRST_REQUEST_SENDS + 1):
        # Read again before a resend: another process may have started a new Session meanwhile.
        exchange = await send(company if number == 1 else agent.store.get_company(company.id))
        outcome = exchange.outcome
        again = isinstance(outcome, NotSent) or (
            idempotent
            and isinstance(outcome, RetryLater)
            and (outcome.retry_after or 0) <= FIRST_REQUEST_MAX_WAIT
        )
        if not again or number == FIRST_REQUEST_SENDS:
            return exchange
        retry_after = outcome.retry_after if isinstance(outcome, RetryLater) else None
        await asyncio.sleep(min(agent.backoff.delay(number, retry_after), FIRST_REQUEST_MAX_WAIT))
    assert exchange is not None
    return exchange


async def _answered(
    agent: RequestingAgent,
    company: CompanyRecord,
    request_id: int,
    exchange: Exchange,
    interface: str,
    declared: bool,
) -> RequestResult:
    from poppy_tui.protocol.outcomes import ApprovalRequired

    await _notice_refused_token(agent, company, exchange)
    company = await _recheck_after(agent, exchange, company)
    result = request_result(
        agent.store, company, request_id, exchange, interface, declared, agent.outcome_for_request
    )
    if isinstance(exchange.outcome, ApprovalRequired) and result.operation_row is not None:
        agent.read_resource_soon(result.operation_row)
    return result


async def _recheck_after(
    agent: RequestingAgent, exchange: Exchange, company: CompanyRecord
) -> CompanyRecord:
    """After `extension_required`, read poppy.json again now (conditionally): the copy that
    decided what to declare may be out of date, and the explanation should say so."""
    from poppy_tui.protocol.outcomes import NotPerformed

    outcome = exchange.outcome
    if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
        return (await agent.refresh_company(company, force=True)).company
    return company


async def _notice_refused_token(
    agent: RequestingAgent, company: CompanyRecord, exchange: Exchange
) -> None:
    """A first request whose access token the Company refused (invalid_token): the sign-in is
    renewed or ended now, so `signin` and the Companies screen tell the truth."""
    from poppy_tui.protocol.challenges import INVALID_TOKEN

    challenge = exchange.challenge
    refused = exchange.token_fingerprint  # the token the request carried, not the one held now
    if challenge is not None and challenge.error == INVALID_TOKEN and refused is not None:
        await agent.token_refused(company, refused)
