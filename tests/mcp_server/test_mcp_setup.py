"""docs/mcp.md's set-up, as a newcomer follows it (walk C3): a home whose key is in a file needs
the key storage named, and without it the gate says so as poppy-tui's own problem, whole, with
the fix at its end, and as an error: never as "0 API operations" labelled Company-written. The
real `poppy-tui mcp` subprocess, the MCP SDK's stdio client, the demo Company, no keyring."""

from __future__ import annotations

import pytest

from tests.cli.cli_support import make_home
from tests.mcp_server.conftest import mcp_client, register

pytestmark = pytest.mark.slow

# A home as the demo's: no key_storage in its config (the demo's key is in a file there, and the
# docs say to name it in the gate's environment). No keyring answers here, as on a server.
NO_KEY_STORAGE = "grace_seconds = 0\narm_delay_seconds = 0\nrequest_timeout_seconds = 10\n"
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


@pytest.fixture
def bare_home(tmp_path, monkeypatch, company):
    home = make_home(tmp_path, monkeypatch, NO_KEY_STORAGE)
    register(home, company.base_url)
    return home


def text_of(result) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


async def test_without_the_key_storage_the_gate_says_so_whole_as_its_own_problem(
    bare_home, tmp_path
):
    async with mcp_client(bare_home, tmp_path, "--agent", "newcomer", env=NO_KEYRING) as session:
        described = await session.call_tool("describe_company", {"company": "Manzanita"})
    said = text_of(described)
    assert described.is_error is True, said
    problem = next(line for line in said.splitlines() if line.startswith("problem"))
    assert problem.startswith("problem (poppy-tui's own): API: No usable keyring")
    assert "POPPY_TUI_KEY_STORAGE=file" in problem and "…(+" not in said  # never cut short
    assert "API operations: not read" in said and "0 API operations" not in said
    assert described.structured_content["problems"][0].endswith("in the environment.")


async def test_with_the_key_storage_the_docs_name_it_works(bare_home, tmp_path):
    env = {**NO_KEYRING, "POPPY_TUI_KEY_STORAGE": "file"}
    async with mcp_client(bare_home, tmp_path, "--agent", "newcomer", env=env) as session:
        described = await session.call_tool("describe_company", {"company": "Manzanita"})
        cancelled = await session.call_tool(
            "call_company_tool",
            {
                "company": "Manzanita",
                "tool": "cancel_subscription",
                "arguments": {"subscription_id": "sub_6Tc1"},
                "wait_seconds": 0,
            },
        )
    assert described.is_error is False and described.structured_content["api_operations"]
    assert cancelled.structured_content["result"] == "waiting_for_person"
    # The stdio gate's --agent is who asked, as the person named it.
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.agent.store import Store

    with Store.open(resolve_paths(bare_home).database) as store:
        row = cancelled.structured_content["operation"]["operation"]
        [asked] = store.asked_by(row)
    assert (asked.origin, asked.agent, asked.first_request) == ("mcp", "newcomer", True)
    assert asked.client == {"name": "mcp", "version": asked.client["version"]}  # the SDK's claim
