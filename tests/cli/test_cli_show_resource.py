"""`show` and `show --json` include the resource the operation changes as read before the
decision (agent/resource_read.py): read when `call` got the operation back, kept in the store.
Against a Company written from the spec alone (tests/companies/resource_company.py)."""

from __future__ import annotations

import json

import pytest

from poppy_tui.cli.exit_codes import Exit
from tests.companies.resource_company import ResourceCompany


@pytest.fixture
def juniper(company_added):
    return company_added(ResourceCompany)


def ask(cli, order_id: str) -> None:
    run = cli(
        "call",
        "Juniper Outdoor",
        "POST",
        f"/orders/{order_id}/exchanges",
        "--body",
        '{"item_id": "it_1"}',
    )
    assert run.code == Exit.PENDING, run.err


def test_show_gives_the_resource_the_fields_the_terms_name_and_what_disagrees(cli, home, juniper):
    ask(cli, "ord_other")
    run = cli("show", "1")
    assert run.code == Exit.OK, run.err
    assert (
        "Now, what the Company's API says (not part of what you approve), read from "
        "GET /orders/ord_other at " in run.out
    )
    assert "  > items[0].item_id: it_2" in run.out and "  status: delivered" in run.out
    assert 'DANGER: The terms name terms.item_id "it_1"' in run.out
    run = cli("show", "1", "--json")
    now = json.loads(run.out)["operation"]["resource_now"]
    assert now["ok"] is True and now["source"] == f"GET {juniper.base_url}/orders/ord_other"
    assert now["body"]["items"][0]["item_id"] == "it_2" and now["revision"] == "r1"
    assert [f["code"] for f in now["findings"]] == [
        "resource_mismatch"
    ] and "items[0].item_id" in now["terms_name"]
    assert now["read_at"].endswith("Z")


def test_show_says_when_it_couldnt_be_read(cli, home, juniper):
    ask(cli, "ord_moved")
    run = cli("show", "1")
    assert (
        "Now, what the Company's API says (not part of what you approve): couldn't read it from "
        "GET /orders/ord_moved at " in run.out
    )
    assert ": the Company answered HTTP 302, a redirect, which poppy-tui does not follow" in run.out
    now = json.loads(cli("show", "1", "--json").out)["operation"]["resource_now"]
    assert now["ok"] is False and now["body"] is None and "HTTP 302" in now["problem"]
    assert now["state"] == "failed"
    assert {path for path, _ in juniper.state.reads} == {"/orders/ord_moved"}


def test_show_never_writes_the_companys_escapes_raw(cli, home, juniper):
    ask(cli, "ord_evil")
    for args in (("show", "1"), ("show", "1", "--json")):
        run = cli(*args)
        assert run.code == Exit.OK, run.err
        assert "\x1b" not in run.out and "\x07" not in run.out and "\u202e" not in run.out
    assert "\\x1b]52" in cli("show", "1").out


def test_a_resource_that_agrees_raises_nothing(cli, home, juniper):
    ask(cli, "ord_true")
    out = cli("show", "1").out
    assert (
        "says (not part of what you approve), read from GET /orders/ord_true" in out
        and "  > items[0].item_id: it_1" in out
    )
    assert "DANGER" not in out
    assert json.loads(cli("show", "1", "--json").out)["operation"]["resource_now"]["findings"] == []
