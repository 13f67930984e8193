"""One agent in a process of its own, for tests/mcp_server/test_mcp_http_agents.py:

    MCP_TOKEN=... python tests/mcp_server/http_agent_process.py URL COMPANY ITEM

asks poppy-tui's HTTP gate (the MCP SDK's streamable-HTTP client) to cancel ITEM at COMPANY, waits
for the person's decision, and prints one JSON line: the tool result and the progress messages.
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


async def run(url: str, token: str, company: str, item: int) -> dict:
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
    return {
        "item": item,
        "is_error": result.is_error,
        "result": result.structured_content,
        "progress": progress,
    }


if __name__ == "__main__":
    url, company, item = sys.argv[1:4]
    print(
        json.dumps(asyncio.run(run(url, os.environ["MCP_TOKEN"], company, int(item)))), flush=True
    )
