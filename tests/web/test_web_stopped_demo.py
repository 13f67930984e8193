"""The page says what the TUI's review says of an approval for a demo's Company once that demo has
ended (agent/demo_marker.py): NOT SENT, and why, never SENDING with an attempt count. Only for
that Company, and only once the demo has stopped. Against the Birch test Company (written from
the spec), through the real Agent and the page's own review (web/views.py)."""

from __future__ import annotations

import os

import pytest

from poppy_tui.agent import clock
from poppy_tui.agent.demo_marker import DemoRun, write_demo_run
from poppy_tui.agent.store import Status
from poppy_tui.web.views import review
from tests.agent.conftest import make_agent, paths  # noqa: F401 (fixtures)
from tests.companies.account_company import NAME
from tests.keyring_support import memory_keyring  # noqa: F401 (the autouse in-memory keyring)
from tests.signed_in import SignedIn

STARTED = "2026-12-07T10:00:00.000000Z"
STOPPED = "2026-12-07T10:05:00.000000Z"


async def approved(make_agent, birch):  # noqa: F811
    agent = make_agent()
    company = await agent.add_company(birch.base_url)
    signed = SignedIn(agent, company)
    agent.access_token_source = signed
    signed.as_("tok_alice", "alice@birch.test")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.outcome == "operation"
    op = agent.store.get_operation(result.operation_row)
    agent.approve(op.id, op.current.id)  # no dispatcher runs here: it stays approved
    assert agent.store.get_operation(op.id).status == Status.APPROVED
    return agent, company, op


def page_review(agent, row):
    return review(agent, row, clock.now_utc(), shown_revision_id=None, arming_left=0.0)


async def test_an_approval_for_a_stopped_demos_company_reads_not_sent(make_agent, birch):  # noqa: F811
    agent, company, op = await approved(make_agent, birch)
    write_demo_run(agent.paths.data_dir, DemoRun(company.base_url + "/", 1, STARTED, STOPPED))
    page = page_review(agent, op.id)
    assert page.banner_head.startswith("NOT SENT — the demo Company has stopped")
    assert page.banner_meaning and NAME in page.banner_meaning
    assert "poppy-tui --demo" in page.banner_meaning
    assert "SENDING" not in page.banner_head


@pytest.mark.parametrize("case", ["still running", "another Company", "no demo"])
async def test_otherwise_the_page_says_no_such_thing(make_agent, birch, case):  # noqa: F811
    agent, company, op = await approved(make_agent, birch)
    if case == "still running":  # this very process serves it, and no stop was written
        write_demo_run(agent.paths.data_dir, DemoRun(company.base_url, os.getpid(), STARTED))
    elif case == "another Company":
        write_demo_run(agent.paths.data_dir, DemoRun("http://127.0.0.1:9/", 1, STARTED, STOPPED))
    page = page_review(agent, op.id)
    assert "NOT SENT" not in page.banner_head
    assert "ran in a demo" not in (page.banner_meaning or "")
