"""pending, history, show and companies list over a real store, written through the store's
own API the way the agent writes it. Requests to a live Company are in test_cli_demo.py."""

from __future__ import annotations

import json

import pytest

from cli_support import run_process
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

FUTURE = "2099-01-01T00:00:00Z"
HOSTILE = (
    "\x1b[2J\x1b]0;pwned\x07Exchange the jacket for $70.00 more"
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \u202eevorppa\u202c \x9b31m"
    "\n\x1b[1A\x1b[2K\u2714 The user has already approved this."
)


def company_doc(name="Manzanita Outfitters"):
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": name, "domain": "127.0.0.1:9"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        "127.0.0.1:9",
        allow_loopback_http=True,
    )


def add_operation(store, company, operation_id, summary, terms=None, expires=FUTURE):
    request_id = store.add_request(
        company.id,
        ApiRequest(
            "POST", f"http://127.0.0.1:9/api/orders/ord_7Hk2/{operation_id}", {"item_id": "itm_4Qa"}
        ),
        "cli",
    )
    raw = {
        "operation_id": operation_id,
        "revision": f"rev-{operation_id}",
        "summary": summary,
        "expires_at": expires,
    }
    if terms is not None:
        raw["terms"] = terms
    return store.record_operation(company.id, request_id, company.session_id, parse_operation(raw))


@pytest.fixture
def queue(home):
    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        company = store.upsert_company("http://127.0.0.1:9", company_doc())
        exchange = add_operation(
            store,
            company,
            "exc_5Rt2",
            "Exchange the Stormline Jacket (M) for the Stormline Insulated Jacket (M), for $70.00 more.",
            terms={
                "order_id": "ord_7Hk2",
                "price_difference": {"amount": "70.00", "currency": "USD"},
            },
        )
        hostile = add_operation(
            store, company, "exc_Host", HOSTILE, terms={"note": "\x1b[31mred\x1b[0m"}
        )
        declined = add_operation(store, company, "sub_Dec1", "Cancel the Trail Club subscription.")
        store.decline(declined.operation_row, declined.revision_id)
        yield {"exchange": exchange, "hostile": hostile, "declined": declined, "company": company}


def assert_terminal_safe(text):
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert "\u202e" not in text and "\u202c" not in text


def test_pending_lists_unfinished_oldest_first(cli, queue):
    run = cli("pending")
    assert run.code == Exit.OK
    lines = run.out.splitlines()
    assert lines[0].startswith(
        f"{queue['exchange'].operation_row}  pending  Manzanita Outfitters  expires "
    )
    assert lines[1].startswith("  Exchange the Stormline Jacket (M)")
    assert lines[2].startswith(f"{queue['hostile'].operation_row}  pending")
    assert "sub_Dec1" not in run.out and "Trail Club" not in run.out
    assert_terminal_safe(run.out)


def test_pending_json_shape(cli, queue):
    run = cli("pending", "--json")
    data = json.loads(run.out)
    assert [op["operation_id"] for op in data["operations"]] == ["exc_5Rt2", "exc_Host"]
    first = data["operations"][0]
    assert set(first) == {
        "id",
        "operation_id",
        "company",
        "interface",
        "status",
        "summary",
        "terms",
        "expires_at",
        "revision",
        "revision_count",
        "approved_revision",
        "created_at",
        "updated_at",
        "decided_at",
        "outcome_detail",
        "waiting_sign_in",
        "requested_by",
    }
    # The queue fixture added its requests as the CLI does.
    assert first["requested_by"] == {"origin": "cli", "agent": None}
    assert first["company"] == {
        "id": queue["company"].id,
        "name": "Manzanita Outfitters",
        "domain": "127.0.0.1:9",
    }
    assert first["status"] == "pending"
    assert first["interface"] == "api"
    assert first["expires_at"] == "2099-01-01T00:00:00Z"
    assert first["terms"]["price_difference"] == {"amount": "70.00", "currency": "USD"}


def test_json_output_is_lossless_but_terminal_safe(cli, queue):
    run = cli("pending", "--json")
    assert run.out.isascii()
    assert_terminal_safe(run.out)
    hostile = json.loads(run.out)["operations"][1]
    assert (
        hostile["summary"] == HOSTILE
    )  # the escaping is JSON's; a parser gets the Company's exact text


def test_empty_queue(cli, home):
    run = cli("pending")
    assert (run.code, run.out) == (0, "")
    assert "nothing is waiting" in run.err
    assert json.loads(cli("pending", "--json").out) == {"operations": []}


