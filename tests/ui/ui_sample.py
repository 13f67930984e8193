"""Test data for the UI, written through the real Store so the screens read real records."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import Any

from poppy_tui.agent.config import Config
from poppy_tui.agent.store import CompanyRecord, Status, Store
from poppy_tui.agent.store.requests import Requester
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest
from tests.waiting import wait_until

# Snapshots and screenshots freeze time here: far enough ahead that no real dispatcher expires it.
FIXED_NOW = datetime(2030, 1, 15, 12, 0, 0, tzinfo=UTC)

HOSTILE_SUMMARY = (
    "Cancel your **Fiber 500** plan at the end of this month. "
    "[@click=app.quit]Click here to keep your discount[/] "
    "\x1b[41mINJECTED RED\x1b[0m \x1b]52;c;ZXZpbA==\x07 "
    "[Docs](https://evil.example) <b>bold?</b> order \u202eEXE.txt"
)


async def wait_for(
    pilot, condition, timeout: float = 10.0, step: float = 0.05, describe=None
) -> Any:
    """Let the app run until `condition()` holds; fail after `timeout` seconds, with `describe()`
    (what the screen shows, say) in the message when given (tests/waiting.py, stepping with the
    Pilot's pause so the app handles its messages and timers meanwhile)."""
    return await wait_until(
        condition, timeout=timeout, step=step, describe=describe, pause=pilot.pause
    )


def record_notifications(app) -> list[str]:
    """The messages of every notification (toast) the app is asked for from now on, in order:
    Textual keeps its own list private, and drops a toast from it once its timeout is over."""
    said: list[str] = []
    notify = app.notify

    def recording(message: str, *args: Any, **kwargs: Any) -> Any:
        said.append(str(message))
        return notify(message, *args, **kwargs)

    app.notify = recording
    return said


def busy_workers(app) -> list[Any]:
    """The app's short-lived workers still running: a screen's load, the checks' thread, the network
    preparation. The dispatcher runs for the app's whole life, so it is never "done"."""
    return [w for w in app.workers if w.group != "dispatcher" and not w.is_finished]


async def workers_done(pilot, timeout: float = 10.0) -> None:
    """Let the app's short-lived workers finish and what they posted be handled: after a key that
    re-reads the store, say, before asserting what the screen shows (or does not show)."""
    app = pilot.app
    await pilot.pause()
    await wait_for(
        pilot,
        lambda: (
            not busy_workers(app)
            and not any(getattr(s, "checking", False) for s in app.screen_stack)
        ),
        timeout,
        describe=lambda: f"still running: {[w.name or w.group for w in busy_workers(app)]}",
    )
    await pilot.pause()


async def started(pilot, timeout: float = 10.0) -> None:
    """Wait until what follows the first frame has run: notifications watch the store, the network
    preparation is over (so a real Agent's dispatcher is started)."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: getattr(app, "watcher", None) is not None,
        timeout,
        describe=lambda: "notifications never started",
    )
    await workers_done(pilot, timeout)


async def review_shown(pilot, timeout: float = 10.0) -> Any:
    """After app.open_review(row): wait until the review shows its revision and its load is over."""
    from poppy_tui.ui.screens.review import ReviewScreen

    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, ReviewScreen) and app.screen.shown_revision_id is not None,
        timeout,
        describe=lambda: f"the screen is {type(app.screen).__name__}",
    )
    await workers_done(pilot, timeout)
    return app.screen


async def screen_up(pilot, kind: type, timeout: float = 10.0, describe=None) -> Any:
    """Wait until the app's screen is a `kind` and is mounted, and return it. A pushed screen is
    app.screen before its compose has run; once it is mounted (after Compose and Mount, which waits
    for every child), what it composed is there to query."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, kind) and app.screen.is_mounted,
        timeout,
        describe=describe
        or (lambda: f"the screen is {type(app.screen).__name__}, mounted: {app.screen.is_mounted}"),
    )
    return app.screen


