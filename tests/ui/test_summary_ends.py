"""At 80 columns a move's summary keeps where it moves to: "… from A to B …" too long for its
cell shows its beginning and then "… to B" (the new time was cut off: "from Mon, Dec 7 at
10:0…(+102 chars)"); other summaries are cut at the end as before, where an exchange's new item
shows. Through the real Agent on temporary paths, with the demo's kind of summary."""

from __future__ import annotations

from datetime import timedelta

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.safe import wrapped_first_line
from tests.ui.ui_sample import FIXED_NOW, add_company, add_operation, ui_config, wait_for

MOVE = (
    "Move your jacket fitting (bkg_2Fm8) at Manzanita Outfitters Portland from Mon, Dec 7 at 10:00 AM "
    "to Tue, Dec 8 at 2:00 PM (Pacific time), for a $10.00 change fee charged to the Visa ending 4242."
)
EXCHANGE = (
    "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), "
    "for $70.00 more, charged to the card used for the order."
)


def test_a_long_move_keeps_its_destination():
    shown = wrapped_first_line(MOVE, 30, 4)
    lines = shown.splitlines()
    assert len(lines) == 4 and all(len(line) <= 30 for line in lines)
    assert lines[0].startswith("Move your jacket fitting")
    assert "… to Tue, Dec 8 at 2:00 PM" in shown.replace("\n", " ")
    assert shown.endswith("…")  # the rest is cut, visibly


def test_a_short_move_and_other_summaries_are_unchanged():
    assert wrapped_first_line("Move it from here to there.", 30, 4) == "Move it from here to there."
    exchange = wrapped_first_line(EXCHANGE, 30, 4).replace("\n", " ")
    assert (
        "Stormline Insulated Jacket (M)" in exchange and "…" in exchange and " … " not in exchange
    )


def test_hostile_text_in_either_part_is_shown_not_run():
    hostile = MOVE.replace("Manzanita", "\x1b[2JManzanita").replace(
        "Tue, Dec 8", "Tue,\x1b]52;c;eA==\x07 Dec 8"
    )
    shown = wrapped_first_line(hostile, 30, 4)
    assert "\x1b" not in shown and "\x07" not in shown


async def test_the_inbox_at_80_columns_shows_the_new_time(tmp_path):
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        company = add_company(agent.store, "Manzanita Outfitters", 8401, talk=True)
        add_operation(
            agent.store,
            company,
            "bkg_op",
            MOVE,
            terms={"booking_id": "bkg_2Fm8"},
            expires_at=FIXED_NOW + timedelta(days=3650),
        )
        app = PoppyApp(agent)
        async with app.run_test(size=(80, 24)) as pilot:
            table = app.screen.query_one("#pending-table")
            await wait_for(pilot, lambda: app.painted and table.row_count == 1)
            summary = str(table.get_row_at(0)[-1]).replace("\n", " ")
        assert "to Tue, Dec 8 at 2:00 PM" in summary, summary
    finally:
        agent.store.close()
