"""Sixteen agents, each in a process of its own, reach one person's queue through `poppy-tui mcp
--http` at once, with the CLI and `poppy-tui send --watch` on the same store, while the person
approves in the TUI (Pilot): every operation recorded once, performed once, and every waiting call
gets the outcome of its own operation. The Company (tests/companies/bulk_company.py) is written
from the spec alone: one operation per item."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from tests.cli.cli_support import subprocess_env
from tests.mcp_server.conftest import approve_in_tui, person_agent
from tests.mcp_server.http_support import running_gate, token_of
from tests.ui.ui_sample import wait_for

pytestmark = pytest.mark.slow

AGENTS = 16
AGENT_SCRIPT = Path(__file__).with_name("http_agent_process.py")
CLI_ITEM = 99


async def test_sixteen_agents_in_separate_processes_share_one_queue_with_the_tui_and_cli(
    home, bench, tmp_path
):
    env = subprocess_env(home)
    with running_gate(home, tmp_path) as gate:
        agents = [
            subprocess.Popen(
                [sys.executable, str(AGENT_SCRIPT), gate.url, "Bench Goods", str(item)],
                env={**env, "MCP_TOKEN": token_of(home)},
                cwd=str(tmp_path),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for item in range(1, AGENTS + 1)
        ]
        watcher = subprocess.Popen(
            [sys.executable, "-m", "poppy_tui", "send", "--watch"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # A script's request through the CLI joins the same queue.
            cli = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "poppy_tui",
                    "call",
                    "Bench Goods",
                    "POST",
                    f"/items/{CLI_ITEM}/cancel",
                    "--body",
                    "{}",
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert cli.returncode == 3, cli.stderr
            agent = person_agent(home)
            try:
                app = PoppyApp(agent)
                async with app.run_test(size=(120, 36)) as pilot:

                    def pending():
                        rows = agent.store.list_operations(
                            [Status.PENDING], limit=100, newest_first=False
                        )
                        return rows if len(rows) == AGENTS + 1 else None

                    rows = await wait_for(
                        pilot, pending, 90, describe=lambda: "all 17 operations waiting"
                    )
                    # The person decides last-come first, so no call can be matched up by order.
                    for record in sorted(rows, key=lambda r: r.operation_id, reverse=True):
                        await approve_in_tui(app, pilot, record.id)

                    def finished():
                        return all(p.poll() is not None for p in agents)

                    await wait_for(
                        pilot, finished, 90, describe=lambda: "every agent's call returned"
                    )
                    everything = agent.store.list_operations(list(Status), limit=100)
                    await wait_for(
                        pilot,
                        lambda: all(
                            agent.store.get_operation(r.id).status == Status.PERFORMED
                            for r in everything
                        ),
                        60,
                        describe=lambda: "the CLI's operation performed",
                    )
                    everything = agent.store.list_operations(list(Status), limit=100)
            finally:
                await agent.aclose()
        finally:
            watcher.terminate()
            watcher.wait(30)
            for process in agents:
                if process.poll() is None:
                    process.kill()
        said = [process.communicate(timeout=30) for process in agents]

    results = []
    for process, (out, err) in zip(agents, said, strict=True):
        assert process.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    # Every call got the outcome of its own operation, and heard it was waiting before that.
    for answer in results:
        item = answer["item"]
        data = answer["result"]
        assert answer["is_error"] is False and data["result"] == "performed", data
        assert data["operation"]["operation_id"] == f"cxl_{item}"
        assert data["response"] == {"item": item, "status": "cancelled"}
        assert any("waiting for the person to decide" in message for message in answer["progress"])
    assert sorted(r["item"] for r in results) == list(range(1, AGENTS + 1))
    # Recorded once each (16 agents + the CLI), none lost, each performed exactly once at the Company.
    assert sorted(r.operation_id for r in everything) == sorted(
        [f"cxl_{i}" for i in range(1, AGENTS + 1)] + [f"cxl_{CLI_ITEM}"]
    )
    assert {r.status for r in everything} == {Status.PERFORMED}
    assert bench.state.perform_count == {f"cxl_{i}": 1 for i in [*range(1, AGENTS + 1), CLI_ITEM]}
