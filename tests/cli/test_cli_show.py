"""A second revision that moves only the expiry: `show` names it as the TUI does ("new expiry
only"), and the checks say what a change is measured from: "since you last saw this" only for a
revision the person opened, "since the revision before" otherwise. Against the strict Company
(tests/companies, written from the spec), which answers the same cancellation with a new
revision of the same operation and a later expiry."""

from __future__ import annotations

from datetime import datetime, UTC

import pytest

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.revision_checks import check_record
from poppy_tui.agent.store import Store
from poppy_tui.cli.exit_codes import Exit
from tests.companies.strict_company import StrictCompany


@pytest.fixture
def strict(company_added):
    return company_added(StrictCompany)


def ask_to_cancel_twice(cli, strict) -> None:
    for expiry_seconds in (600, 900):  # the second revision: the same terms, a later expiry
        strict.state.expiry_seconds = expiry_seconds
        run = cli("call", "Strict Travel", "POST", "/bookings/bk_1/cancel")
        assert run.code == Exit.PENDING, run.err


def finding_texts(home) -> list[str]:
    with Store.open(resolve_paths(home).database) as store:
        record = store.get_operation(1)
        checked = check_record(store, record, datetime.now(UTC), min_read_seconds=0)
    return [finding.message for finding in checked.findings]


def test_show_says_new_expiry_only_for_an_expiry_only_revision(cli, home, strict):
    ask_to_cancel_twice(cli, strict)
    run = cli("show", "1")
    assert run.code == Exit.OK, run.err
    assert "(new expiry only: this is revision 2)" in run.out
    assert "the terms changed" not in run.out


def test_show_says_the_terms_changed_when_they_did(cli, home, strict):
    for date in ("2026-12-10", "2026-12-11"):
        run = cli(
            "call",
            "Strict Travel",
            "POST",
            "/bookings/bk_1/rebook",
            "--body",
            f'{{"date": "{date}"}}',
        )
        assert run.code == Exit.PENDING, run.err
    run = cli("show", "1")
    assert "(the terms changed: this is revision 2)" in run.out


def test_a_revision_never_opened_is_compared_with_the_revision_before(cli, home, strict):
    ask_to_cancel_twice(cli, strict)
    texts = finding_texts(home)
    assert "Only the expiry time changed since the revision before." in texts
    assert not any("since you last saw this" in text for text in texts)


def test_a_revision_opened_is_what_the_change_is_since(cli, home, strict):
    ask_to_cancel_twice(cli, strict)
    with Store.open(resolve_paths(home).database) as store:
        first = store.revisions(1)[0]
        store.mark_seen(first.id)
    texts = finding_texts(home)
    assert "Only the expiry time changed since you last saw this." in texts


def test_show_writes_every_time_in_one_human_format(cli, home, strict):
    import re

    ask_to_cancel_twice(cli, strict)
    with Store.open(resolve_paths(home).database) as store:
        store.decline(1, store.get_operation(1).current.id, note="not now")
    run = cli("show", "1")
    assert run.code == Exit.OK, run.err
    # Received, last change, the decision and the history lines: no ISO stamps with microseconds.
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", run.out), run.out
    assert re.search(
        r"Received: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; last change: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
        run.out,
    ), run.out
    assert re.search(r"\n  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: declined revision", run.out), run.out
