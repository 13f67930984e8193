"""History at 80x24: each record's second column reads as a decision and an interface (approved,
declined, withdrawn; via API, MCP, Talk), not as a cut revision id ("approved 1796411283…").
Through the real Agent on temporary paths."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import build_sample, ui_config, wait_for


async def test_at_80_columns_the_decision_column_reads_as_a_decision(tmp_path):
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        rows = build_sample(agent.store)
        revision = agent.store.get_operation(rows["performed"]).current.revision
        app = PoppyApp(agent, initial_screen="history")
        async with app.run_test(size=(80, 24)) as pilot:
            table = app.screen.query_one("#history-table")
            await wait_for(pilot, lambda: app.painted and table.row_count > 0)
            who = {int(key.value): str(table.get_row(key)[1]).splitlines() for key in table.rows}
        # The interface and who asked (the sample's requests are the CLI's).
        assert who[rows["performed"]][1:] == ["approved", "via API, CLI"]
        assert who[rows["declined"]][1:] == ["declined", "via MCP, CLI"]
        assert not any(revision[:8] in line for lines in who.values() for line in lines)
    finally:
        agent.store.close()
