"""Inbox, history, companies, help, themes and start-up, driven with Pilot against a real Store."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from textual.widgets import DataTable, Input, OptionList, Select

from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.help import HelpScreen
from poppy_tui.ui.screens.history import PAGE_SIZE, SUMMARY_BESIDE_OPTIONAL
from poppy_tui.ui.screens.history_detail import HistoryDetailScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    build_sample,
    checks_shown,
    jacket_terms,
    record_notifications,
    screen_up,
    started,
    wait_for,
)

SIZE = (120, 36)


def table_text(table: DataTable) -> str:
    return "\n".join(
        " | ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)
    )


def plain_text(renderable) -> str:
    """What a Static shows, whether a Content, a str or a Rich renderable (the help's tables)."""
    from rich.console import Console

    if isinstance(renderable, str) or hasattr(renderable, "plain"):
        return str(getattr(renderable, "plain", renderable))
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def shown_text_once(pilot, app, marker: str, timeout: float = 10.0) -> str:
    """The screen's text once `marker` is in it (the record builds after the screen mounts)."""

    def text() -> str:
        return " ".join(str(w.render()) for w in app.screen.query("Static"))

    return await wait_for(
        pilot,
        lambda: marker in (shown := text()) and shown,
        timeout,
        describe=lambda: f"{marker!r} shown; the screen says {text()!r}",
    )


async def settle(pilot) -> None:
    """Let what the start or the last key set going finish: the first frame's follow-ups, the
    screens' workers (loads, pages, the checks' thread) and what they posted."""
    await started(pilot)
    await checks_shown(pilot)


async def test_inbox_shows_operations_another_process_writes_while_running(store, agent, tmp_path):
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pending = app.screen.query_one("#pending-table", OperationTable)
        assert pending.row_count == 0
        assert app.screen.query_one("#pending-empty").display
        with Store.open(tmp_path / "poppy.db") as other:  # a CLI agent's own connection
            company = add_company(other, "Manzanita Outfitters", 8401)
            add_operation(other, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
        await wait_for(pilot, lambda: pending.row_count)
        assert pending.row_count == 1
        await checks_shown(pilot)  # the amount comes with the checks, computed after the row shows
        text = table_text(pending)
        assert "Manzanita Outfitters" in text and "USD 70.00" in text and "API" in text
        assert not app.screen.query_one("#pending-empty").display


async def test_a_first_start_with_no_company_says_how_to_begin(store, agent, tmp_path):
    # The empty inbox said only that approvals appear here, and offered Enter with nothing to open.
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#pending-empty")
        said = " ".join(str(empty.render()).split())
        assert (
            "no Company is added yet" in said
            and "Press c for Companies" in said
            and "poppy-tui --demo" in said
        )
        assert not app.screen.query_one("#inbox-hint").display
        with Store.open(tmp_path / "poppy.db") as other:  # a CLI agent adds one meanwhile
            add_company(other, "Manzanita Outfitters", 8401)
        await wait_for(pilot, lambda: "no Company" not in str(empty.render()), timeout=5)
        assert " ".join(str(empty.render()).split()).startswith(
            "Nothing is waiting for you. When a Company asks"
        )
        await pilot.press("c")
        await wait_for(
            pilot,
            lambda: "Manzanita Outfitters" in table_text(app.screen.query_one("#companies-table")),
        )


async def test_inbox_sections_badges_countdowns_and_enter_opens_review(store, make_agent):
    rows = build_sample(store)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pending = app.screen.query_one("#pending-table", OperationTable)
        progress = app.screen.query_one("#progress-table", OperationTable)
        assert set(pending.items) == {
            str(rows["jacket"]),
            str(rows["flight"]),
            str(rows["hostile"]),
        }
        assert set(progress.items) == {str(rows["approved"]), str(rows["unknown"])}
        # Soonest expiry first; its countdown and its danger badge are in words.
        first = " | ".join(str(c) for c in pending.get_row_at(0))
        assert "Larkspur Air" in first and "40s" in first and "DANGER" in first
        hostile = " | ".join(str(c) for c in pending.get_row(str(rows["hostile"])))
        assert "\x1b" not in hostile and "Fiber 500" in hostile
        assert "OUTCOME UNKNOWN" in table_text(progress)
        assert "sends in 5s" in table_text(progress)
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen)
        assert app.screen.operation_row == rows["flight"]


async def test_history_filters_by_status_company_and_text(store, make_agent):
    rows = build_sample(store)
    app = PoppyApp(make_agent(), initial_screen="history", clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        assert table.row_count == len(rows) == screen.total
        screen.query_one("#history-status", Select).value = "declined"
        await wait_for(pilot, lambda: [r.id for r in screen.rows] == [rows["declined"]])
        await settle(pilot)
        assert "declined" in table_text(table)
        screen.query_one("#history-status", Select).value = "progress"
        await wait_for(
            pilot, lambda: {r.id for r in screen.rows} == {rows["approved"], rows["unknown"]}
        )
        await settle(pilot)
        screen.query_one("#history-status", Select).clear()
        larkspur = store.find_company("Larkspur Air")
        screen.query_one("#history-company", Select).value = larkspur.id
        await wait_for(
            pilot,
            lambda: {r.company_id for r in screen.rows} == {larkspur.id} and len(screen.rows) == 3,
        )
        await settle(pilot)
        screen.query_one("#history-company", Select).clear()
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"Beanie")
        await wait_for(
            pilot, lambda: [r.id for r in screen.rows] == [rows["approved"]]
        )  # after the debounce
        await settle(pilot)
        assert "approved\nvia API" in table_text(table)  # the decision, not a cut revision id
        await pilot.press("enter")  # leaves the search box for the table
        await wait_for(pilot, lambda: isinstance(app.focused, DataTable))
        await pilot.press("enter")
        await screen_up(pilot, HistoryDetailScreen)


@pytest.mark.parametrize("width", [180, 200, 220, 250])
async def test_history_on_a_wide_terminal_adds_decided_and_outcome_only_beside_a_wide_summary(
    store, width, make_agent
):
    # At 200 columns both columns used to join at once and left the summary 30 cells, narrower
    # than at 180 (68): the terminal grew and the one column that says what was done shrank.
    build_sample(store)
    app = PoppyApp(make_agent(), initial_screen="history", clock=lambda: FIXED_NOW)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#history-table", DataTable)
        widths = {str(c.label): c.width for c in table.columns.values()}
        assert widths["Summary"] >= SUMMARY_BESIDE_OPTIONAL
        # Everything fits: nothing scrolls sideways, whatever joined.
        assert sum(widths.values()) + 2 * len(widths) <= width - 2
        joined = {"Decided", "Outcome"} & widths.keys()
        assert (
            joined
            # (Via also says who asked, 16 cells: Decided joins from 220 on, not 200.)
            == {180: set(), 200: set(), 220: {"Decided"}, 250: {"Decided", "Outcome"}}[width]
        )


async def test_history_detail_shows_every_revision_decision_attempt_and_event(store, make_agent):
    rows = build_sample(store)
    company = store.find_company("Manzanita Outfitters")
    add_operation(
        store,
        company,
        "exc_5Rt2",
        "Exchange it for $95.00 more.",
        terms=jacket_terms("95.00"),
        revision="r2",
    )
    app = PoppyApp(make_agent())
    async with app.run_test(size=SIZE) as pilot:
        app.open_history_detail(rows["jacket"])
        text = await shown_text_once(pilot, app, "Revisions (")
        assert "Revisions (2)" in text and "$95.00" in text and "$70.00" in text
        app.open_history_detail(rows["performed"])
        text = await shown_text_once(pilot, app, "Decisions (")
        assert "Decisions (1)" in text and "approved" in text
        assert "#1" in text and "performed" in text and "xch_88" in text
        assert "Events (" in text and "attempt" in text
        assert app.screen.check_action("open_review", ()) is False


async def test_history_pages_instead_of_loading_everything(store, make_agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    for i in range(PAGE_SIZE + 7):
        add_operation(store, company, f"op_{i:03d}", f"Operation number {i}")
    app = PoppyApp(make_agent(), initial_screen="history")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        assert table.row_count == PAGE_SIZE and screen.total == PAGE_SIZE + 7 and screen.pages == 2
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: table.row_count == 7 and screen.page == 1)
        await settle(pilot)
        assert "page 2 of 2" in str(screen.query_one("#history-pager").render())
        await pilot.press("right_square_bracket")  # no page 3
        await settle(pilot)
        assert screen.page == 1
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: table.row_count == PAGE_SIZE and screen.page == 0)


