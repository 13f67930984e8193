"""The review says where an approval stands in the lifecycle's words (Agent.explain), the words
`poppy-tui show` prints, so the TUI and `show` can't disagree: a send waiting to retry says when
and why, and an approval that can't go (its terms expired meanwhile) says it is not sent instead
of "sending now". Through the real Agent at 80x24 and at the smallest size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.sizes import SMALLEST
from poppy_tui.agent.review_words import where_line
from poppy_tui.ui.widgets.outcome_view import OutcomeBanner
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    review_shown,
    wait_for,
)


def _banner_text(review) -> str:
    return str(review.query_one("#outcome", OutcomeBanner).render())


@pytest.mark.parametrize("size", [SMALLEST, (80, 24)])
async def test_a_send_waiting_to_retry_says_what_show_says(make_agent, store, size):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    now = datetime.now(UTC)
    store.approve(row, store.get_operation(row).current.id, grace_seconds=0, now=now)
    assert store.claim_due("test-dispatcher", 30, now=now + timedelta(seconds=1), operation_row=row)
    attempt = store.start_attempt(row, "test-dispatcher")
    store.finish_attempt(attempt.id, "retry_later", 503, None, "the Company is busy")
    store.schedule_retry(row, "test-dispatcher", 3600, "the Company asked to wait (HTTP 503)")
    agent = make_agent(grace_seconds=60)
    agent.run_dispatcher = None  # the retry is an hour away; nothing else may claim it
    said = agent.explain(row)
    assert said.on_its_way and said.at is not None
    app = PoppyApp(agent)
    async with app.run_test(size=size) as pilot:
        app.open_review(row)
        review = await review_shown(pilot)
        await wait_for(
            pilot,
            lambda: "sent again at" in _banner_text(review),
            describe=lambda: _banner_text(review),
        )
        text = " ".join(_banner_text(review).split())
        assert " ".join(where_line(said).split()) in text
        assert "the Company asked to wait (HTTP 503)" in text
        assert store.get_operation(row).status == Status.SENDING


async def test_an_approval_that_cannot_go_says_not_sent_not_sending_now(make_agent, store):
    company = add_company(store, "Manzanita Outfitters", 8401)
    now = datetime.now(UTC)
    row = add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=now + timedelta(seconds=2),
    )
    store.approve(row, store.get_operation(row).current.id, grace_seconds=0, now=now)
    agent = make_agent(grace_seconds=60)
    agent.run_dispatcher = None  # as if no sender ran before the terms ended
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_review(row)
        review = await review_shown(pilot)
        await wait_for(
            pilot, lambda: "APPROVED" in _banner_text(review), describe=lambda: _banner_text(review)
        )
        # The terms end while it sits approved: the banner follows the store's next change.
        await wait_for(
            pilot,
            lambda: not agent.explain(row).on_its_way,
            describe=lambda: agent.explain(row).sentence(),
        )
        review.refresh_data()
        await wait_for(
            pilot,
            lambda: (
                "not sent" in _banner_text(review) and "sending now" not in _banner_text(review)
            ),
            describe=lambda: _banner_text(review),
        )
