"""History at 250x70 (walk K9): one record a line, in columns no wider than what they hold, so the
summary gets what the others leave; a summary too long for its line takes a second one with its
end kept (a move's new time is at its end); the decision never shows a cut revision id (a short
one that fits shows whole). Through the real Agent on temporary paths."""

from __future__ import annotations

from datetime import datetime, UTC

from rich.cells import cell_len
from textual.widgets import DataTable

from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import add_company, add_operation, send_through, wait_for

SIZE = (250, 70)
# The demo's fitting move as the walk saw it: 198 characters, cut at about 60 with "…(+138 chars)".
FITTING = (
    "Move your jacket fitting (bkg_2Fm8) at Manzanita Outfitters from Mon, Dec 7 at 2:00 PM "
    "(Pacific time) to Thu, Dec 10 at 11:00 AM (Pacific time), for a $10.00 rescheduling fee."
)
EXCHANGE = "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket."
LONG_REVISION = "1796609170-wQ3kZ8mN1pLx"  # the demo's form: seconds, a dash, 12 characters


def records(store) -> dict[str, int]:
    """A waiting fitting move; an exchange performed under a long revision id; one under "r2"."""
    now = datetime.now(UTC)
    manzanita = add_company(store, "Manzanita Outfitters", 8401)
    rows = {
        "waiting": add_operation(store, manzanita, "bkg_2Fm8", FITTING),
        "long": add_operation(store, manzanita, "exc_5Rt2", EXCHANGE, revision=LONG_REVISION),
        "short": add_operation(store, manzanita, "exc_9Zz", "Exchange the socks.", revision="r2"),
    }
    for key in ("long", "short"):
        send_through(store, rows[key], now, Status.PERFORMED, "performed", {"ok": True})
    return rows


def row_cells(table: DataTable, row: int) -> dict[str, str]:
    labels = [str(column.label) for column in table.columns.values()]
    return dict(zip(labels, (str(c) for c in table.get_row(str(row))), strict=True))


async def test_at_250_columns_the_summary_gets_the_room_and_decisions_no_cut_revision(store, agent):
    rows = records(store)
    app = PoppyApp(agent, initial_screen="history")
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one("#history-table", DataTable)
        await wait_for(
            pilot,
            lambda: app.painted and table.row_count == 3,
            describe=lambda: f"{table.row_count} rows",
        )
        widths = {str(c.label): c.width for c in table.columns.values()}
        cells = {key: row_cells(table, row) for key, row in rows.items()}
        heights = {key: table.rows[str(row)].height for key, row in rows.items()}

    # Nothing scrolls sideways, and every column the walk saw is there.
    assert sum(widths.values()) + 2 * len(widths) <= SIZE[0] - 2
    assert {"Decision", "Summary", "Decided", "Outcome"} <= widths.keys()
    # The whole move, its new time and fee included, over two lines at most.
    fitting = cells["waiting"]["Summary"]
    assert " ".join(fitting.split()) == FITTING, fitting
    assert heights["waiting"] == 2 and heights["short"] == 1
    # No column but the summary keeps room it doesn't use (Outcome held 40 cells for "performed").
    for label, width in widths.items():
        if label != "Summary":
            widest = max(cell_len(line) for c in cells.values() for line in c[label].split("\n"))
            assert width == max(cell_len(label), widest), (label, width, widest)
    # A revision id that doesn't fit whole isn't cut: the decision reads "approved".
    assert cells["long"]["Decision"] == "approved"
    assert not any(LONG_REVISION[:6] in text for c in cells.values() for text in c.values())
    assert cells["short"]["Decision"] == "approved r2"
    assert "…" not in "".join(c["Decision"] for c in cells.values())
