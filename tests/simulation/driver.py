"""The real `Agent`, driven step by step: its own event loop, its store on disk in a home of its
own, the simulation's clock, and the person's sign-ins.

A kill is a dropped Agent: its store is closed first, so whatever it was doing (a request out,
an answer read but not recorded, settles not committed) never reaches the disk, as after
kill -9; then its tasks are stopped and its connections closed, as the kernel would. A restart is `Agent.open` on the same home, in
a new loop; an attempt the dead one left unfinished is found once its lease lapses, which the
simulation's clock decides.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import CompanyRecord
from poppy_tui.agent.store.sign_ins import delete_sign_in, save_sign_in
from poppy_tui.protocol.retry import BackoffPolicy

from .company import LONGEST_HOLD_SECONDS, SendHold

# Every wait before a resend is longer than a step of the event loop and goes to the store
# (inline_retry_seconds=0): the dispatcher never waits inside a pass, the clock decides.
SIM_BACKOFF = BackoffPolicy(
    base_seconds=20.0, factor=2.0, cap_seconds=80.0, max_retry_after_seconds=300.0, jitter_low=1.0
)
SIM_LEASE_SECONDS = 30.0
POLL_SECONDS = 0.005
READS_SECONDS = 20.0  # bounded by each read's own deadline  # while a held request reaches the Company (a condition, polled)


class Vault:
    """The person's sign-in at the Company: the access token requests carry (the agent's
    access_token_source, as the tests of sign-in use it) and the store's sign_ins row, which
    names the account (a known sign-in) or not (unknown, as Device Sign-In leaves it)."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.user: str | None = None
        self.named: bool = False

    async def __call__(self, company: CompanyRecord) -> str | None:
        return self.token


class Driver:
    def __init__(self, home: Path, config: Config, company_url: str) -> None:
        self.paths = Paths(config_dir=home / "config", data_dir=home / "data")
        self.config = config
        self.company_url = company_url
        self.vault = Vault()
        self.restarts = 0
        self.loop: asyncio.AbstractEventLoop
        self.agent: Agent
        self._open()
        self.company = self.run(self.agent.add_company(company_url))

    def _open(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.agent = Agent.open(
            self.paths,
            self.config,
            lease_seconds=SIM_LEASE_SECONDS,
            backoff=SIM_BACKOFF,
            reply_wait_seconds=0.0,
            inline_retry_seconds=0.0,
        )
        self.agent.access_token_source = self.vault

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def settle(self) -> None:
        """Let the reads of arriving operations' resources (started on arrival, in the
        background) finish within the step that started them, so a step is the same every run."""
        self.run(self.agent.settle_resource_reads(READS_SECONDS))

    def company_now(self) -> CompanyRecord:
        return self.agent.store.get_company(self.company.id)

    # ---- the person's sign-ins -------------------------------------------------------------------

    def sign_in(self, token: str, user: str, named: bool) -> None:
        """Signed in as `user`; the sign-in names the account only when `named`."""
        self.vault.token, self.vault.user, self.vault.named = token, user, named
        save_sign_in(
            self.agent.store,
            self.company.id,
            self.company_url,
            "mediated" if named else "device",
            ("poppy:read", "orders"),
            user if named else None,
        )

    def sign_out(self) -> None:
        self.vault.token, self.vault.user, self.vault.named = None, None, False
        delete_sign_in(self.agent.store, self.company.id)

    # ---- dispatching, killing, restarting ------------------------------------------------------

    def dispatch(self) -> int:
        return self.run(self.agent.dispatch_once())

    def kill(self) -> None:
        """Drop the Agent where it stands and open a fresh one on the same home."""
        dead_loop, dead_agent = self.loop, self.agent
        # First its store goes, so nothing it still had in hand reaches the disk (as after
        # kill -9: what it committed is there, nothing else); only then are its tasks stopped
        # and its connections closed, which a killed process's kernel would do.
        with _quiet():
            dead_agent.store.close()
            tasks = asyncio.all_tasks(dead_loop)
            for task in tasks:
                task.cancel()
            if tasks:
                dead_loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            dead_loop.run_until_complete(dead_agent.aclose())  # its connections
            dead_loop.close()
        self.restarts += 1
        self._open()

    def kill_mid_send(self, hold: SendHold, world: Any) -> bool:
        """Dispatch until the Company holds an approval request (before or after performing it),
        then kill. Returns whether a send was under way; if none was due, a plain kill."""
        world.hold = hold
        task = self.loop.create_task(self.agent.dispatch_once())

        async def until_held_or_done() -> None:
            while not task.done() and not hold.arrived.is_set():
                await asyncio.sleep(POLL_SECONDS)

        self.run(until_held_or_done())
        held = hold.arrived.is_set()
        if not held:
            world.hold = None
            self.run(task)  # finished: nothing was sent
        self.kill()
        hold.release.set()  # the Company answers a connection nobody reads any more
        if held:
            # What the Company does with it (performing, in the "before" case) is part of this
            # step, not a race with the next one.
            assert hold.done.wait(LONGEST_HOLD_SECONDS), "the Company never answered"
        return held

    def close(self) -> None:
        try:
            self.run(self.agent.aclose())
        finally:
            self.loop.close()


class _quiet:
    """A dead Agent's tasks, stopped, log about the work they could not record: expected."""

    def __enter__(self) -> None:
        logging.disable(logging.WARNING)

    def __exit__(self, *exc: object) -> None:
        logging.disable(logging.NOTSET)


def sim_config(grace: float, window: float) -> Config:
    return dataclasses.replace(
        Config(),
        grace_seconds=grace,
        retry_window_seconds=window,
        request_timeout_seconds=60.0,
        allow_loopback=True,
    )
