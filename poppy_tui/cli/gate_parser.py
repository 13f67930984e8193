"""The parser entries for the approval-gate commands (`mcp`, `send`). argparse only: `--help`
stays free of the MCP SDK and the agent."""

from __future__ import annotations

import argparse
from typing import Callable

Command = Callable[..., argparse.ArgumentParser]


def add_gate_commands(command: Command) -> None:
    command(
        "mcp",
        "run poppy-tui as an MCP server on stdin/stdout, for AI agents",
        "Run an MCP server on stdin/stdout (add it to an MCP client's configuration; see docs/mcp.md). Its "
        "tools list Companies, make requests through their API, MCP tools and conversations, and wait for the "
        "person's decision on operations. No tool approves or declines: only the person, in the TUI.",
    )
    send = command(
        "send",
        "send approved operations without the TUI, then exit (or keep watching)",
        "Run the dispatcher without the TUI: send every approved operation whose grace period has ended, "
        "retrying as usual, and exit when nothing approved is left. --watch keeps it running (for a service; "
        "see docs/cli.md for a systemd user unit and a launchd agent). It never approves anything.",
    )
    send.add_argument(
        "--watch", action="store_true", help="keep running and send approvals as they are made (until stopped)"
    )