async def test_companies_view_lists_interfaces_and_extension_support(store, make_agent):
    build_sample(store)
    app = PoppyApp(make_agent(), initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = table_text(app.screen.query_one("#companies-table", DataTable))
        lines = {line.split(" | ")[0]: line for line in text.splitlines()}
        assert set(lines) == {
            "Manzanita Outfitters",
            "Larkspur Air",
            "Tidewater Telecom",
            "Juniper Books",
        }
        assert (
            "API, MCP, conversation" in lines["Manzanita Outfitters"]
            and "| yes |" in lines["Manzanita Outfitters"]
        )
        assert "| MCP |" in lines["Tidewater Telecom"]
        assert "| no" in lines["Juniper Books"]


async def test_hostile_company_name_is_shown_literally_everywhere(store, make_agent):
    company = add_company(store, "Evil [@click=app.quit]\x1b[2J", 8409)
    add_operation(store, company, "exc_1", "Do a thing for $5.00.")
    app = PoppyApp(make_agent())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        inbox = table_text(app.screen.query_one("#pending-table", DataTable))
        assert "Evil [@c" in inbox and "\x1b" not in inbox  # cut to its column, with a marker
        await pilot.press("c")
        await wait_for(
            pilot, lambda: "Evil" in table_text(app.screen.query_one("#companies-table", DataTable))
        )
        companies = table_text(app.screen.query_one("#companies-table", DataTable))
        assert "Evil [@click=app.quit]\\x1b[2J" in companies and "\x1b" not in companies


async def test_help_lists_every_binding_with_its_id(store, agent):
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await screen_up(pilot, HelpScreen)
        await settle(pilot)
        text = " ".join(plain_text(w.content) for w in app.screen.query("Static"))
        for binding_id in (
            "approve",
            "decline",
            "withdraw",
            "resolve",
            "confirm_approve",
            "cancel_approve",
            "next_page",
            "send_request",
            "talk_to_company",
            "refresh_conversation",
        ):
            assert binding_id in text
        assert "Enter never approves" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_navigation_keys_do_nothing_behind_a_dialog(store, agent):
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await screen_up(pilot, HelpScreen)
        await settle(pilot)
        await pilot.press("h")
        await settle(
            pilot
        )  # the key was handled (press waits for that), and nothing it set going is left
        assert isinstance(app.screen, HelpScreen) and app.current_mode == "inbox"


@pytest.mark.parametrize("theme", ["nord", "textual-light"])
async def test_theme_comes_from_config(store, theme, make_agent):
    app = PoppyApp(make_agent(theme=theme))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == theme


async def test_unknown_theme_falls_back_without_crashing(store, make_agent):
    app = PoppyApp(make_agent(theme="no-such-theme"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme in app.available_themes


async def test_startup_is_measured_and_store_work_waits_for_first_paint(store, agent):
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.startup_ms is not None and app.startup_ms > 0
        assert app.screen.loaded


def test_importing_the_ui_package_does_not_import_textual():
    code = (
        "import sys, json, poppy_tui.ui, poppy_tui.ui.format, poppy_tui.ui.schema_forms;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


async def test_approved_operation_moves_to_in_progress(store, agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pending = app.screen.query_one("#pending-table", OperationTable)
        progress = app.screen.query_one("#progress-table", OperationTable)
        assert str(row) in pending.items
        agent.approve(row, store.get_operation(row).current.id)
        await wait_for(pilot, lambda: str(row) in progress.items)
        assert str(row) in progress.items and str(row) not in pending.items
        assert store.get_operation(row).status == Status.APPROVED


async def test_composer_and_talk_preselect_the_only_company(store, make_agent):
    company = add_company(store, "Juniper Books", 8404, talk=True)
    app = PoppyApp(make_agent(), initial_screen="talk")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.query_one("#talk-company", Select).value == company.id
        add_company(store, "Larkspur Air", 8402, talk=True)
        # A second Company appears without replacing the choice.
        select = app.screen.query_one("#talk-company", Select)
        options = select.query_one(OptionList)  # the Select's drop-down list
        await wait_for(pilot, lambda: options.option_count == 3)  # blank + two
        await settle(pilot)
        assert select.value == company.id and options.option_count == 3


async def test_a_failed_dispatcher_is_reported_and_started_again(store, monkeypatch, make_agent):
    import poppy_tui.ui.app as app_module

    monkeypatch.setattr(app_module, "DISPATCHER_RESTART_SECONDS", 0.2)
    starts: list[int] = []
    agent = make_agent()

    async def failing_dispatcher(stop):  # the real Agent's, failing as a broken network would
        starts.append(1)
        raise RuntimeError("network \x1b[2J gone")

    agent.run_dispatcher = failing_dispatcher
    app = PoppyApp(agent)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        # Waits for behaviour, not for a time: a loaded machine may take several seconds
        # to run the restart timer twice.
        # The restart and its toast are separate messages: wait for both, not just the first.
        await wait_for(
            pilot,
            lambda: len(starts) >= 2 and any("Sending stopped" in m for m in notes),
            20,
            describe=lambda: f"{len(starts)} starts, toasts {notes}",
        )
        messages = list(notes)
        assert any("Sending stopped" in m and "\\x1b" in m and "\x1b" not in m for m in messages)


@pytest.mark.parametrize("mode", ["talk", "compose"])
async def test_escape_leaves_talk_and_the_composer_even_while_typing(store, mode, make_agent):
    from poppy_tui.ui.screens.inbox import InboxScreen

    app = PoppyApp(make_agent(), initial_screen=mode)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await screen_up(pilot, InboxScreen)
