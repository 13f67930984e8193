"""`poppy-tui send [--watch]`: deliver approvals without the TUI (docs/cli.md).

Exits once nothing approved is left; the code is that of the first send that didn't end in
"performed" (0 when all did). With --watch it runs until SIGTERM or Ctrl-C, for a service.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import TYPE_CHECKING

from poppy_tui.cli.exit_codes import STATUS_EXIT, Exit, first_failure
from poppy_tui.cli.output import (
    STATUS_TEXT,
    emit,
    note,
    record_json,
    safe_line,
    to_json,
    waiting_line,
)

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRecord
    from poppy_tui.cli.context import Context


def _said(record: OperationRecord) -> None:
    status = record.status.value
    detail = record.outcome_detail
    extra = f" ({safe_line(detail, 400)})" if detail and detail != status else ""
    note(
        f"operation {record.id} ({safe_line(record.company.name, 60)}, {safe_line(record.operation_id, 60)}): "
        f"{STATUS_TEXT.get(status, status)}{extra}"
    )


def cmd_send(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.headless import in_flight, send_approved, waiting_for_sign_in
    from poppy_tui.cli.context import open_agent
    from poppy_tui.cli.event_loop import ctrl_c as watched_ctrl_c
    from poppy_tui.cli.event_loop import run

    agent = open_agent(ctx)

    async def session() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            # A service manager stops us with SIGTERM: finish the send under way, then exit.
            loop.add_signal_handler(signal.SIGTERM, stop.set)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # Windows, or not the main thread: Ctrl-C still works
        ctrl_c = watched_ctrl_c()
        if args.watch and ctrl_c is not None:
            # The first Ctrl-C stops a watch as SIGTERM does (after the send under way, exit 0);
            # a second one interrupts at once.
            ctrl_c.first = stop.set
        try:
            waiting = in_flight(agent.store)
            if waiting:
                note(
                    f"sending {len(waiting)} approved operation(s): {', '.join(map(str, waiting))}"
                )
            elif not args.watch:
                note("nothing approved is waiting to be sent")
            if args.watch:
                note(
                    "watching for approvals to send; stop with Ctrl-C or SIGTERM (anything queued stays queued)"
                )
            settled = await send_approved(agent, watch=args.watch, stop=stop, on_settled=_said)
            kept = (
                []
                if args.watch
                else [agent.store.get_operation(row) for row in waiting_for_sign_in(agent.store)]
            )
            for record in kept:
                # Not sent, not failed: kept until the person signs in (then the TUI, `send` or
                # `send --watch` sends it), as long as its terms are valid.
                from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX

                why = waiting_line(agent.store, record)
                what = (
                    "Open it in poppy-tui (its review) to say so, or sign in as its account"
                    if why.startswith(UNCONFIRMED_WAIT_PREFIX)
                    else f"Run: poppy-tui signin {safe_line(record.company.name, 80)!r}, then poppy-tui send"
                )
                note(
                    f"operation {record.id} ({safe_line(record.company.name, 60)}, {safe_line(record.operation_id, 60)}): "
                    f"{safe_line(why, 800)}; kept until its terms expire. {what}"
                )
            if args.json:
                # What this run settled, as `show --json` records (read again: the latest state).
                emit(
                    to_json(
                        {
                            "operations": [
                                record_json(agent.store, agent.store.get_operation(r.id))
                                for r in settled
                            ]
                        }
                    )
                )
        finally:
            await agent.aclose()
        if args.watch:
            return Exit.OK
        codes: list[int] = [STATUS_EXIT[r.status.value] for r in settled]
        codes += [Exit.SIGN_IN_REQUIRED] * len(
            kept
        )  # kept for after sign-in: the person has to act
        return first_failure(codes)

    return int(run(session()))
