"""`poppy-tui mcp` (the real subprocess, the MCP SDK's client over stdio) tells an agent that an
account's operation can't be approved while poppy-tui is signed in at its Company as another
account (Ops §3, "while signed in to the same account"), naming both; against Birch Market
(tests/companies/account_company.py, written from the spec alone)."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store.sign_ins import save_sign_in
from tests.mcp_server.conftest import mcp_client, person_agent, register

pytestmark = pytest.mark.slow


@pytest.fixture
def birch(birch, home):
    """Birch Market (tests/conftest.py), known to the home."""
    register(home, birch.base_url)
    return birch


async def test_operation_status_says_it_is_held_for_its_account(home, birch, tmp_path):
    agent = person_agent(home)
    try:
        company = agent.find_company(birch.base_url)

        async def alice(_company) -> str:
            return "tok_alice"

        agent.access_token_source = alice
        save_sign_in(
            agent.store, company.id, birch.base_url, "mediated", ("orders",), "alice@birch.test"
        )
        result = await agent.call_api(company, "POST", "/orders", {})
        row = result.operation_row
        # Signed out, and in again at Birch Market as someone else.
        save_sign_in(
            agent.store, company.id, birch.base_url, "mediated", ("orders",), "bob@birch.test"
        )
    finally:
        await agent.aclose()
    async with mcp_client(home, tmp_path) as session:
        status = await session.call_tool("operation_status", {"operation": str(row)})
    data = status.structured_content
    assert data["result"] == "waiting_for_person" and data["held"] is True, data
    assert (
        "can't be approved yet: this operation belongs to your account “alice@birch.test”"
        in data["meaning"]
    )
    assert "signed in there as “bob@birch.test”" in data["meaning"]
