"""`poppy-tui mcp`: run the MCP server on stdin/stdout for an MCP client (docs/mcp.md).

stdout carries the protocol, so nothing else may print there; poppy-tui's own notes go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from poppy_tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from poppy_tui.cli.context import Context


def cmd_mcp(ctx: "Context", args: argparse.Namespace) -> int:
    import sys

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.cli.output import note
    from poppy_tui.mcp_server.server import serve_stdio

    if sys.stdin.isatty():
        note("poppy-tui mcp speaks MCP on stdin/stdout: add it to an MCP client (see docs/mcp.md); Ctrl-C stops it")
    agent = open_agent(ctx)

    async def session() -> None:
        try:
            if ctx.config.companies:
                await discover_listed(agent)  # as the TUI does on start; notes go to stderr
            await serve_stdio(agent)
        finally:
            await agent.aclose()

    asyncio.run(session())
    return Exit.OK
