"""The review header names the interface the approval will go through: that of the request that
returned the current revision, not the operation's first (Ops §6: the approval goes through the
interface that returned it; conformance row A25); and an operation_id reused for a different
request, which Ops §3 forbids, shows as a danger there."""

from __future__ import annotations

from textual.widgets import Static

from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.format import interface_label
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import add_company, review_shown


def revision(
    store, company, request, revision_name, summary="Cancel booking bk_1. No fee is charged."
):
    request_id = store.add_request(company.id, request, "test")
    raw = {
        "operation_id": "cxl_bk_1",
        "revision": revision_name,
        "summary": summary,
        "terms": {"booking_id": "bk_1"},
        "expires_at": "2099-01-01T00:00:00Z",
    }
    return store.record_operation(
        company.id, request_id, company.session_id, parse_operation(raw)
    ).operation_row


async def open_review(app, pilot, row) -> ReviewScreen:
    app.open_review(row)
    await review_shown(pilot)
    assert isinstance(app.screen, ReviewScreen)
    return app.screen


async def test_header_names_the_interface_of_the_current_revisions_request(store, make_agent):
    company = add_company(store, "Strict Travel", 8410, talk=True)
    row = revision(
        store, company, ApiRequest("POST", f"{company.base_url}/bookings/bk_1/cancel", {}), "api-r1"
    )
    revision(
        store,
        company,
        ConversationRequest(f"{company.base_url}/c", "cnv_1", "msg_1", "cancel bk_1"),
        "conv-r2",
    )
    app = PoppyApp(make_agent())
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(app, pilot, row)
        line = str(screen.query_one("#operation-line", Static).render())
        assert f"via {interface_label('conversation')}" in line


async def test_an_operation_id_reused_for_another_booking_is_a_danger_in_the_review(
    store, make_agent
):
    company = add_company(store, "Strict Travel", 8410)
    row = revision(
        store,
        company,
        ApiRequest("POST", f"{company.base_url}/bookings/bk_1/rebook", {"date": "d1"}),
        "r1",
    )
    revision(
        store,
        company,
        ApiRequest("POST", f"{company.base_url}/bookings/bk_2/rebook", {"date": "d2"}),
        "r2",
    )
    app = PoppyApp(make_agent())
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(app, pilot, row)
        codes = [f.code for f in screen.checked.findings]
        assert codes[0] == "operation_reused"
        assert "/bookings/bk_1/rebook" in screen.checked.findings[0].message
