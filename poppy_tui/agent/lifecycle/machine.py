"""The transition function: `step(facts, event, now, policy) -> Step`.

`RULES` (rules.py) is the whole lifecycle, in order: the first rule whose state, event and condition match
decides. Each rule names the state it leads to and what the carrier does (`Do`). Nothing here
reads a clock, a store or the network: `now` and the facts are given, so the same inputs always
give the same Step (the simulation and the tests rely on it). docs/state-machine.md's transition
table is `render_table()` (tests/agent/test_lifecycle.py fails when the two differ).
"""

from __future__ import annotations

from datetime import datetime

from poppy_tui.agent.lifecycle.events import Event
from poppy_tui.agent.lifecycle.facts import Facts, Policy
from poppy_tui.agent.lifecycle.rules import RULES
from poppy_tui.agent.lifecycle.steps import Do, NoRule, Rule, Step

__all__ = ["RULES", "Do", "NoRule", "Rule", "Step", "step"]


def step(facts: Facts, event: Event, now: datetime, policy: Policy | None = None) -> Step:
    """What happens next to an operation with these facts when `event` happens at `now`."""
    policy = policy or Policy()
    for rule in RULES:
        if facts.status not in rule.states or not isinstance(event, rule.event):
            continue
        if rule.when is not None and not rule.when(facts, event, now, policy):
            continue
        fields = rule.says(facts, event, now, policy) if rule.says is not None else {}
        return Step(rule.name, rule.to or facts.status, rule.do, **fields)
    raise NoRule(f"no rule for {type(event).__name__} in {facts.status.value}")
