"""`poppy-tui mcp` (the real subprocess, the MCP SDK's client over stdio) tells an agent, in the
words `show` uses, that an account's approval is held because the sign-in now can't be shown to
be the operation's account (Ops §3; Device Sign-In that names no account, signed in again since);
against Birch Market (tests/companies/account_company.py, written from the spec alone)."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store.sign_ins import save_sign_in
from poppy_tui.cli.output import show_text
from poppy_tui.safety.account_owner import unconfirmed_account_hold
from tests.companies.account_company import NAME, AccountCompany
from tests.mcp_server.conftest import mcp_client, person_agent, register

pytestmark = pytest.mark.slow


@pytest.fixture
def birch(home):
    company = AccountCompany()
    company.state.tokens["tok_alice"] = ("alice", ("orders",))
    try:
        register(home, company.base_url)
        yield company
    finally:
        company.stop()


async def test_operation_status_says_the_approval_is_held_for_the_persons_word(
    home, birch, tmp_path
):
    agent = person_agent(home)
    try:
        company = agent.find_company(birch.base_url)

        async def alice(_company) -> str:
            return "tok_alice"

        agent.access_token_source = alice
        save_sign_in(agent.store, company.id, birch.base_url, "device", ("orders",), None)
        result = await agent.call_api(company, "POST", "/orders", {})
        row = result.operation_row
        # Signed out, and in again at Birch Market: a sign-in that names no account either.
        save_sign_in(agent.store, company.id, birch.base_url, "device", ("orders",), None)
        shown = show_text(agent.store, agent.store.get_operation(row))
    finally:
        await agent.aclose()
    hold = unconfirmed_account_hold(NAME, None, None)
    assert f"Held: {hold}" in shown
    # The request was the CLI's, so only an agent allowed to see every operation sees it.
    async with mcp_client(home, tmp_path, "--see-all") as session:
        status = await session.call_tool("operation_status", {"operation": str(row)})
    data = status.structured_content
    assert data["result"] == "waiting_for_person" and data["held"] is True, data
    assert data["meaning"].endswith(f"held: {hold}"), data["meaning"]
    assert birch.state.approval_users == []
