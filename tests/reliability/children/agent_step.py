"""A real Agent in a child process, stopped (by the parent's SIGKILL) at one step of the
approval state machine. It prints one line per step reached; the parent waits for the line
it wants, then kills this process with SIGKILL.

usage: agent_step.py HOME BASE_URL STEP [LEASE_SECONDS]
The request goes through the interface POPPY_TEST_INTERFACE names: api (default), mcp or
conversation; each asks for the same jacket exchange.

The engine offers no pause hook, so the steps that happen inside a send are reached by
overriding Agent.send_approval (the one function the dispatcher calls to put a request on
the wire), in this child only:

  approved     approve (grace 0), print "approved ROW", then idle without dispatching
  grace        approve with the configured grace, print "approved ROW", run the dispatcher
  declined     decline, print "declined ROW", run the dispatcher (printing "pass N" after each pass)
  before-send  the attempt row is committed; print "sending ROW" and hang before the request leaves
  in-flight    print "sending ROW", then really send (the parent kills while the Company performs)
  answered     really send; print "answered ROW OUTCOME" and hang before the answer is recorded
  run          the whole flow; print "outcome ROW STATUS" at the end (the parent kills at random)
  probe        the whole flow to outcome_unknown, then find out (outcome_probe.py): print
               "probing ROW" and hang once the probe's resend of the same approval is committed
"""

from __future__ import annotations

import asyncio
import os
import sys

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.transports import outcome_name
from tests.reliability.support import EXCHANGE_BODY, EXCHANGE_PATH


def say(*words: object) -> None:
    print(*words, flush=True)


async def until_killed() -> None:
    """Hang here: the parent's SIGKILL is what ends this process."""
    await asyncio.Event().wait()


class SteppedAgent(Agent):
    step = "run"

    async def send_approval(self, op, approval):  # type: ignore[override]
        if (
            self.step == "probe"
            and self.store.get_operation(op.id).status.value == "outcome_unknown"
        ):
            say("probing", op.id, op.attempt_count)
            await until_killed()
        if self.step == "before-send":
            say("sending", op.id, op.attempt_count)
            await until_killed()
        if self.step == "in-flight":
            say("sending", op.id, op.attempt_count)
        exchange = await super().send_approval(op, approval)
        if self.step == "answered":
            say("answered", op.id, outcome_name(exchange.outcome))
            await until_killed()
        return exchange


async def main() -> None:
    home, base_url, step = sys.argv[1], sys.argv[2], sys.argv[3]
    lease = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    paths = resolve_paths(home)
    SteppedAgent.step = step
    agent = SteppedAgent.open(paths, load_config(paths), lease_seconds=lease)
    company = await agent.add_company(base_url)
    say("company", company.id)
    interface = os.environ.get("POPPY_TEST_INTERFACE", "api")
    if interface == "conversation":
        said = await agent.say(
            company, "I'd like to exchange my Stormline jacket for the insulated one"
        )
        if not said.operation_rows:
            say("unexpected", "no operation in the reply", said.detail)
            return
        row = said.operation_rows[0]
    else:
        if interface == "mcp":
            result = await agent.call_tool(
                company, "exchange_item", {"order_id": "ord_7Hk2", **EXCHANGE_BODY}
            )
        else:
            result = await agent.call_api(company, "POST", EXCHANGE_PATH, EXCHANGE_BODY)
        if result.outcome != "operation":
            say("unexpected", result.outcome, result.detail)
            return
        row = result.operation_row
    op = agent.store.get_operation(row)
    say("operation", row, op.operation_id, op.current.revision)
    if step == "declined":
        agent.decline(row, op.current.id)
        say("declined", row)
        one_pass, passes = agent.dispatcher.dispatch_once, 0

        async def counted_pass() -> int:
            nonlocal passes
            sent = await one_pass()
            passes += 1
            say("pass", passes)
            return sent

        agent.dispatcher.dispatch_once = counted_pass  # type: ignore[method-assign]
        await agent.run_dispatcher(asyncio.Event())
        return
    agent.approve(row, op.current.id)
    say("approved", row)
    if step == "approved":
        await until_killed()
        return
    if step == "grace":
        await agent.run_dispatcher(asyncio.Event())
        return
    final = await agent.wait_for_outcome(row)
    say("outcome", row, final.status.value)
    if step == "probe":
        await agent.run_dispatcher(asyncio.Event())  # finds out; hangs in the probe's resend
    await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main())
