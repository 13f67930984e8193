"""Notifications while the TUI is open (toast, bell, desktop escape), and the quit dialog for
approvals not sent yet. Driven with Pilot against a real Store."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.config import ConfigError, NotificationSettings, parse_config
from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.notifications import OperationWatcher, desktop_protocol, desktop_sequence
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    poll_seen,
    record_notifications,
    screen_up,
    send_through,
    started,
    ui_config,
    wait_for,
)

SIZE = (120, 36)
HOSTILE_NAME = "Evil\x1b]0;pwned\x07 Co\x9d8;;http://x\x9c;\u202eX"
# What a Company could use to end our OSC string early and start its own.
SEQUENCE_ENDERS = re.compile("[\x1b\x07\x9c\x9d\u202e]")


class RecordingApp(PoppyApp):
    """PoppyApp whose terminal output (the bell, raw escapes) is kept: headless drivers drop it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.bells = 0
        self.written: list[str] = []

    def bell(self) -> None:
        self.bells += 1

    def write_to_terminal(self, sequence: str) -> None:
        self.written.append(sequence)


def with_notifications(desktop: str = "osc9", **flags: bool):
    return replace(ui_config(), notifications=NotificationSettings(desktop=desktop, **flags))


def payloads(sequence: str) -> list[str]:
    """The text between an OSC introducer and its terminator: what a Company could influence."""
    return re.findall(r"\x1b\](?:9;|777;notify;|99;[^;]*;)(.*?)(?:\x07|\x1b\\)", sequence)


# ---- the pieces ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["osc9", "osc777", "osc99"])
def test_no_company_escape_survives_into_the_desktop_notification(protocol):
    sequence = desktop_sequence(
        protocol, "poppy-tui", f"{HOSTILE_NAME} asks for your approval USD 70.00"
    )
    bodies = payloads(sequence)
    assert bodies and all(not SEQUENCE_ENDERS.search(body) for body in bodies)
    # The framing is ours alone: exactly one terminator per notification part.
    assert sequence.count("\x1b]") == (2 if protocol == "osc99" else 1)
    assert "\\x1b]0,pwned\\x07" in sequence  # shown, visibly, not acted on
    if protocol == "osc777":
        assert sequence.count(";") == 3  # a Company's ';' can't add fields


def test_auto_picks_an_escape_the_terminal_shows_and_none_under_a_multiplexer():
    assert desktop_protocol("auto", {"TERM_PROGRAM": "WezTerm"}) == "osc9"
    assert desktop_protocol("auto", {"TERM": "xterm-kitty"}) == "osc99"
    assert desktop_protocol("auto", {"VTE_VERSION": "7600"}) == "osc777"
    assert desktop_protocol("auto", {"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/x"}) == "off"
    assert desktop_protocol("auto", {"TERM": "xterm-256color"}) == "off"
    assert desktop_protocol("osc777", {}) == "osc777"


def test_notification_settings_are_checked():
    assert parse_config(
        {"notifications": {"toast": False, "bell": False, "desktop": "off"}}
    ).notifications == NotificationSettings(toast=False, bell=False, desktop="off")
    for bad in ({"toast": "yes"}, {"desktop": "osc52"}, {"sound": True}):
        with pytest.raises(ConfigError):
            parse_config({"notifications": bad})


def test_the_watcher_reports_new_operations_revisions_and_settled_sends(store: Store):
    company = add_company(store, "Manzanita Outfitters", 8401)
    add_operation(store, company, "old_1", JACKET_SUMMARY, terms=jacket_terms())
    watcher = OperationWatcher(store)
    assert watcher.changes() == []  # the first look only takes note
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    (new,) = watcher.changes()
    assert (new.kind, new.operation_row, new.company, new.amount) == (
        "new_operation",
        row,
        "Manzanita Outfitters",
        "USD 70.00",
    )
    assert watcher.changes() == []
    add_operation(
        store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms("80.00"), revision="r2"
    )
    (changed,) = watcher.changes()
    assert changed.kind == "new_revision" and changed.amount == "USD 80.00"
    send_through(store, row, datetime.now(UTC), Status.OUTCOME_UNKNOWN, "timed out")
    (settled,) = watcher.changes()
    assert settled.kind == "settled" and settled.status == Status.OUTCOME_UNKNOWN
    assert "OUTCOME UNKNOWN" in settled.message and settled.severity == "error"
    store.resolve_unknown(row, performed=True)  # the person's own answer: nothing to announce
    assert watcher.changes() == []


