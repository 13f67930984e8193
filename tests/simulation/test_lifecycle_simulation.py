"""The lifecycle simulation (issue 33 item 3; machine.py says what it drives and checks).

In the normal run it tries a bounded number of worlds, the same ones every run (derandomized),
so it fits the suite's time; a failure prints the steps that replay it. To look much harder:
`POPPY_SIM_EXAMPLES=2000 python -m pytest tests/simulation -q` (random worlds, a new set each run;
docs/development.md, "The lifecycle simulation").
"""

from __future__ import annotations

import os

import pytest

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from .machine import COVERAGE, LifecycleMachine

# A killed Agent's MCP session tasks are cancelled before they ran: their coroutines were never
# awaited, which Python warns about when they are collected. That is the kill, not a bug.
pytestmark = pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")

CI_EXAMPLES = 40
CI_STEPS = 30


def simulation_settings() -> settings:
    examples = int(os.environ.get("POPPY_SIM_EXAMPLES") or CI_EXAMPLES)
    steps = int(os.environ.get("POPPY_SIM_STEPS") or CI_STEPS)
    many = "POPPY_SIM_EXAMPLES" in os.environ
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=not many,
        database=None,
        print_blob=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def test_the_lifecycle_keeps_its_invariants(sim_company) -> None:
    LifecycleMachine.company = sim_company
    COVERAGE.clear()
    try:
        run_state_machine_as_test(LifecycleMachine, settings=simulation_settings())
    finally:
        # With -s: what the worlds met, to see that the strategies reach what they should.
        print("\nworlds that met each:", dict(sorted(COVERAGE.items())))