async def poll_seen(pilot, timeout: float = 10.0) -> None:
    """Wait until the app's store poll has seen the latest commit (another process's, or the test's
    own writes through a second Store), and the screens and notifications have handled it."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: app._change_token == app.reader.change_token(),
        timeout,
        describe=lambda: "the store poll has not seen the latest commit",
    )
    await workers_done(pilot, timeout)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def company_document(
    name: str,
    port: int,
    *,
    api: bool = True,
    mcp: bool = False,
    talk: bool = False,
    operations: bool = True,
) -> Any:
    host = f"127.0.0.1:{port}"
    doc: dict[str, Any] = {
        "protocol_version": "0.4",
        "organization": {"name": name, "domain": host},
        "apis": [],
    }
    if api:
        doc["apis"].append({"type": "openapi", "url": f"http://{host}/openapi.json"})
    if mcp:
        doc["apis"].append({"type": "mcp", "url": f"http://{host}/mcp"})
    if talk:
        doc["agent"] = {
            "protocols": [{"type": "poppy", "endpoint": f"http://{host}/conversations"}]
        }
    if operations:
        doc["extensions"] = {"operations": [{"version": "2"}]}
    return parse_poppy_json(doc, host, allow_loopback_http=True)


def add_company(store: Store, name: str, port: int, **kwargs: Any) -> CompanyRecord:
    return store.upsert_company(f"http://127.0.0.1:{port}", company_document(name, port, **kwargs))


def add_operation(
    store: Store,
    company: CompanyRecord,
    operation_id: str,
    summary: str,
    *,
    terms: dict[str, Any] | None = None,
    expires_at: datetime | None = None,
    revision: str = "r1",
    request: Any = None,
    origin: str = "cli",
    requester: Any = None,
) -> int:
    if request is None:
        # The jacket exchange's request; any other operation asks for its own (named by its id):
        # two operations answering one request are one action, and an approval of one holds the
        # other (Ops 7, agent/store/same_action.py).
        body: dict[str, Any] = {"sku": "stormline-insulated-m"}
        if operation_id != "exc_5Rt2":
            body["ref"] = operation_id
        request = ApiRequest("POST", f"{company.base_url}/api/orders/ord_7Hk2/exchange", body)
    request_id = store.add_request(company.id, request, origin, requester)
    raw: dict[str, Any] = {
        "operation_id": operation_id,
        "revision": revision,
        "summary": summary,
        "expires_at": rfc3339(expires_at or datetime.now(UTC) + timedelta(hours=1)),
    }
    if terms is not None:
        raw["terms"] = terms
    result = store.record_operation(
        company.id, request_id, company.session_id, parse_operation(raw)
    )
    return result.operation_row


def jacket_terms(amount: str = "70.00") -> dict[str, Any]:
    return {
        "order_id": "ord_7Hk2",
        "item_id": "itm_4Qa",
        "replacement_sku": "stormline-insulated-m",
        "price_difference": {"amount": amount, "currency": "USD"},
    }


JACKET_SUMMARY = (
    "Exchange the **Stormline Jacket (M)** on order ord_7Hk2 for the Stormline Insulated Jacket (M), "
    "for $70.00 more, charged to the card used for the order."
)


def send_through(
    store: Store,
    row: int,
    now: datetime,
    final: Status,
    detail: str,
    response: Any = None,
    http_status: int | None = 200,
) -> None:
    """Play the dispatcher's part: claim, attempt, and settle, as the engine records them."""
    record = store.get_operation(row)
    if record.status != Status.APPROVED:
        store.approve(row, record.current.id, grace_seconds=0, now=now)
    claimed = store.claim_due(
        "test-dispatcher", 30, now=now + timedelta(seconds=1), operation_row=row
    )
    assert claimed is not None
    attempt = store.start_attempt(row, "test-dispatcher")
    outcome = {Status.PERFORMED: "performed", Status.NOT_PERFORMED: "not_performed"}.get(
        final, "unknown"
    )
    store.finish_attempt(
        attempt.id,
        outcome,
        http_status,
        response,
        None if final != Status.OUTCOME_UNKNOWN else detail,
    )
    store.settle(row, "test-dispatcher", final, response, detail)