def test_a_new_expiry_only_is_not_announced_as_changed_terms(store: Store):
    """Walk K1: "changed the terms: review again" while the review said "new expiry only"."""
    company = add_company(store, "Manzanita Outfitters", 8401)
    watcher = OperationWatcher(store)
    watcher.changes()
    add_operation(store, company, "can_2", JACKET_SUMMARY, terms=jacket_terms())
    watcher.changes()
    later = datetime.now(UTC) + timedelta(hours=3)
    add_operation(
        store,
        company,
        "can_2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=later,
        revision="r2",
    )
    (changed,) = watcher.changes()
    assert changed.kind == "new_revision" and changed.expiry_only
    assert "sent a new expiry for the same terms" in changed.message
    assert "changed the terms" not in changed.message


# ---- in the TUI ------------------------------------------------------------------------------


async def test_a_new_operation_while_open_gives_a_toast_a_bell_and_a_desktop_notification(
    store, make_agent
):
    company = add_company(store, HOSTILE_NAME, 8401)
    app = RecordingApp(make_agent(config=with_notifications("osc777")))
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
        await wait_for(pilot, lambda: app.bells)
        await poll_seen(pilot)
        toasts = list(notes)
    (toast,) = [m for m in toasts if "asks for your approval" in m]
    assert "USD 70.00" in toast and f"operation {row}" in toast
    assert "\\x1b]0;pwned\\x07" in toast and not SEQUENCE_ENDERS.search(toast)
    assert app.bells == 1
    (sequence,) = app.written
    assert sequence.startswith("\x1b]777;notify;poppy-tui;") and sequence.endswith("\x07")
    assert not any(SEQUENCE_ENDERS.search(body) for body in payloads(sequence))


