"""`poppy-tui mcp`: run the MCP server on stdin/stdout for an MCP client (docs/mcp.md).

stdout carries the protocol, so nothing else may print there; poppy-tui's own notes go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from poppy_tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from poppy_tui.cli.commands import Context


def cmd_mcp(ctx: "Context", args: argparse.Namespace) -> int:
    from poppy_tui.cli.commands import open_agent
    from poppy_tui.mcp_server.server import serve_stdio

    agent = open_agent(ctx)

    async def session() -> None:
        try:
            await serve_stdio(agent)
        finally:
            await agent.aclose()

    asyncio.run(session())
    return Exit.OK
