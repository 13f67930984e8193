"""`show` says where an operation stands in the lifecycle's words (agent/lifecycle, `explain`):
waiting for the person, on its way and when, or why not. Against Quince Fares (tests/companies,
written from the spec alone)."""

from __future__ import annotations

import json
import re

import pytest

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Store
from poppy_tui.cli.exit_codes import Exit
from tests.companies.fares_company import FaresCompany

UTC_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


@pytest.fixture
def fares(company_added):
    return company_added(FaresCompany)


def where(cli) -> tuple[str, dict]:
    text = cli("show", "1")
    assert text.code == Exit.OK, text.err
    [line] = [line for line in text.out.splitlines() if line.startswith("Where it stands: ")]
    data = json.loads(cli("show", "1", "--json").out)["operation"]["where_it_stands"]
    assert line == f"Where it stands: {data['says']}"  # the same words, text and JSON
    return line, data


def test_show_says_waiting_for_you_then_when_the_approval_goes(cli, home, fares):
    run = cli("call", "Quince Fares", "POST", "/fares/f1/change")
    assert run.code == Exit.PENDING, run.err
    line, data = where(cli)
    assert data["why"] == "waiting_for_you" and not data["on_its_way"]
    assert re.fullmatch(
        rf"Where it stands: waiting for your decision until its terms expire at {UTC_TIME}", line
    )
    with Store.open(resolve_paths(home).database) as store:
        store.approve(1, store.get_operation(1).current.id, grace_seconds=300)
    line, data = where(cli)
    assert data["why"] == "grace" and data["on_its_way"] and data["at"]
    assert re.fullmatch(
        rf"Where it stands: approved; sent at {UTC_TIME}, when its grace period ends "
        r"\(you can withdraw it until then\)",
        line,
    )