async def test_a_settled_send_is_announced(store, make_agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    app = RecordingApp(make_agent(config=with_notifications("osc9")))
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        send_through(store, row, datetime.now(UTC), Status.PERFORMED, "performed", {"ok": True})
        await wait_for(pilot, lambda: app.written)
        await poll_seen(pilot)
    assert app.written == [
        f"\x1b]9;poppy-tui: Manzanita Outfitters: performed USD 70.00 (operation {row})\x07"
    ]
    # One toast for one send (walk K5: two said the same).
    sends = [m for m in notes if "performed" in m.lower()]
    assert len(sends) == 1, sends


async def test_every_channel_can_be_turned_off(store, make_agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    app = RecordingApp(make_agent(config=with_notifications("off", toast=False, bell=False)))
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
        # The poll saw the new operation and the notifier was told of it: it stayed quiet.
        await poll_seen(pilot)
        await wait_for(pilot, lambda: app.screen.query_one("#pending-table").row_count == 1)
        toasts = list(notes)
    assert app.bells == 0 and app.written == []
    assert not any("asks for your approval" in m for m in toasts)


# ---- quitting with approvals not sent --------------------------------------------------------


def approved_in_grace(store) -> int:
    """An approval in a 10-minute grace period: not sent yet, so quitting must ask."""
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    store.approve(row, store.get_operation(row).current.id, grace_seconds=600)
    return row


async def test_quit_with_an_approval_in_its_grace_period_asks_first(store, make_agent):
    from poppy_tui.ui.screens.quit_dialog import QuitScreen

    row = approved_in_grace(store)
    app = PoppyApp(make_agent())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        assert app.is_running
        await pilot.press("escape")  # don't quit
        await wait_for(pilot, lambda: not isinstance(app.screen, QuitScreen))
        assert app.is_running
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        await pilot.press("l")  # leave it queued
        await wait_for(pilot, lambda: not app.is_running)
    assert (
        store.get_operation(row).status == Status.APPROVED
    )  # still queued for the next dispatcher


async def test_quit_and_send_waits_until_the_approval_has_an_answer(make_agent, start):
    """The real dispatcher sends the approval to the demo Company, which takes 3 s to perform it:
    the quit dialog says it is sending until the answer is in, then the app quits."""
    from poppy_tui.ui.screens.quit_dialog import QuitScreen

    shop = start("perform_seconds=3")
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    asked = await agent.call_api(
        company,
        "POST",
        "/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    row = asked.operation_row
    agent.store.approve(row, agent.store.get_operation(row).current.id, grace_seconds=600)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        await pilot.press("s")  # send now: the grace period is cut short
        await wait_for(
            pilot,
            lambda: "Sending... 1 left" in str(app.screen.query_one("#quit-progress").render()),
        )
        assert isinstance(app.screen, QuitScreen) and app.is_running  # still sending
        await wait_for(pilot, lambda: not app.is_running, 30, describe=lambda: "the app quit")
    assert agent.store.get_operation(row).status == Status.PERFORMED
    assert shop.state.performed("exc_5Rt2") == 1


async def test_quit_with_nothing_in_flight_quits_at_once(store, make_agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    add_operation(
        store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms()
    )  # pending: not ours to send
    app = PoppyApp(make_agent())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)


# ---- in a real terminal --------------------------------------------------------------------------


@pytest.mark.slow
def test_in_a_real_terminal_no_company_escape_reaches_it(tmp_path):
    """poppy-tui in a pseudo-terminal, a hostile Company's operation arriving while it is open:
    every byte the terminal gets is checked, the desktop notification's payload included."""
    import sys

    if sys.platform == "win32":
        pytest.skip("POSIX pseudo-terminal")
    from poppy_tui.agent.paths import resolve_paths
    from tests.cli.cli_support import Terminal

    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        'key_storage = "file"\n[notifications]\ndesktop = "osc9"\n'
    )
    paths = resolve_paths(home)
    paths.ensure()
    with Store.open(paths.database) as store:
        company = add_company(store, HOSTILE_NAME, 8401)
    terminal = Terminal(home=home)
    try:
        terminal.read_until("Inbox|inbox", timeout=60)
        with Store.open(paths.database) as store:
            add_operation(
                store, company, "exc_5Rt2", "Pay\x1b]52;c;cGF5\x07 now", terms=jacket_terms()
            )
        terminal.read_until("asks for your approval", timeout=60)
        deadline = 50
        while b"\x1b]9;" not in terminal.seen and deadline:
            terminal._read(0.2)
            deadline -= 1
        raw = terminal.seen.decode("utf-8", "replace")
    finally:
        terminal.close()
    (notification,) = re.findall(r"\x1b\]9;([^\x07]*)\x07", raw)
    assert "asks for your approval USD 70.00" in notification
    assert not SEQUENCE_ENDERS.search(notification)
    # Nothing the Company wrote ran as an escape anywhere on screen: no title set, no clipboard write.
    assert "\x1b]0;pwned" not in raw and "\x1b]52;" not in raw and "\x9d" not in raw


async def test_a_send_seen_on_its_way_gets_one_toast_not_two(store, make_agent):
    """Walk K5: "Performed: … confirmed it did this" and "…: performed USD 10.00" for one send."""
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    store.approve(row, store.get_operation(row).current.id, grace_seconds=3600)
    agent = make_agent(config=with_notifications("off"))
    agent.run_dispatcher = None  # the test plays the send (send_through); nothing else may claim it
    app = RecordingApp(agent)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        await poll_seen(pilot)
        store.send_now([row])
        send_through(store, row, datetime.now(UTC), Status.PERFORMED, "performed", {"ok": True})
        await wait_for(pilot, lambda: any("erformed" in m for m in notes))
        await poll_seen(pilot)
        await poll_seen(pilot)
    sends = [m for m in notes if "erformed" in m]
    assert len(sends) == 1 and sends[0].startswith("Performed: Manzanita Outfitters"), sends
