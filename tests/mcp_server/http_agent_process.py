"""One agent in a process of its own, for tests/mcp_server/test_mcp_http_agents.py:

    MCP_TOKEN=... python tests/mcp_server/http_agent_process.py URL COMPANY ITEM [PROBE]

asks poppy-tui's HTTP gate (the MCP SDK's streamable-HTTP client) to cancel ITEM at COMPANY, waits
for the person's decision, then asks operation_status of every operation number from 1 to PROBE
(default 0: none), and prints one JSON line: the tool result, the progress messages and the
numbers it could read.
It imports only the SDK and its HTTP client (not pytest, not poppy_tui): sixteen of these start
at once on a small machine."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def run(url: str, token: str, company: str, item: int, probe: int = 0) -> dict:
    progress: list[str] = []

    async def on_progress(value, total, message):
        progress.append(message or "")

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(
                    "call_api",
                    {
                        "company": company,
                        "method": "POST",
                        "path": f"/items/{item}/cancel",
                        "body": {},
                        "wait_seconds": 600,
                    },
                    progress_callback=on_progress,
                )
                visible = []
                for number in range(1, probe + 1):
                    status = await session.call_tool("operation_status", {"operation": number})
                    if not status.is_error:
                        visible.append(number)
    return {
        "item": item,
        "is_error": result.is_error,
        "result": result.structured_content,
        "progress": progress,
        "visible": visible,
    }


if __name__ == "__main__":
    url, company, item = sys.argv[1:4]
    probe = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    print(
        json.dumps(asyncio.run(run(url, os.environ["MCP_TOKEN"], company, int(item), probe))),
        flush=True,
    )
