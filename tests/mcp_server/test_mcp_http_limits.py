"""The HTTP gate's session limit, served for real on loopback (uvicorn, in this process so the limits
can be small): past the limit a new session gets a clear 503 with Retry-After, open sessions and
the queue are untouched, and room comes back when a session ends or idles out."""

from __future__ import annotations


import pytest

from poppy_tui.agent.store import Status
from tests.mcp_server.http_support import INITIALIZE, VERSION, call, rpc_answer
from tests.mcp_server.http_support import in_process_gate as gate
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


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
