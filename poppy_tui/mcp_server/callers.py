"""Who is calling a tool: a gate agent (agent/gate/credentials.py), as the HTTP guard found it
from the bearer token (and put in the request's ASGI scope as the MCP SDK's AuthenticatedUser,
which also binds each session to the token that opened it), or as the person named a stdio gate
(`poppy-tui mcp --agent NAME`: the person started it, so the name is taken as given). Beside it,
what its MCP client says it is (clientInfo): a claim, recorded as such."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.agent.gate.credentials import GateAgent
from poppy_tui.agent.gate.default_token import DEFAULT_AGENT
from poppy_tui.agent.store.requests import Requester

DEFAULT_CALLER = GateAgent(DEFAULT_AGENT, False, DEFAULT_AGENT)


@dataclass(frozen=True)
class Caller:
    agent: GateAgent
    requester: Requester

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def sees_everything(self) -> bool:
        return self.agent.see_all


def scope_user(agent: GateAgent) -> Any:
    """The MCP SDK's AuthenticatedUser for `agent` (no secret in it: the principal names the
    token by its hash)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    return AuthenticatedUser(
        AccessToken(
            token=agent.principal,
            client_id=agent.name,
            scopes=[],
            subject=agent.principal,
            claims={"see_all": agent.see_all},
        )
    )


def agent_of_scope(scope: dict[str, Any]) -> GateAgent | None:
    user = scope.get("user")
    token = getattr(user, "access_token", None)
    if token is None or token.subject is None:
        return None
    return GateAgent(token.client_id, bool((token.claims or {}).get("see_all")), token.subject)


def _client_info(context: Any) -> tuple[str | None, str | None]:
    try:
        params = context.session.client_params
    except (AttributeError, ValueError):
        return None, None
    info = getattr(params, "client_info", None)
    name, version = getattr(info, "name", None), getattr(info, "version", None)
    return (
        name if isinstance(name, str) else None,
        version if isinstance(version, str) else None,
    )


def caller_of(context: Any, stdio_agent: GateAgent) -> Caller:
    """The caller of the tool call `context` is for: the HTTP request's agent, else the stdio one."""
    agent = None
    try:
        request = context.request_context.request
    except (AttributeError, ValueError):
        request = None
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        agent = agent_of_scope(scope)
    agent = agent or stdio_agent
    name, version = _client_info(context)
    return Caller(agent, Requester(agent.name, name, version))
