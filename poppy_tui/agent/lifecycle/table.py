"""The transition table of docs/state-machine.md, written from `machine.RULES`."""

from __future__ import annotations

from poppy_tui.agent.lifecycle.machine import RULES, Rule
from poppy_tui.agent.lifecycle.states import Status

BEGIN = "<!-- lifecycle table: generated from poppy_tui/agent/lifecycle (render_table) -->"
END = "<!-- end of the lifecycle table -->"

_ORDER = list(Status)


def _states(rule: Rule) -> str:
    if len(rule.states) == len(Status):
        return "any"
    return ", ".join(f"`{s.value}`" for s in sorted(rule.states, key=_ORDER.index))


def render_table() -> str:
    """Every rule, in the order `step` tries them: the first that matches decides."""
    lines = [
        BEGIN,
        "| # | rule | in | on | when | to | does |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, rule in enumerate(RULES, 1):
        to = f"`{rule.to.value}`" if rule.to is not None else "(stays)"
        when = rule.condition.replace("|", "/") or "otherwise"
        lines.append(
            f"| {number} | {rule.name} | {_states(rule)} | `{rule.event.__name__}` | {when} | {to} | {rule.do.value} |"
        )
    lines.append(END)
    return "\n".join(lines)
