"""What holds an approval back, on the page, in the TUI's words (agent/review_words.py): the arming
delay after a review opens, and an earlier approval of the same request whose outcome is unknown
(Ops 7), which lifts once the person says what happened ("I checked…", on the page too). The
strict Company mints a new operation_id for every request and answers approvals with an HTML 500."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.safety.request_reuse import in_doubt_reason
from tests.companies.strict_company import RawAnswer, StrictCompany
from tests.web.web_support import (
    Browserless,
    WebServer,
    make_home,
    person_agent,
    register,
    running_web,
    status_of,
)

CONFIG = (
    'key_storage = "file"\ngrace_seconds = 0\narm_delay_seconds = 30\n'
    "request_timeout_seconds = 5\nretry_window_seconds = 1\n"
)


@pytest.fixture(scope="module")
def doubtful() -> Iterator[StrictCompany]:
    company = StrictCompany()
    company.state.mint_operation_ids = True
    company.state.approval_answers = [
        RawAnswer(500, "text/html", b"<h1>oops</h1>") for _ in range(200)
    ]
    yield company
    company.stop()


@pytest.fixture(scope="module")
def held_home(tmp_path_factory, doubtful):
    home = make_home(tmp_path_factory.mktemp("held") / "home", CONFIG)
    register(home, doubtful.base_url)
    return home


@pytest.fixture(scope="module")
def held_web(held_home, tmp_path_factory) -> Iterator[WebServer]:
    with running_web(held_home, tmp_path_factory.mktemp("held-logs")) as server:
        yield server


def page_text(answer) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", answer.text))


def fields(browser: Browserless, row: int) -> dict[str, str]:
    page = browser.get(f"/op/{row}").text
    return {
        "csrf": re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1),
        "revision_id": re.search(r'name="revision_id" value="(\d+)"', page).group(1),
    }


def test_approve_waits_for_the_arming_delay(held_web, held_home, doubtful):
    async def ask() -> int:
        agent = person_agent(held_home)
        try:
            company = agent.store.list_companies()[0]
            return (await agent.call_api(company, "POST", "/bookings/bk_2/cancel")).operation_row
        finally:
            await agent.aclose()

    row = asyncio.run(ask())
    browser = Browserless(held_web)
    try:
        browser.pair("phone")
        sent = fields(browser, row)
        answer = browser.post(f"/op/{row}/approve", sent)
        said = page_text(answer)
        assert answer.status_code == 409
        assert re.search(
            r"Not yet: approve is available in \d+\.\d s, so that you read the operation first\. "
            r"Nothing was approved\.",
            said,
        )
        assert status_of(held_home, row) == Status.PENDING
    finally:
        browser.close()


def test_an_earlier_approval_in_doubt_holds_the_same_request_in_the_tuis_words(
    held_web, held_home, doubtful
):
    async def first_in_doubt_then_again() -> tuple[int, int]:
        agent = person_agent(held_home, arm_delay_seconds=0)
        try:
            company = agent.store.list_companies()[0]
            first = (await agent.call_api(company, "POST", "/bookings/bk_1/cancel")).operation_row
            agent.approve(first, agent.store.get_operation(first).current.id)
            outcome = await agent.wait_for_outcome(first, timeout=60)
            assert outcome.status == Status.OUTCOME_UNKNOWN
            second = (await agent.call_api(company, "POST", "/bookings/bk_1/cancel")).operation_row
            return first, second
        finally:
            await agent.aclose()

    first, second = asyncio.run(first_in_doubt_then_again())
    assert first != second
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.agent.store import Store

    with Store.open(resolve_paths(held_home).database) as store:
        reason = in_doubt_reason(store.earlier_in_doubt(second))
    browser = Browserless(held_web)
    try:
        browser.pair("laptop")
        review = browser.get(f"/op/{second}")
        said = page_text(review)
        assert f"DANGER: Can't be approved yet: {reason}." in said
        assert f"Approve is not available: {reason}." in said
        assert 'id="approve"' not in review.text
        answer = browser.post(f"/op/{second}/approve", fields(browser, second))
        assert f"Not yet: {reason}. Nothing was approved." in page_text(answer)
        # The person checks with the Company and says it was not performed, on the page.
        first_review = browser.get(f"/op/{first}")
        assert "OUTCOME UNKNOWN" in page_text(first_review) and 'id="resolve"' in first_review.text
        asked = browser.post(f"/op/{first}/resolve", fields(browser, first))
        assert "What did you find out?" in page_text(asked)
        told = browser.post(
            f"/op/{first}/resolve/yes", {**fields(browser, first), "performed": "no"}
        )
        assert told.status_code == 303
        assert status_of(held_home, first) == Status.NOT_PERFORMED
        # The hold lifts, read afresh: Approve is there again.
        lifted = browser.get(f"/op/{second}")
        assert "Can't be approved yet" not in page_text(lifted)
        assert 'id="approve"' in lifted.text
    finally:
        browser.close()
