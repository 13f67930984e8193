"""Dispatch for the approval-gate commands (`mcp`, `send`): each imports its module only when run."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
from collections.abc import Callable

if TYPE_CHECKING:
    from poppy_tui.cli.context import Context


def _mcp(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.mcp import cmd_mcp

    return cmd_mcp(ctx, args)


def _send(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.send import cmd_send

    return cmd_send(ctx, args)


HANDLERS: dict[str, Callable[[Context, argparse.Namespace], int]] = {"mcp": _mcp, "send": _send}
