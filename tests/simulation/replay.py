"""One simulated world, step by step, as a plain test: the machine's own moves with the draws a
failing example printed, and the invariants checked after every step, as the simulation does.

    with replay(sim_company, grace=0.0, window=60.0, script=[Directive("new_revision")]) as sim:
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.time_passes("a second")
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .company import SimCompany
from .machine import LifecycleMachine
from .world import Directive


class _Draws:
    """What `data.draw` returns, in order: the values an example printed."""

    def __init__(self, *values: Any) -> None:
        self._values = list(values)

    def draw(self, strategy: object, label: str | None = None) -> Any:
        assert self._values, f"the replay gave no value for the draw {label!r}"
        return self._values.pop(0)


class Replay:
    def __init__(self, machine: LifecycleMachine) -> None:
        self.machine = machine

    def _move(self, name: str, *draws: Any) -> None:
        self.machine._next_step()
        getattr(self.machine, name)(_Draws(*draws))
        self.machine.invariants_hold()

    @property
    def agent(self):
        return self.machine.agent

    @property
    def world(self):
        return self.machine.world

    @property
    def driver(self):
        return self.machine.driver

    def ask(self, interface: str, verb: str, item: str, qty: int = 1) -> None:
        self._move("ask", interface, verb, item, qty)

    def say_again(self, conversation: int, words: str) -> None:
        """In the `conversation`-th conversation started (1 the first)."""
        self._move("say_again", self.machine.model.conversations[conversation - 1], words)

    def approve(self, row: int) -> None:
        self._move("approve", row)

    def take_back(self, answer: str, row: int) -> None:
        self._move("take_back", answer, row)

    def resolve_unknown(self, row: int) -> None:
        self._move("resolve_unknown", row)

    def confirm_account(self, row: int) -> None:
        """The person's word (the review's `u`) that the sign-in now is operation `row`'s account."""
        self._move("confirm_account", row)

    def sign_in(self, user: str, named: bool) -> None:
        self._move("sign_in_or_out", (user, named))

    def sign_out(self) -> None:
        self._move("sign_in_or_out", None)

    def the_company_will(self, directive: Directive) -> None:
        self._move("the_company_will", directive)

    def time_passes(self, past: str) -> None:
        self._move("time_passes", past)

    def kill_and_restart(self, when: str = "between steps") -> None:
        self._move("kill_and_restart", when)


@contextmanager
def replay(
    company: SimCompany,
    *,
    grace: float = 0.0,
    window: float = 60.0,
    expiry: float = 900.0,
    mint_ids: bool = False,
    reuse_ids: bool = False,
    script: list[Directive] | None = None,
) -> Iterator[Replay]:
    LifecycleMachine.company = company
    machine = LifecycleMachine()
    try:
        machine.a_world(grace, window, expiry, mint_ids, reuse_ids, list(script or []))
        machine.invariants_hold()
        yield Replay(machine)
    finally:
        machine.teardown()
