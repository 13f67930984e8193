"""Which transport an approval goes through: the interface of the request that returned the
approved revision (Ops 6), whatever interface the operation first came through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from poppy_tui.agent.transports import Exchange
from poppy_tui.protocol.outcomes import NotPerformed
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRecord
    from poppy_tui.agent.transports.api import ApiTransport
    from poppy_tui.agent.transports.conversation import Conversations
    from poppy_tui.protocol.approval import Approval


class Routes(Protocol):
    """The transports an approval can go through (the `Agent` facade has them, built on first use)."""

    @property
    def api(self) -> ApiTransport: ...
    @property
    def mcp(self) -> Any: ...  # transports.mcp.McpTransport (the MCP SDK, imported on first use)
    @property
    def conversations(self) -> Conversations: ...


async def send_over(
    routes: Routes, op: OperationRecord, approval: Approval, session_id: str
) -> Exchange:
    """Send the approval the way `op.request` (the request that returned the approved revision;
    the dispatcher sees to it) was sent: the same request again with the approval (Ops 6)."""
    request = op.request
    if isinstance(request, ApiRequest):
        return await routes.api.send(
            op.company,
            request,
            session_id=session_id,
            approval=approval,
            idempotency_key=op.idempotency_key,
            account_owned=op.account_owned,
        )
    if isinstance(request, McpRequest):
        return await routes.mcp.call(
            op.company,
            request.server_url,
            request.tool,
            request.arguments,
            session_id=session_id,
            approval=approval,
            account_owned=op.account_owned,
        )
    if isinstance(request, ConversationRequest):
        return await routes.conversations.send_approval(op, approval)
    detail = f"poppy-tui can't send an approval over {request.interface!r}"
    return Exchange(
        NotPerformed(None, "unsupported_interface", None),
        None,
        {"error": detail},
        op.session_id,
        detail,
    )
