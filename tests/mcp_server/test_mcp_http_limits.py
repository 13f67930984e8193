"""The HTTP gate's session limit, served for real on loopback (uvicorn, in this process so the limits
can be small): past the limit a new session gets a clear 503 with Retry-After, open sessions and
the queue are untouched, and room comes back when a session ends or idles out."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx2
import pytest

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from poppy_tui.mcp_server.http_gate import parse_listen, serve_http
from poppy_tui.mcp_server.http_token import TokenFile, token_path
from tests.mcp_server.conftest import person_agent
from tests.mcp_server.http_support import INITIALIZE, MCP_HEADERS
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

VERSION = "2025-06-18"


def rpc_answer(response: httpx2.Response) -> dict:
    """The JSON-RPC message in a JSON or an SSE answer."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return json.loads([d for d in data if d][-1])


@contextlib.asynccontextmanager
async def gate(home, **limits):
    """serve_http on 127.0.0.1 in this loop: (url, the Agent, a client with the token)."""
    agent = person_agent(home)
    tokens = TokenFile(token_path(resolve_paths(home).data_dir))
    stopping = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(
        serve_http(
            agent,
            parse_listen("127.0.0.1:0"),
            tokens,
            allowed_hosts=[],
            tls=None,
            started=ready.set_result,
            stopping=stopping,
            **limits,
        )
    )
    try:
        url = await asyncio.wait_for(ready, 30)
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {tokens.current().decode()}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            yield url, agent, client
    finally:
        stopping.set()
        await asyncio.wait_for(serving, 30)
        await agent.aclose()


async def call(
    client, url: str, session: str, method: str, params: dict | None = None, id: int | None = 2
):
    body = {
        "jsonrpc": "2.0",
        "method": method,
        **({"id": id} if id is not None else {}),
        **({"params": params} if params is not None else {}),
    }
    return await client.post(
        url, json=body, headers={"Mcp-Session-Id": session, "Mcp-Protocol-Version": VERSION}
    )


async def test_sessions_past_the_limit_get_503_and_nothing_is_lost(home, birchwood):
    async with gate(home, max_sessions=2) as (url, agent, client):
        first, second = (
            await client.post(url, json=INITIALIZE),
            await client.post(url, json=INITIALIZE),
        )
        assert first.status_code == second.status_code == 200
        s1 = first.headers["mcp-session-id"]
        assert (
            await call(client, url, s1, "notifications/initialized", id=None)
        ).status_code == 202
        queued = await call(
            client,
            url,
            s1,
            "tools/call",
            {
                "name": "call_api",
                "arguments": {
                    "company": "birchwood",
                    "method": "POST",
                    "path": "/v1/appointments/apt_77/cancel",
                    "body": {},
                    "wait_seconds": 0,
                },
            },
        )
        number = rpc_answer(queued)["result"]["structuredContent"]["operation"]["operation"]

        for _ in range(5):  # a flood of new sessions: each refused, clearly
            refused = await client.post(url, json=INITIALIZE)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "5"
            assert "Too many open sessions" in refused.json()["error"]["message"]
        # The open sessions go on, and the queue is as it was.
        listed = await call(
            client, url, s1, "tools/call", {"name": "list_pending", "arguments": {}}, id=3
        )
        assert [
            o["operation"] for o in rpc_answer(listed)["result"]["structuredContent"]["operations"]
        ] == [number]
        assert agent.store.get_operation(number).status == Status.PENDING

        ended = await client.delete(
            url, headers={"Mcp-Session-Id": s1, "Mcp-Protocol-Version": VERSION}
        )
        assert ended.status_code == 200
        assert (await client.post(url, json=INITIALIZE)).status_code == 200  # the room s1 left
        assert (await client.post(url, json=INITIALIZE)).status_code == 503
        assert agent.store.get_operation(number).status == Status.PENDING


async def test_an_idle_session_is_reclaimed(home):
    async with gate(home, max_sessions=1, session_idle_seconds=0.5) as (url, agent, client):
        opened = await client.post(url, json=INITIALIZE)
        assert opened.status_code == 200

        async def admitted() -> bool:  # refused while it is open, admitted once it idled out
            reopened = await client.post(url, json=INITIALIZE)
            assert reopened.status_code in (200, 503)
            return reopened.status_code == 200

        await wait_until(admitted, timeout=20, step=0.05, describe="a new session admitted")
        assert (
            await call(client, url, opened.headers["mcp-session-id"], "tools/list", {})
        ).status_code == 404