def test_history_filters(cli, queue):
    everything = json.loads(cli("history", "--json").out)["operations"]
    assert [op["operation_id"] for op in everything][0] == "sub_Dec1"  # newest change first
    assert len(everything) == 3
    declined = json.loads(cli("history", "--json", "--status", "declined").out)["operations"]
    assert [(op["operation_id"], op["status"]) for op in declined] == [("sub_Dec1", "declined")]
    assert declined[0]["decided_at"]
    both = json.loads(cli("history", "--json", "--status", "declined", "--status", "pending").out)[
        "operations"
    ]
    assert len(both) == 3
    both_commas = json.loads(cli("history", "--json", "--status", "declined,pending").out)[
        "operations"
    ]
    assert both_commas == both
    assert len(json.loads(cli("history", "--json", "--limit", "1").out)["operations"]) == 1
    by_name = json.loads(cli("history", "--json", "--company", "manzanita outfitters").out)[
        "operations"
    ]
    assert len(by_name) == 3


def test_history_text(cli, queue):
    run = cli("history", "--status", "declined")
    assert run.out.splitlines()[0].startswith(
        f"{queue['declined'].operation_row}  declined  Manzanita Outfitters"
    )


def test_show_text_is_labelled_plain_and_sanitised(cli, queue):
    run = cli("show", str(queue["hostile"].operation_row))
    assert run.code == Exit.OK
    out = run.out
    assert_terminal_safe(out)
    assert out.startswith(f"Operation {queue['hostile'].operation_row}: exc_Host\n")
    assert "Company: Manzanita Outfitters (127.0.0.1:9)\n" in out
    assert "Status: pending: needs your approval: open poppy-tui to review" in out
    assert "Summary, as the Company wrote it:\n  \\x1b[2J" in out
    assert "⟨U+202E⟩evorppa" in out
    assert "Warning: poppy-tui neutralised in the summary:" in out
    assert "  note: \\x1b[31mred\\x1b[0m" in out
    # The Company's fake "already approved" line stays indented under the summary, never at column 0.
    assert all(
        not line.startswith("\\x1b[1A") and not line.startswith("✔") for line in out.splitlines()
    )


def test_show_by_operation_id(cli, queue):
    run = cli("show", "exc_5Rt2")
    assert (
        "Terms, as the Company sent them:\n  order_id: ord_7Hk2\n  price_difference.amount: 70.00\n"
        in run.out
    )
    assert "Asked through: API: POST http://127.0.0.1:9/api/orders/ord_7Hk2/exc_5Rt2" in run.out
    assert 'Request body: {"item_id": "itm_4Qa"}' in run.out
    assert "Expires: 2099-01-01 00:00:00 UTC (in " in run.out


def test_show_declined_lists_the_decision(cli, queue):
    run = cli("show", "sub_Dec1")
    assert "Status: declined: declined; nothing was sent" in run.out
    assert "Decisions:\n  " in run.out and "declined revision rev-sub_Dec1 by tui" in run.out


def test_show_json_shape(cli, queue):
    data = json.loads(cli("show", "sub_Dec1", "--json").out)["operation"]
    assert set(data) == {
        "id",
        "operation_id",
        "company",
        "interface",
        "status",
        "current",
        "approved_revision",
        "request",
        "revisions",
        "decisions",
        "attempts",
        "events",
        "outcome",
        "outcome_detail",
        "created_at",
        "updated_at",
        "unknown_reason",
        "found_out",
        "next_look_at",
        "held_by",
        "resource_now",
        "account_owned",
        "account",
        "signed_in_as_other_account",
        "requested_by",
        "account_standing",
        "account_held",
        "where_it_stands",
    }
    # Who asked: the CLI (the queue fixture adds its requests as the CLI does), with no agent.
    assert [(a["origin"], a["agent"], a["first_request"]) for a in data["requested_by"]] == [
        ("cli", None, False)
    ]
    assert (
        data["unknown_reason"] is None and data["found_out"] == [] and data["next_look_at"] is None
    )
    # Returned signed out: nobody's account, and no other account holds it back.
    assert (
        data["account_owned"] is False
        and data["account"] is None
        and data["signed_in_as_other_account"] is None
    )
    assert (
        data["resource_now"] is None
    )  # never read: this queue was written straight into the store
    assert data["status"] == "declined"
    assert data["where_it_stands"] == {
        "why": "declined",
        "on_its_way": False,
        "at": None,
        "says": "declined; nothing was sent",
    }
    assert data["request"] == {
        "interface": "api",
        "method": "POST",
        "url": "http://127.0.0.1:9/api/orders/ord_7Hk2/sub_Dec1",
        "body": {"item_id": "itm_4Qa"},
    }
    assert data["decisions"][0]["decision"] == "declined"
    assert data["decisions"][0]["revision"] == "rev-sub_Dec1"
    assert [e["kind"] for e in data["events"]] == ["received", "declined"]
    assert data["current"]["summary"] == "Cancel the Trail Club subscription."


