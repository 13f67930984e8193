"""Many agents, one person, over the real streamable-HTTP transport (`poppy-tui mcp --http` as a
subprocess, the MCP SDK's client): each agent has a name and a token of its own (only its hash
kept), the person sees who asked and what its client claims to be, an agent reads only what its
own requests returned (another's operation answers as unknown), a revoked agent is cut off at once,
and the gate never asks anything through MCP elicitation or sampling."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import stat

import httpx
import pytest
from mcp_types import Implementation

from poppy_tui.agent.store import Status
from poppy_tui.cli.main import main
from tests.cli.cli_support import run_process
from tests.mcp_server.conftest import person_agent
from tests.mcp_server.http_support import (
    INITIALIZE,
    MCP_HEADERS,
    agent_token,
    http_session,
    raw_post,
    running_gate,
    token_of,
)

pytestmark = pytest.mark.slow

VERSION = "2025-06-18"


def cancel(item: int, wait: float = 0) -> dict:
    return {
        "company": "Bench Goods",
        "method": "POST",
        "path": f"/items/{item}/cancel",
        "body": {},
        "wait_seconds": wait,
    }


def run_cli(home, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--home", str(home), *argv])
    return code, out.getvalue(), err.getvalue()


def agents_json(home) -> dict[str, dict]:
    code, out, err = run_cli(home, "mcp", "agents", "--json")
    assert code == 0, err
    return {a["name"]: a for a in json.loads(out)["agents"]}


async def test_each_agent_has_a_token_of_its_own_kept_only_as_a_hash_and_named_everywhere(
    home, bench, tmp_path
):
    laptop = agent_token(home, "laptop")
    agents_file = home / "data" / "mcp-agents.json"
    assert stat.S_IMODE(agents_file.stat().st_mode) == 0o600
    assert laptop not in agents_file.read_text()  # only its hash
    code, _, err = run_cli(home, "mcp", "token", "--agent", "laptop")
    assert code == 2 and "has a token already" in err and "--rotate" in err
    assert agents_json(home)["laptop"]["last_used_at"] is None
    hostile = Implementation(name="Claude\x1b[2J Code\u202e", version="1.2\x07")
    with running_gate(home, tmp_path) as gate:
        async with http_session(gate.url, laptop, client_info=hostile) as session:
            first = await session.call_tool("call_api", cancel(1))
        assert first.structured_content["result"] == "waiting_for_person"
        row = first.structured_content["operation"]["operation"]
        # The token from before names keeps working, as the agent 'default'.
        async with http_session(gate.url, token_of(home)) as session:
            again = await session.call_tool("call_api", cancel(1))
        assert again.structured_content["operation"]["operation"] == row  # a new revision
    assert laptop not in gate.out + gate.err

    listed = agents_json(home)
    assert listed["laptop"]["token"] is True and listed["laptop"]["see_all"] is False
    assert listed["laptop"]["last_used_at"] and listed["laptop"]["last_asked_at"]
    assert listed["laptop"]["waiting"] == 1 and listed["default"]["waiting"] == 1
    assert listed["laptop"]["client"] == {"name": "Claude\x1b[2J Code\u202e", "version": "1.2\x07"}
    code, text, _ = run_cli(home, "mcp", "agents")
    assert code == 0 and "laptop  (token)" in text and "1 waiting for you" in text
    assert "\x1b" not in text and "\u202e" not in text and "its client says «Claude\\x1b[2J" in text

    # Who asked, in show and show --json: the agent by name, its client's claim neutralised, and
    # that it was the agent's first request; then the default agent's.
    code, shown, _ = run_cli(home, "show", str(row))
    assert code == 0
    asked = next(line for line in shown.splitlines() if line.startswith("Asked by:"))
    assert asked.startswith(
        "Asked by: agent «laptop» (its client says «Claude\\x1b[2J Code⟨U+202E⟩"
    )
    assert "NEW: its first request" in asked
    assert asked.endswith(
        "; then agent «default» (its client says «mcp 0.1.0»; NEW: its first request)"
    )
    assert "\x1b" not in shown and "\x07" not in shown
    code, shown_json, _ = run_cli(home, "show", str(row), "--json")
    by = json.loads(shown_json)["operation"]["requested_by"]
    assert [(b["origin"], b["agent"], b["first_request"]) for b in by] == [
        ("mcp", "laptop", True),
        ("mcp", "default", True),
    ]
    assert by[0]["client"] == {"name": "Claude\x1b[2J Code\u202e", "version": "1.2\x07"}
    assert "\\u001b" in shown_json and "\x1b" not in shown_json  # JSON escapes it
    code, pending, _ = run_cli(home, "pending", "--json")
    [listed_row] = json.loads(pending)["operations"]
    assert listed_row["requested_by"] == {"origin": "mcp", "agent": "default"}


async def test_an_agent_reads_only_what_its_own_requests_returned(home, bench, tmp_path):
    alpha, beta = agent_token(home, "alpha"), agent_token(home, "beta")
    overseer = agent_token(home, "overseer", "--see-all")
    called = run_process(
        "call", "Bench Goods", "POST", "/items/30/cancel", "--body", "{}", home=home
    )
    assert called.code == 3, called
    with running_gate(home, tmp_path) as gate:
        async with http_session(gate.url, alpha) as a, http_session(gate.url, beta) as b:
            mine = (await a.call_tool("call_api", cancel(10))).structured_content
            theirs = (await b.call_tool("call_api", cancel(20))).structured_content
            a_row, b_row = mine["operation"]["operation"], theirs["operation"]["operation"]
            assert {
                o["operation"]
                for o in (await a.call_tool("list_pending", {})).structured_content["operations"]
            } == {a_row}
            assert (await a.call_tool("operation_status", {"operation": a_row})).is_error is False
            for key in (b_row, str(b_row), "cxl_20", 1):  # beta's, by number or id; the CLI's
                for tool, extra in (
                    ("operation_status", {}),
                    ("wait_for_decision", {"wait_seconds": 0}),
                ):
                    hidden = await a.call_tool(tool, {"operation": key, **extra})
                    unknown = await a.call_tool(tool, {"operation": 999_999, **extra})
                    assert hidden.is_error, (tool, key)
                    # Word for word what an operation that doesn't exist answers.
                    assert hidden.content[0].text == unknown.content[0].text.replace(
                        "999999", str(key)
                    )
                    said = json.dumps(hidden.model_dump(mode="json"))
                    assert "cxl_20" not in said or key == "cxl_20"
                    assert "cxl_30" not in said and "Bench" not in said
        async with http_session(gate.url, overseer) as c:
            everything = (await c.call_tool("list_pending", {})).structured_content["operations"]
            assert {o["operation"] for o in everything} == {1, a_row, b_row}
            assert (await c.call_tool("operation_status", {"operation": b_row})).is_error is False


async def test_another_agents_session_is_not_found_with_your_token(home, tmp_path):
    alpha, beta = agent_token(home, "alpha"), agent_token(home, "beta")
    with running_gate(home, tmp_path) as gate:
        opened = raw_post(gate.url, token=beta)
        session = opened.headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": VERSION}
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        assert raw_post(gate.url, listing, token=alpha, headers=headers).status_code == 404
        assert raw_post(gate.url, listing, token=beta, headers=headers).status_code == 200


async def test_a_revoked_agent_is_refused_and_its_waiting_call_ends_at_once(home, bench, tmp_path):
    doomed, other = agent_token(home, "doomed"), agent_token(home, "other")
    with running_gate(home, tmp_path) as gate:
        async with http_session(gate.url, other) as survivor:
            async with http_session(gate.url, doomed) as session:
                waiting = asyncio.create_task(session.call_tool("call_api", cancel(5, wait=600)))
                agent = person_agent(home)
                try:
                    for _ in range(600):
                        if agent.store.list_operations([Status.PENDING]):
                            break
                        await asyncio.sleep(0.05)
                    assert not waiting.done()
                    code, _, err = run_cli(home, "mcp", "revoke", "doomed")
                    assert code == 0 and "refuses it from its next request" in err
                    # The waiting call ends by itself, long before its 600 s: as an error,
                    # however the SDK reports a stream the server closed.
                    try:
                        ended: object = await asyncio.wait_for(waiting, 60)
                    except TimeoutError:
                        raise AssertionError("the call still waits after the revocation") from None
                    except Exception as exc:  # noqa: BLE001 - the SDK's report of the closed stream
                        ended = exc
                    assert isinstance(ended, Exception) or ended.is_error, ended
                    # The operation stays in the queue for the person.
                    assert [r.status for r in agent.store.list_operations(list(Status))] == [
                        Status.PENDING
                    ]
                finally:
                    await agent.aclose()
            refused = raw_post(gate.url, token=doomed)
            assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]
            # Another agent goes on as before.
            assert (await survivor.call_tool("list_pending", {})).is_error is False
    assert "doomed" not in agents_json(home) or agents_json(home)["doomed"]["token"] is False
    assert run_cli(home, "mcp", "revoke", "doomed")[0] == 1  # no token to end any more


async def test_the_gate_never_asks_through_elicitation_or_sampling(home, bench, tmp_path):
    asked: list[str] = []

    async def elicit(context, params):
        asked.append("elicitation")
        raise AssertionError("the gate asked through elicitation")

    async def sample(context, params):
        asked.append("sampling")
        raise AssertionError("the gate asked through sampling")

    async def roots(context):
        asked.append("roots")
        raise AssertionError("the gate asked for roots")

    token = agent_token(home, "eager")
    with running_gate(home, tmp_path) as gate:
        async with http_session(
            gate.url,
            token,
            elicitation_callback=elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as session:
            waiting = asyncio.create_task(session.call_tool("call_api", cancel(3, wait=120)))
            agent = person_agent(home)
            try:
                for _ in range(600):
                    rows = agent.store.list_operations([Status.PENDING])
                    if rows:
                        break
                    await asyncio.sleep(0.05)
                record = agent.store.get_operation(rows[0].id)
                agent.approve(record.id, record.current.id)  # the person, at poppy-tui
                result = await asyncio.wait_for(waiting, 60)
            finally:
                await agent.aclose()
            for name, arguments in (
                ("list_companies", {"include_offerings": True}),
                ("describe_company", {"company": "Bench Goods"}),
                ("list_pending", {}),
                ("operation_status", {"operation": record.id}),
                ("wait_for_decision", {"operation": record.id, "wait_seconds": 0}),
            ):
                await session.call_tool(name, arguments)
    assert result.structured_content["result"] == "performed"
    assert asked == []


def test_no_tool_of_the_gate_asks_the_client_anything():
    """The source of the gate never calls the SDK's ways of asking the client (elicitation,
    sampling, roots): what the client answers there, it answers without the person."""
    from pathlib import Path

    import poppy_tui.mcp_server as gate

    words = ("elicit", "create_message", "list_roots", "sampling")
    for path in Path(gate.__file__).parent.glob("*.py"):
        code = path.read_text()
        assert not [w for w in words if w in code], path


def test_tokens_are_unknown_to_other_agents_files_and_raw_refusals_close(home, tmp_path):
    laptop = agent_token(home, "laptop")
    with running_gate(home, tmp_path) as gate:
        with httpx.Client(timeout=30) as client:
            answer = client.post(
                gate.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}
            )
            assert answer.status_code == 401 and answer.headers["connection"] == "close"
            good = client.post(
                gate.url,
                json=INITIALIZE,
                headers={**MCP_HEADERS, "Authorization": f"Bearer {laptop}"},
            )
            assert good.status_code == 200


async def test_an_agent_continues_its_own_conversation_never_anothers(home, shop, tmp_path):
    alpha, beta = agent_token(home, "alpha"), agent_token(home, "beta")
    overseer = agent_token(home, "overseer", "--see-all")
    say = {"company": "Manzanita", "text": "Hello, what can you do?", "wait_seconds": 0}
    with running_gate(home, tmp_path) as gate:
        async with http_session(gate.url, alpha) as a, http_session(gate.url, beta) as b:
            first = await a.call_tool("talk_to_company", {**say, "new_conversation": True})
            mine = first.structured_content["conversation"]
            # beta asks to continue "the latest conversation": it gets one of its own.
            theirs = (await b.call_tool("talk_to_company", say)).structured_content["conversation"]
            assert theirs != mine
            again = (await a.call_tool("talk_to_company", say)).structured_content["conversation"]
            assert again == mine  # alpha goes on in its own
        async with http_session(gate.url, overseer) as c:
            latest = (await c.call_tool("talk_to_company", say)).structured_content["conversation"]
            assert latest in (mine, theirs)  # it sees everything: the latest of them all