def build_sample(store: Store, now: datetime = FIXED_NOW) -> dict[str, int]:
    """Three Companies; operations in every state the screens show."""
    manzanita = add_company(store, "Manzanita Outfitters", 8401, api=True, mcp=True, talk=True)
    larkspur = add_company(store, "Larkspur Air", 8402)
    tidewater = add_company(store, "Tidewater Telecom", 8403, api=False, mcp=True, operations=True)
    add_company(store, "Juniper Books", 8404, operations=False, talk=True)
    rows: dict[str, int] = {}
    rows["jacket"] = add_operation(
        store,
        manzanita,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=now + timedelta(minutes=15),
        revision="1791487200-k3Jd9Qx2mW8v",
        # Asked for by an agent through the gate (its first request), as its client says it is.
        origin="mcp",
        requester=Requester("laptop", "Claude Code", "2.1.0"),
    )
    # The order as the Company answered its GET just before (the review's "Now" section).
    from poppy_tui.agent.store.resource_reads import ResourceRead

    store.save_resource_read(
        ResourceRead(
            rows["jacket"],
            store.get_operation(rows["jacket"]).current.id,
            f"GET {manzanita.base_url}/api/orders/ord_7Hk2",
            now - timedelta(seconds=12),
            True,
            {
                "order_id": "ord_7Hk2",
                "status": "delivered",
                "items": [
                    {
                        "item_id": "itm_4Qa",
                        "name": "Stormline Jacket (M)",
                        "price": {"amount": "129.00", "currency": "USD"},
                        "status": "delivered",
                    },
                    {
                        "item_id": "itm_9Lm",
                        "name": "Trail Socks",
                        "price": {"amount": "14.00", "currency": "USD"},
                        "status": "delivered",
                    },
                ],
                "total": {"amount": "143.00", "currency": "USD"},
            },
        )
    )
    rows["flight"] = add_operation(
        store,
        larkspur,
        "chg_LA118",
        "Move your flight LA118 from 20 January to **22 January**, for a change fee of $45.00.",
        terms={
            "booking": "LA118-QX",
            "new_date": "2030-01-22",
            "change_fee": {"amount": "145.00", "currency": "USD"},
        },
        expires_at=now + timedelta(seconds=40),
        request=ApiRequest(
            "POST", f"{larkspur.base_url}/api/bookings/LA118-QX/change", {"new_date": "2030-01-22"}
        ),
    )
    rows["hostile"] = add_operation(
        store,
        tidewater,
        "can_77Z",
        HOSTILE_SUMMARY,
        terms={"plan": "fiber-500", "effective": "2030-01-31"},
        expires_at=now + timedelta(hours=3),
        request=McpRequest(f"{tidewater.base_url}/mcp", "cancel_plan", {"plan": "fiber-500"}),
    )
    # On their way: one in its grace period, one whose outcome nobody knows.
    rows["approved"] = add_operation(
        store,
        manzanita,
        "ret_2Bx",
        "Return the Trailhead Beanie on order ord_9Pq for a refund of $24.00.",
        terms={"order_id": "ord_9Pq", "refund": {"amount": "24.00", "currency": "USD"}},
        expires_at=now + timedelta(hours=2),
        request=ApiRequest(
            "POST", f"{manzanita.base_url}/api/orders/ord_9Pq/returns", {"item": "trailhead-beanie"}
        ),
    )
    store.approve(
        rows["approved"], store.get_operation(rows["approved"]).current.id, grace_seconds=5, now=now
    )
    rows["unknown"] = add_operation(
        store,
        larkspur,
        "seat_4C",
        "Upgrade seat 14C to 4C on LA220 for $89.00.",
        terms={"flight": "LA220", "seat": "4C", "price": {"amount": "89.00", "currency": "USD"}},
        expires_at=now + timedelta(hours=1),
        request=ApiRequest(
            "POST", f"{larkspur.base_url}/api/bookings/LA220-ZT/seat", {"seat": "4C"}
        ),
    )
    send_through(
        store,
        rows["unknown"],
        now,
        Status.OUTCOME_UNKNOWN,
        "no definite answer within the retry window (connection dropped after sending)",
        http_status=None,
    )
    # History.
    rows["performed"] = add_operation(
        store,
        manzanita,
        "exc_1Aa",
        "Exchange the Ridge Gloves (S) for size M, no extra charge.",
        terms={"order_id": "ord_1Aa", "price_difference": {"amount": "0.00", "currency": "USD"}},
        expires_at=now + timedelta(hours=1),
        request=ApiRequest(
            "POST", f"{manzanita.base_url}/api/orders/ord_1Aa/exchange", {"size": "M"}
        ),
    )
    send_through(
        store,
        rows["performed"],
        now,
        Status.PERFORMED,
        "performed (HTTP 200)",
        {"exchange_id": "xch_88", "status": "confirmed"},
    )
    rows["declined"] = add_operation(
        store,
        tidewater,
        "add_TV",
        "Add the Sports TV package for $19.99 a month, starting today.",
        terms={"package": "sports-tv", "monthly": {"amount": "19.99", "currency": "USD"}},
        expires_at=now + timedelta(hours=1),
        request=McpRequest(f"{tidewater.base_url}/mcp", "add_package", {"package": "sports-tv"}),
    )
    store.decline(rows["declined"], store.get_operation(rows["declined"]).current.id)
    rows["expired"] = add_operation(
        store,
        larkspur,
        "bag_2X",
        "Add a second checked bag to LA118 for $35.00.",
        terms={"booking": "LA118-QX", "price": {"amount": "35.00", "currency": "USD"}},
        expires_at=now + timedelta(seconds=10),
    )
    store.expire_due(now=now + timedelta(seconds=20))
    rows["not_performed"] = add_operation(
        store,
        manzanita,
        "exc_0Zz",
        "Exchange the Canyon Shorts for the Canyon Pants, $15.00 more.",
        terms={"order_id": "ord_0Zz", "price_difference": {"amount": "15.00", "currency": "USD"}},
        expires_at=now + timedelta(hours=1),
        request=ApiRequest(
            "POST", f"{manzanita.base_url}/api/orders/ord_0Zz/exchange", {"sku": "canyon-pants"}
        ),
    )
    send_through(
        store,
        rows["not_performed"],
        now,
        Status.NOT_PERFORMED,
        "the Company refused: out of stock",
        {"error": "out_of_stock"},
        http_status=409,
    )
    return rows


