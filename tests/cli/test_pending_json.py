"""`pending --json` is written by SQLite's JSON functions (store/row_json.py), `history --json`
by Python's json from the same rows (cli/output.py row_json): both must print the same line for
the same operation, byte for byte, whatever the Company wrote and whatever state the operation
is in. Over a real store written through the Store API."""

from __future__ import annotations

import json

import pytest

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store import row_json as row_json_module
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import json_line, row_json
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

FUTURE = "2099-01-01T00:00:00Z"
# Every kind of character JSON output treats differently: quotes and backslashes, controls (some
# with short escapes), DEL, Latin-1, bidi controls, a line separator, one outside the BMP
# (a surrogate pair when escaped), terminal escapes.
AWKWARD = 'a "quoted" \\ back\x00\x01\x07\b\t\n\x0b\x0c\r\x1b[2J\x1f\x7f é \u202eevil\u202c \u2028 😀 \x9b31m'
UNFINISHED = [s for s in Status if not s.is_final]


def company_doc(name, port):
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": name, "domain": f"127.0.0.1:{port}"},
            "apis": [{"type": "openapi", "url": f"http://127.0.0.1:{port}/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        f"127.0.0.1:{port}",
        allow_loopback_http=True,
    )


def record(
    store, company, request, operation_id, summary, terms=None, revision="r1", expires=FUTURE
):
    request_id = store.add_request(company.id, request, "cli")
    raw = {
        "operation_id": operation_id,
        "revision": revision,
        "summary": summary,
        "expires_at": expires,
    }
    if terms is not None:
        raw["terms"] = terms
    return store.record_operation(company.id, request_id, company.session_id, parse_operation(raw))


def api(n):
    return ApiRequest("POST", f"http://127.0.0.1:9/api/orders/ord_{n}", {"item_id": "itm_4Qa"})


@pytest.fixture
def queue(home):
    """Operations in every unfinished state (and some finished ones, which aren't listed), from
    Companies whose names and words hold every awkward character."""
    paths = resolve_paths(home).ensure()
    with Store.open(paths.database) as store:
        plain = store.upsert_company("http://127.0.0.1:9", company_doc("Manzanita Outfitters", 9))
        odd = store.upsert_company(
            "http://127.0.0.1:10", company_doc('Ünïcode "Co" \u202e\x7f😀', 10)
        )
        record(
            store,
            plain,
            api(1),
            "exc_1",
            "Exchange the jacket.",
            {"order_id": "ord_1", "price": {"amount": "70.00", "currency": "USD"}},
        )
        record(
            store,
            odd,
            api(2),
            "exc_2",
            AWKWARD,
            {
                "note": AWKWARD,
                "ü": [1, -0.0, 1.5e300, 12345678901234567890123, True, None, {}, []],
                "nan": float("nan"),
                "inf": float("inf"),
                "neg": float("-inf"),
            },
        )
        record(
            store,
            plain,
            McpRequest("http://127.0.0.1:9/mcp", "cancel", {"id": "sub_1"}),
            "sub_1",
            "Cancel the subscription.",
        )  # no terms: null
        record(
            store,
            odd,
            ConversationRequest("http://127.0.0.1:10/c", "conv_1", "msg_1", "hi"),
            "conv_op",
            "Move the booking.",
            {"to": "Fri"},
        )
        # A second revision: revision_count 2, the newest summary and terms.
        renewed = record(store, plain, api(5), "exc_5", "First terms.", {"v": 1})
        record(store, plain, api(5), "exc_5", "Second terms, é.", {"v": 2}, revision="r2")
        approved = record(store, plain, api(6), "exc_6", "Approved, waiting its grace period.")
        store.approve(approved.operation_row, approved.revision_id, grace_seconds=3600)
        withdrawn = record(store, odd, api(7), "exc_7", "Approved, then withdrawn.")
        store.approve(withdrawn.operation_row, withdrawn.revision_id, grace_seconds=3600)
        store.withdraw(withdrawn.operation_row)
        unknown = record(store, plain, api(8), "exc_8", "Sent; the answer was lost.")
        store.approve(unknown.operation_row, unknown.revision_id, grace_seconds=0)
        assert store.claim_due("me", 60, operation_row=unknown.operation_row) is not None
        store.start_attempt(unknown.operation_row, "me")
        store.settle(unknown.operation_row, "me", Status.OUTCOME_UNKNOWN, detail="timed out \u202e")
        waiting = record(store, odd, api(9), "exc_9", "Held until sign-in.")
        store.approve(waiting.operation_row, waiting.revision_id, grace_seconds=0)
        assert store.claim_due("me", 60, operation_row=waiting.operation_row) is not None
        attempt = store.start_attempt(waiting.operation_row, "me")
        store.wait_for_sign_in(
            (attempt.id, "sign_in_required", 401, {"error": "x"}, "sign in"),
            waiting.operation_row,
            "me",
            parse_operation(
                {"operation_id": "x", "revision": "x", "summary": "x", "expires_at": FUTURE}
            ).expires_at,
            "Sign in to Ünïcode again",
        )
        declined = record(store, plain, api(10), "exc_10", "Declined: not listed.")
        store.decline(declined.operation_row, declined.revision_id)
        rows = store.list_operations(UNFINISHED, limit=1000, newest_first=False)
    assert {r.status for r in rows} == {
        Status.PENDING,
        Status.APPROVED,
        Status.WITHDRAWN,
        Status.OUTCOME_UNKNOWN,
        Status.SENDING,
    }
    assert any(r.waiting_sign_in for r in rows) and any(r.revision_count == 2 for r in rows)
    assert {r.interface for r in rows} == {"api", "mcp", "conversation"}
    assert renewed.operation_row in {r.id for r in rows}
    return rows


def listed_lines(out: str) -> list[str]:
    lines = out.splitlines()
    assert lines[0] == '{"operations": [' and lines[-1] == "]}"
    return [line.removeprefix("  ").removesuffix(",") for line in lines[1:-1]]


@pytest.mark.parametrize("batch", [row_json_module.BATCH, 1, 2])
def test_pending_json_prints_each_row_as_python_json_spells_it(cli, queue, monkeypatch, batch):
    monkeypatch.setattr(row_json_module, "BATCH", batch)  # rows split across batches, or not
    run = cli("pending", "--json")
    assert run.code == Exit.OK
    assert run.out.isascii() and "\x7f" not in run.out  # ensure_ascii, DEL included (docs/cli.md)
    expected = [json_line(row_json(row)) for row in queue]
    assert listed_lines(run.out) == expected
    listed = json.loads(run.out)["operations"]
    assert [op["id"] for op in listed] == [row.id for row in queue]
    odd = next(op for op in listed if op["operation_id"] == "exc_2")
    assert odd["summary"] == AWKWARD and odd["terms"]["note"] == AWKWARD
    assert odd["company"]["name"] == 'Ünïcode "Co" \u202e\x7f😀'
    assert odd["terms"]["ü"][3] == 12345678901234567890123
    assert next(op for op in listed if op["interface"] == "mcp")["terms"] is None


def test_history_json_prints_the_same_lines(cli, queue):
    pending = listed_lines(cli("pending", "--json").out)
    statuses = ",".join(s.value for s in UNFINISHED)
    history = cli("history", "--json", "--status", statuses)
    assert history.code == Exit.OK
    assert listed_lines(history.out) == pending[::-1]  # newest first


def test_an_empty_list_is_one_line(cli, home):
    run = cli("pending", "--json")
    assert run.code == Exit.OK and run.out == '{"operations": []}\n'
    assert cli("history", "--json").out == '{"operations": []}\n'
