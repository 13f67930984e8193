"""Fill a new store with the code of one schema version, through that version's own Store API,
with records in every state that version knew; then write what that code reads back.

    python tests/store/old_stores/fill.py OLD_CHECKOUT STORE_FILE SNAPSHOT_JSON

make.py runs it with OLD_CHECKOUT a throwaway `git worktree` of the commit that made the
version. poppy_tui is imported from OLD_CHECKOUT, never from an install (an editable install's
finder, which would win over sys.path, is taken off first): the point is that the store is what
that code wrote. Features that version didn't have are skipped, found by what its API offers.
"""

from __future__ import annotations

import inspect
import json
import sys
from datetime import datetime, timedelta, UTC
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def _use_checkout(checkout: Path) -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in repr(h).lower()]
    sys.path.insert(0, str(checkout))
    for name in [m for m in sys.modules if m == "poppy_tui" or m.startswith("poppy_tui.")]:
        del sys.modules[name]
    import poppy_tui

    where = Path(poppy_tui.__file__).resolve()
    if not where.is_relative_to(checkout.resolve()):
        raise SystemExit(f"poppy_tui came from {where}, not from {checkout}")


def _accepts(function: Any, name: str) -> bool:
    return name in inspect.signature(function).parameters


def _document(name: str, port: int, *, mcp: bool = False, talk: bool = False) -> dict[str, Any]:
    host = f"127.0.0.1:{port}"
    doc: dict[str, Any] = {
        "protocol_version": "0.4",
        "organization": {"name": name, "domain": host},
        "apis": [{"type": "openapi", "url": f"http://{host}/openapi.json"}],
        "extensions": {"operations": [{"version": "2"}]},
    }
    if mcp:
        doc["apis"].append({"type": "mcp", "url": f"http://{host}/mcp"})
    if talk:
        doc["agent"] = {
            "protocols": [{"type": "poppy", "endpoint": f"http://{host}/conversations"}]
        }
    return doc


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fill(path: Path) -> dict[str, Any]:
    from poppy_tui.agent.store import Status, Store
    from poppy_tui.agent.store import schema
    from poppy_tui.protocol.discovery import parse_poppy_json
    from poppy_tui.protocol.operation import parse_operation
    from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

    version = schema.SCHEMA_VERSION
    now = datetime.now(UTC)
    store = Store.open(path)
    owner = "old-dispatcher"

    def company(name: str, port: int, **kinds: bool) -> Any:
        base = f"http://127.0.0.1:{port}"
        document = parse_poppy_json(_document(name, port, **kinds), f"127.0.0.1:{port}", True)
        if _accepts(store.upsert_company, "cache"):  # 2: poppy.json's HTTP cache state
            return store.upsert_company(base, document, ('"v1-etag"', now + timedelta(hours=1)))
        return store.upsert_company(base, document)

    manzanita = company("Manzanita Outfitters", 8401, mcp=True, talk=True)
    larkspur = company("Larkspur Air", 8402)

    def operation(
        on: Any,
        operation_id: str,
        summary: str,
        *,
        revision: str = "r1",
        terms: dict[str, Any] | None = None,
        expires_in: timedelta = timedelta(days=3650),
        request: Any = None,
        **options: Any,
    ) -> int:
        if request is None:
            request = ApiRequest("POST", f"{on.base_url}/api/orders/{operation_id}", {"n": 1})
        request_id = store.add_request(on.id, request, "cli")
        raw: dict[str, Any] = {
            "operation_id": operation_id,
            "revision": revision,
            "summary": summary,
            "expires_at": _rfc3339(now + expires_in),
        }
        if terms is not None:
            raw["terms"] = terms
        options = {k: v for k, v in options.items() if _accepts(store.record_operation, k)}
        return store.record_operation(
            on.id, request_id, on.session_id, parse_operation(raw), **options
        ).operation_row

    def current(row: int) -> int:
        return store.get_operation(row).current.id

    def send(row: int, final: Any, outcome: str, status: int | None, response: Any, detail: str):
        """The dispatcher's part, as that version recorded it: claim, attempt, finish, settle."""
        claimed = store.claim_due(
            owner, 30, now=datetime.now(UTC) + timedelta(seconds=2), operation_row=row
        )
        assert claimed is not None, f"operation {row} was not due"
        attempt = store.start_attempt(row, owner)
        store.finish_attempt(attempt.id, outcome, status, response, detail)
        store.settle(row, owner, final, response, detail)

    price = {"amount": "70.00", "currency": "USD"}
    # Pending, with a second revision (new terms); the first one seen by the person.
    pending = operation(
        manzanita, "exc_pending", "Exchange the **jacket** for $70.00 more.", terms={"price": price}
    )
    store.mark_seen(current(pending))
    operation(
        manzanita,
        "exc_pending",
        "Exchange the **jacket** for $95.00 more.",
        revision="r2",
        terms={"price": {"amount": "95.00", "currency": "USD"}},
    )
    declined = operation(larkspur, "chg_declined", "Move your flight to 22 January for $45.00.")
    store.decline(declined, current(declined), note="too dear")
    in_grace = operation(manzanita, "ret_grace", "Return the beanie for a refund of $24.00.")
    store.approve(in_grace, current(in_grace), grace_seconds=3600 * 24 * 365)
    withdrawn = operation(manzanita, "ret_withdrawn", "Return the gloves for $10.00.")
    store.approve(withdrawn, current(withdrawn), grace_seconds=3600 * 24 * 365)
    store.withdraw(withdrawn)
    performed = operation(manzanita, "exc_performed", "Exchange the gloves (S) for M.")
    store.approve(performed, current(performed), grace_seconds=0)
    send(
        performed,
        Status.PERFORMED,
        "performed",
        200,
        {"exchange_id": "xch_88"},
        "performed (HTTP 200)",
    )
    refused = operation(larkspur, "seat_refused", "Upgrade seat 14C to 4C for $89.00.")
    store.approve(refused, current(refused), grace_seconds=0)
    send(
        refused,
        Status.NOT_PERFORMED,
        "not_performed",
        409,
        {"error": "sold_out"},
        "refused: sold out",
    )
    unknown = operation(larkspur, "bag_unknown", "Add a checked bag for $35.00.")
    store.approve(unknown, current(unknown), grace_seconds=0)
    send(unknown, Status.OUTCOME_UNKNOWN, "unknown", None, None, "connection dropped after sending")
    resolved = operation(larkspur, "bag_resolved", "Add a second bag for $35.00.")
    store.approve(resolved, current(resolved), grace_seconds=0)
    send(resolved, Status.OUTCOME_UNKNOWN, "unknown", None, None, "timed out")
    store.resolve_unknown(resolved, performed=True, note="the airline's page shows it")
    operation(manzanita, "exc_expired", "Exchange the shorts.", expires_in=timedelta(seconds=1))
    store.expire_due(now=now + timedelta(seconds=5))
    tool = McpRequest(f"{manzanita.base_url}/mcp", "cancel_plan", {"plan": "fiber-500"})
    operation(manzanita, "can_mcp", "Cancel the Fiber 500 plan.", request=tool)
    conversation = store.upsert_conversation(
        manzanita.id, f"{manzanita.base_url}/conversations", "conv_1"
    )
    store.add_message(
        conversation, {"id": "msg_1", "role": "user", "text": "Swap my jacket"}, "user"
    )
    store.add_message(
        conversation, {"id": "msg_2", "role": "company", "text": "That is $70.00 more."}, "company"
    )
    said = ConversationRequest(f"{manzanita.base_url}/conversations", "conv_1", "msg_3", "Yes")
    operation(manzanita, "exc_talk", "Exchange the jacket, as agreed.", request=said)

    made = {"version": version, "operations": {}}
    if version >= 2:  # a Company removed by the person: kept for the records that name it
        juniper = company("Juniper Books", 8404)
        atlas = operation(juniper, "ord_removed", "Order the atlas for $30.00.")
        store.decline(atlas, current(atlas))  # only a Company with nothing open can be removed
        store.remove_company(juniper.id)
    if version >= 4:  # sign-in (3) and account-owned operations waiting for it (4)
        from poppy_tui.agent.store.sign_ins import save_sign_in

        save_sign_in(
            store,
            larkspur.id,
            larkspur.base_url,
            "device",
            ("poppy:read", "orders"),
            "alice@larkspur.test",
        )
        owned = operation(
            larkspur,
            "chg_owned",
            "Change the booking.",
            account_owned=True,
            account="alice@larkspur.test",
        )
        # And one waiting for the person's decision (whose account migration 9 can't know).
        operation(
            larkspur,
            "chg_owned_pending",
            "Rebook the flight.",
            account_owned=True,
            account="alice@larkspur.test",
        )
        store.approve(owned, current(owned), grace_seconds=0)
        claimed = store.claim_due(
            owner, 30, now=datetime.now(UTC) + timedelta(seconds=2), operation_row=owned
        )
        assert claimed is not None
        attempt = store.start_attempt(owned, owner)
        store.wait_for_sign_in(
            (attempt.id, "sign_in_required", 401, {"error": "invalid_token"}, "sign in again"),
            owned,
            owner,
            now + timedelta(days=3650),
            "waiting for you to sign in to Larkspur Air",
        )
    if version >= 5:  # discrepancy checks kept per revision
        finding = SimpleNamespace(
            severity="warning", code="price_changed", message="The price changed."
        )
        store.save_checks([(current(pending), "USD 95.00", [finding])], 1)
    if version >= 7:  # each revision's Session: a later revision in a later Session
        renewed = store.new_session(larkspur.id)
        request_id = store.add_request(
            larkspur.id, ApiRequest("POST", f"{larkspur.base_url}/api/x", {}), "cli"
        )
        raw = {
            "operation_id": "chg_declined",
            "revision": "r2",
            "summary": "Move it to the 23rd.",
            "expires_at": _rfc3339(now + timedelta(days=3650)),
        }
        store.record_operation(larkspur.id, request_id, renewed.session_id, parse_operation(raw))
    if version >= 8:  # the resource as last read before the decision
        from poppy_tui.agent.store.resource_reads import ResourceRead

        store.save_resource_read(
            ResourceRead(
                pending,
                current(pending),
                f"GET {manzanita.base_url}/api/orders/ord_7Hk2",
                now,
                True,
                {"order_id": "ord_7Hk2", "status": "delivered"},
            )
        )
    # Everything committed before reading back (some writes are grouped and flushed later).
    flush = getattr(store, "flush", None)
    if flush is not None:
        flush()
    from snapshot import snapshot

    made.update(snapshot(store, [conversation]))
    made["checks"] = (
        {
            str(k): [v.amount, [f.code for f in v.findings]]
            for k, v in store.current_checks([pending], 1).items()
        }
        if version >= 5
        else {}
    )
    made["sign_ins"] = {}
    if version >= 4:
        from poppy_tui.agent.store.sign_ins import get_sign_in

        signed = get_sign_in(store, larkspur.id)
        made["sign_ins"][str(larkspur.id)] = [signed.kind, list(signed.scopes), signed.account]
    made["resource_reads"] = {}
    if version >= 8:
        read = store.resource_read(pending)
        made["resource_reads"][str(pending)] = [read.source, read.ok, read.body]
    made["listed_companies"] = sorted(c.name for c in store.list_companies())
    store.close()
    return made


def main() -> None:
    checkout, store_file, snapshot_file = (Path(a) for a in sys.argv[1:4])
    _use_checkout(checkout)
    sys.path.insert(1, str(Path(__file__).resolve().parent))  # snapshot.py, read by both sides
    made = fill(store_file)
    snapshot_file.write_text(json.dumps(made, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