def freeze_times(path: Path, now: datetime = FIXED_NOW) -> None:
    """Rewrite every stored timestamp onto a fixed timeline, so screenshots don't change run to run."""

    def at(minutes: int) -> str:
        return (now - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    db = sqlite3.connect(path)
    try:
        with db:
            count = db.execute("SELECT max(id) FROM operations").fetchone()[0] or 0
            for op_row in range(1, count + 1):
                base = (count - op_row + 1) * 7
                db.execute(
                    "UPDATE operations SET created_at=?, updated_at=? WHERE id=?",
                    (at(base + 5), at(base), op_row),
                )
                db.execute(
                    "UPDATE revisions SET received_at=? WHERE operation_row=?",
                    (at(base + 5), op_row),
                )
                db.execute("UPDATE revisions SET seen_at=NULL WHERE operation_row=?", (op_row,))
                db.execute(
                    "UPDATE decisions SET decided_at=? WHERE operation_row=?",
                    (at(base + 2), op_row),
                )
                db.execute(
                    "UPDATE attempts SET started_at=?, finished_at=CASE WHEN finished_at IS NULL THEN NULL"
                    " ELSE ? END WHERE operation_row=?",
                    (at(base + 1), at(base), op_row),
                )
                db.execute("UPDATE events SET at=? WHERE operation_row=?", (at(base), op_row))
            db.execute("UPDATE companies SET discovered_at=?, updated_at=?", (at(600), at(600)))
    finally:
        db.close()


def open_agent(database: Path, config: Config | None = None, **overrides: Any) -> Any:
    """The real Agent (agent/agent.py) on the store file `database` (poppy.db in its data folder),
    with a connection of its own as the TUI has; its config `config` (else ui_config()) with
    `overrides`, and a signing key made in memory: the tests never touch the person's keyring. Its
    dispatcher runs in the app, as in use. Close its store when done (tests/ui/conftest.py
    make_agent does)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.paths import Paths

    paths = Paths(config_dir=database.parent / "config", data_dir=database.parent)
    assert paths.database == database, f"the Agent's store is {paths.database}, not {database}"
    chosen = replace(config, **overrides) if config is not None else ui_config(**overrides)
    return Agent.open(paths, chosen, key=ec.generate_private_key(ec.SECP256R1()))


def without_reads(agent: Any) -> Any:
    """The real Agent, but reading no resource from its Companies (agent/resource_read.py): the
    review reads the resource an operation changes when it opens and before an approval, and the
    sample's Companies (build_sample) are not running, so what a snapshot or a screenshot shows
    would depend on what answers on their loopback ports. The screens then show the stored read,
    as with an agent that doesn't read (ui/screens/review_resource.py `_can_read`)."""
    agent.read_resource = None
    return agent


@contextmanager
def agents_on(database: Path) -> Iterator[Callable[..., Any]]:
    """`with agents_on(path) as make_agent:` make_agent(config=None, **overrides) opens the real
    Agent on that store file (open_agent); every one opened is closed when the block ends."""
    made: list[Any] = []

    def make(config: Config | None = None, **overrides: Any) -> Any:
        made.append(open_agent(database, config, **overrides))
        return made[-1]

    try:
        yield make
    finally:
        for agent in made:
            agent.store.close()


def ui_config(**overrides: Any) -> Config:
    base = Config(grace_seconds=30.0, arm_delay_seconds=0.3, min_read_seconds=60.0)
    return replace(base, **overrides)


__all__ = [
    "ConversationRequest",
    "FIXED_NOW",
    "HOSTILE_SUMMARY",
    "add_company",
    "add_operation",
    "build_sample",
    "checks_shown",
    "freeze_times",
    "agents_on",
    "jacket_terms",
    "open_agent",
    "without_reads",
    "record_notifications",
    "ui_config",
]


async def checks_shown(pilot) -> None:
    """Wait until the inbox's badges are in: checks are computed in a thread after the rows show."""
    await wait_for(
        pilot,
        lambda: not any(getattr(s, "checking", False) for s in pilot.app.screen_stack),
        describe="the inbox's checks never finished",
    )
    await pilot.pause()


async def steady(pilot) -> None:
    """Wait until a screen has stopped changing on its own: loaded, armed, cursor not blinking."""
    from textual.widgets import Input

    from poppy_tui.ui.screens.review import ReviewScreen

    app = pilot.app
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    screens = [s for s in app.screen_stack if isinstance(s, ReviewScreen)]
    await checks_shown(pilot)
    await wait_for(
        pilot,
        lambda: all(
            s.record is None or not s.record.status.is_open or s.can_approve() for s in screens
        ),
        describe="a review never became approvable",
    )
    await workers_done(pilot)
    await screens_below_settled(pilot)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def screens_below_settled(pilot) -> None:
    """The screens under the current one (the inbox under Help, the review under a dialog) have
    handled what they were sent and drawn it too: a snapshot shows them through a dialog, and
    pilot.pause() waits only for the screen on top. Under load the inbox's last rows or its
    relayout could still be queued there when the picture was taken."""
    from poppy_tui.ui.widgets.operation_list import OperationTable

    app = pilot.app
    for screen in app.screen_stack[:-1]:
        lists = list(screen.query(OperationTable))
        await wait_for(
            pilot,
            lambda lists=lists: all(table.complete for table in lists),
            describe="a list under the dialog never got all its rows",
        )
        await messages_handled(pilot, screen)


async def messages_handled(pilot, screen) -> None:
    """Every widget of `screen` has handled what was queued for it, and the display was redrawn."""
    pending = 0

    def handled() -> None:
        nonlocal pending
        pending -= 1

    for widget in [screen, *screen.walk_children()]:
        if widget.call_after_refresh(handled):
            pending += 1
    await wait_for(
        pilot, lambda: pending <= 0, describe="a screen under the dialog never handled its messages"
    )
