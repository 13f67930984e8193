"""Who asked, on every screen that shows an operation, at 80x24: the inbox row, the review's header
(an agent that never asked before marked NEW), the confirmation, history and its record, the toast;
and the Agents screen (m): each agent, what waits, revoking after a confirmation. Names and client
claims are text that doesn't come from poppy-tui: neutralised everywhere. Pilot, a real Store, the
real token files."""

from __future__ import annotations

from textual.widgets import DataTable

from poppy_tui.agent.gate.registry import create, read_entries, registry_path
from poppy_tui.agent.store.requests import Requester
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.agents import AgentsScreen, RevokeAgentScreen
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    record_notifications,
    screen_up,
    started,
    wait_for,
    without_reads,
)

SMALL = (80, 24)
HOSTILE_CLIENT = Requester("laptop", "Claude\x1b[2J Code\u202e", "2.1\x07")


def screen_text(app) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("Static"))


def rows_text(table: DataTable) -> str:
    return "\n".join(
        " | ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)
    )


def two_askers(store) -> tuple[int, int]:
    """The jacket, asked for by the agent 'laptop' (its first request, through a client whose
    claim is hostile) and then by the CLI; a cancellation asked for by a stored name no token
    could have."""
    company = add_company(store, "Manzanita Outfitters", 8401)
    jacket = add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        origin="mcp",
        requester=HOSTILE_CLIENT,
    )
    add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())  # the CLI
    odd = add_operation(
        store,
        company,
        "cnl_1",
        "Cancel the subscription.",
        origin="mcp",
        requester=Requester("odd\x1b[31mname\u202e"),
    )
    return jacket, odd


async def test_the_inbox_review_and_confirmation_name_who_asked(store, make_agent):
    jacket, odd = two_askers(store)
    app = PoppyApp(without_reads(make_agent(arm_delay_seconds=0)))
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        table = app.screen.query_one("#pending-table", OperationTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        shown = rows_text(table)
        # The jacket's terms came with the agent's request (the CLI's got the same revision); the
        # other's with a name no token could have, neutralised.
        assert "\nlaptop |" in shown and "\nodd\\x1b… |" in shown  # cut visibly at 8 cells
        assert "\x1b" not in shown and "\u202e" not in shown
        app.open_review(jacket)
        await wait_for(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.can_approve()
        )
        header = screen_text(app)
        assert (
            "asked by NEW agent «laptop» (its client says «Claude\\x1b[2J Code⟨U+202E⟩ 2.1\\x07»)"
            "; then the CLI" in header
        )
        assert "\x1b" not in header and "\x07" not in header
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        asked = str(app.screen.query_one("#confirm-asked").render())
        assert asked.startswith("Asked by NEW agent «laptop»") and "then the CLI" in asked
        await pilot.press("escape")


async def test_history_its_record_and_the_toast_name_who_asked(store, make_agent):
    app = PoppyApp(without_reads(make_agent()), initial_screen="history", clock=lambda: FIXED_NOW)
    said = record_notifications(app)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await started(pilot)
        jacket, _ = two_askers(store)
        await wait_for(pilot, lambda: len([s for s in said if "asks for your approval" in s]) == 2)
        toasts = [s for s in said if "asks for your approval" in s]
        assert any(t.endswith(f"(operation {jacket}, asked by agent «laptop»)") for t in toasts)
        assert any(t.endswith("asked by agent «odd\\x1b[31mname⟨U+202E⟩»)") for t in toasts)
        assert not any("\x1b" in t or "\u202e" in t for t in toasts)
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        assert "via API, laptop" in rows_text(table)
        app.open_history_detail(jacket)
        await wait_for(pilot, lambda: "asked by" in screen_text(app))
        assert "asked by NEW agent «laptop»" in screen_text(app)


async def test_the_agents_screen_lists_each_agent_and_revokes_after_a_confirmation(
    store, make_agent
):
    data_dir = store.path.parent
    laptop = create(registry_path(data_dir), "laptop")
    create(registry_path(data_dir), "overseer", see_all=True)
    two_askers(store)
    store.record_gate_use("laptop", HOSTILE_CLIENT.client_json())
    app = PoppyApp(without_reads(make_agent()), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await pilot.press("m")
        await screen_up(pilot, AgentsScreen)
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        rows = rows_text(table).splitlines()
        assert rows[0].startswith("laptop | yes |") and rows[0].split(" | ")[3] == "1"
        assert "«Claude\\x1b[2J" in rows[0] and "\x1b" not in rows_text(table)
        assert rows[1].startswith("overseer | sees all | never | 0")
        assert rows[2].startswith("odd\\x1b[31m") and " | none | " in rows[2]
        # Revoking asks first: n (or Esc) keeps the token.
        await pilot.press("r")
        await screen_up(pilot, RevokeAgentScreen)
        dialog = screen_text(app)
        assert "laptop" in dialog and "Its 1 operation waiting for you stay in the queue." in dialog
        await pilot.press("n")
        await screen_up(pilot, AgentsScreen)
        assert [e.name for e in read_entries(registry_path(data_dir))] == ["laptop", "overseer"]
        # y revokes it: the token is gone from the file (a running gate refuses it at once).
        await pilot.press("r")
        await screen_up(pilot, RevokeAgentScreen)
        await pilot.press("y")
        await wait_for(
            pilot, lambda: [e.name for e in read_entries(registry_path(data_dir))] == ["overseer"]
        )
        await wait_for(pilot, lambda: rows_text(table).startswith("overseer"))
        assert "laptop | none |" in rows_text(table)  # still listed: it asked; no token now
    assert laptop  # made, shown once, and never written to the file
    assert laptop not in registry_path(data_dir).read_text()