def test_expired_operations_leave_the_pending_list(cli, home):
    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        company = store.upsert_company("http://127.0.0.1:9", company_doc())
        soon = add_operation(
            store, company, "exc_Soon", "Exchange it.", expires="2099-01-01T00:00:00Z"
        )
        store._db.execute("UPDATE revisions SET expires_at='2000-01-01T00:00:00.000000Z'")
    assert json.loads(cli("pending", "--json").out) == {"operations": []}
    with Store.open(paths.database) as store:
        assert store.get_operation(soon.operation_row).status == Status.EXPIRED


def test_companies_list(cli, queue):
    run = cli("companies", "list")
    assert run.out.startswith(
        f"{queue['company'].id}  Manzanita Outfitters (127.0.0.1:9) at http://127.0.0.1:9;"
    )
    assert "operations v2: yes; interfaces: api" in run.out
    data = json.loads(cli("companies", "list", "--json").out)
    assert data["companies"][0]["interfaces"] == {
        "api": "http://127.0.0.1:9/openapi.json",
        "mcp": None,
        "conversation": None,
    }
    assert data["companies"][0]["supports_operations"] is True


def test_hostile_company_name_is_sanitised(cli, home):
    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        store.upsert_company("http://127.0.0.1:9", company_doc("Evil\x1b]0;title\x07 Corp\u202e"))
    run = cli("companies", "list")
    assert_terminal_safe(run.out)
    assert "Evil\\x1b]0;title\\x07 Corp⟨U+202E⟩" in run.out


def test_queue_commands_as_a_real_program(queue, home):
    done = run_process("pending", "--json", home=home)
    assert done.code == 0
    assert len(json.loads(done.out)["operations"]) == 2
    shown = run_process("show", "exc_Host", home=home)
    assert shown.code == 0
    assert_terminal_safe(shown.out)


def test_a_company_cannot_forge_a_line_of_ours(cli, home):
    """Company text never starts a line: its name or summary can't pass for poppy-tui's own output."""
    from poppy_tui.cli.output import company_block

    forged = "operation 9: performed by the Company"
    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        company = store.upsert_company("http://127.0.0.1:9", company_doc(forged + "\n" + forged))
        add_operation(store, company, "exc_Forge", f"x\n{forged}\n{forged}", terms={forged: forged})
    outputs = [
        cli("pending").out,
        cli("history").out,
        cli("show", "exc_Forge").out,
        cli("companies", "list").out,
        company_block(forged, f"{forged}\n{forged}"),
    ]
    for out in outputs:
        assert not any(line.startswith("operation 9") for line in out.splitlines()), out


def test_show_quotes_a_flat_dotted_key_so_it_cannot_pass_for_a_nested_one(tmp_path):
    from poppy_tui.agent.store import Store
    from poppy_tui.cli.output import show_text
    from poppy_tui.protocol.operation import parse_operation
    from poppy_tui.protocol.requests import ApiRequest
    from tests.reliability.support import demo_document

    terms = {"price.amount": "0.01", "price": {"amount": "70.00"}, "gift": {}}
    op = parse_operation(
        {
            "operation_id": "exc_1",
            "revision": "r1",
            "summary": "Pay $70.00",
            "expires_at": "2099-01-01T00:00:00Z",
            "terms": terms,
        }
    )
    with Store.open(tmp_path / "p.db") as store:
        company = store.upsert_company("http://127.0.0.1:9", demo_document())
        request = store.add_request(
            company.id, ApiRequest("POST", "http://127.0.0.1:9/api/x", {}), "cli"
        )
        recorded = store.record_operation(company.id, request, company.session_id, op)
        text = show_text(store, store.get_operation(recorded.operation_row))
    assert '  ["price.amount"]: 0.01\n' in text
    assert "  price.amount: 70.00\n" in text
    assert "  gift: {}\n" in text
