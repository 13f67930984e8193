"""Small request helpers shared by the demo Company's tests."""

from __future__ import annotations

from typing import Any

import httpx

from poppy_tui.demo.testing import AgentSession
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.ids import is_valid_id
from poppy_tui.protocol.operation import parse_operation

SPEC_PATH = "/api/orders/ord_7Hk2/exchanges"
SPEC_BODY = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}
SPEC_SUMMARY = (
    "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), "
    "for $70.00 more, charged to the card used for the order."
)


def propose(
    http: httpx.Client, agent: AgentSession, path: str = SPEC_PATH, body: Any = None, **headers: Any
) -> dict[str, Any]:
    """Send the request without approval; return the operation it must come back with."""
    response = http.post(
        path, json=SPEC_BODY if body is None else body, headers=agent.headers(**headers)
    )
    assert response.status_code == 403, response.text
    data = response.json()
    assert data["error"] == "approval_required"
    operation = data["operation"]
    parse_operation(operation)  # the agent side's own validation accepts it
    assert is_valid_id(operation["operation_id"]) and is_valid_id(operation["revision"])
    return operation


def approval_of(operation: dict[str, Any]) -> Approval:
    return Approval(operation["operation_id"], operation["revision"])


def send_approved(
    http: httpx.Client,
    agent: AgentSession,
    operation: dict[str, Any],
    path: str = SPEC_PATH,
    body: Any = None,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    headers = agent.headers(approval=approval_of(operation))
    headers.update(extra or {})
    return http.post(path, json=SPEC_BODY if body is None else body, headers=headers)
