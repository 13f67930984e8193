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


def _named(record: OperationRecord) -> str:
    return (
        f"operation {record.id} ({safe_line(record.company.name, 60)}, "
        f"{safe_line(record.operation_id, 60)})"
    )


def _waits(record: OperationRecord, wait: object) -> None:
    """Each wait as it begins: which operation, why, until when (agent/send_waits.py)."""
    from poppy_tui.agent.clock import now_utc
    from poppy_tui.agent.send_waits import Wait, wait_line

    assert isinstance(wait, Wait)
    line = wait_line(wait, now_utc())
    shown = safe_line(wait.detail, 200) if wait.detail else ""
    detail = f": {shown}" if shown and wait.key[0] == "retry" and shown not in line else ""
    note(f"{_named(record)}: {line}{detail}")


def cmd_send(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.demo_marker import stopped_demo, stopped_demo_line
    from poppy_tui.safety.error_line import error_line
    from poppy_tui.agent.headless import in_flight, send_approved, waiting_for_sign_in
    from poppy_tui.cli.context import open_agent
    from poppy_tui.cli.event_loop import ctrl_c as watched_ctrl_c
    from poppy_tui.cli.event_loop import run

    agent = open_agent(ctx)
    # A demo's home after the demo ended: its Company is gone, so its approvals can't be sent.
    stopped = stopped_demo(ctx.paths.data_dir)

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
            never = [
                row
                for row in waiting
                if stopped is not None
                and stopped.served(agent.store.get_operation(row).company.base_url)
            ]
            for row in never:
                assert stopped is not None
                record = agent.store.get_operation(row)
                note(
                    f"{_named(record)}: not sent, and it won't be: "
                    + stopped_demo_line(stopped, safe_line(record.company.name, 60))
                )
            waiting = [row for row in waiting if row not in never]
            if waiting:
                note(
                    f"sending {len(waiting)} approved operation(s): {', '.join(map(str, waiting))}"
                )
            elif not args.watch and not never:
                note("nothing approved is waiting to be sent")
            if args.watch:
                note(
                    "watching for approvals to send; stop with Ctrl-C or SIGTERM (anything queued stays queued)"
                )
            settled = (
                await send_approved(
                    agent,
                    watch=args.watch,
                    stop=stop,
                    on_settled=_said,
                    on_wait=_waits,
                    never=frozenset(never),
                )
                if waiting or args.watch
                else []
            )
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
                    f"{error_line(why, 800)}; kept until its terms expire. {what}"
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
        codes += [Exit.ERROR] * len(never)  # its Company can't be reached: it is gone
        return first_failure(codes)

    return int(run(session()))
