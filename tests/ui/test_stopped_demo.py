"""A demo's home opened again after the demo ended (walk C8): its Company has stopped, so an
approval left there is never shown as SENDING to it. The inbox says at its top that the demo
Company has stopped and nothing can be sent to it, the row says "not sent", the review says it
will not be sent, and no sender runs. Through the real Agent, at 80x24 and at the smallest size."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from poppy_tui.agent.demo_marker import DemoRun
from poppy_tui.agent.store.connection import stamp
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.sizes import SMALLEST
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    review_shown,
    started,
    wait_for,
)


@pytest.mark.parametrize("size", [(80, 24), SMALLEST])
async def test_a_stopped_demos_approval_is_said_not_sent(make_agent, store, size):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    store.approve(row, store.get_operation(row).current.id, grace_seconds=0)
    stopped = DemoRun(company.base_url, 1, stamp(), stamp())
    agent = make_agent()
    app = PoppyApp(agent, stopped_demo=stopped)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        notice = app.screen.query_one("#inbox-notice", Static)
        await wait_for(pilot, lambda: notice.display)
        said = " ".join(str(notice.render()).split())
        assert "ran in a demo that ended" in said and "nothing here can be sent" in said
        table = app.screen.query_one("#progress-table", OperationTable)
        await wait_for(pilot, lambda: str(row) in table.rows)
        assert "not sent: demo stopped" in " ".join(str(c) for c in table.get_row(str(row)))
        assert not [w for w in app.workers if w.group == "dispatcher"]  # nothing sends
        app.open_review(row)
        review = await review_shown(pilot)
        banner = str(review.query_one("#outcome").render())
        assert banner.startswith("NOT SENT — the demo Company has stopped")
        assert "SENDING" not in banner and "APPROVED" not in banner
    assert store.attempts(row) == []
