"""A person's first ten minutes: narrow layouts, one navigation model, deliberate declining,
what the screens say (docs/tui.md: "Narrow terminals", "Getting around", "Approving is
deliberate"). Driven with Pilot against a real Store, at 80x24, the size the screens are laid
out for, and at 160x48."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import DataTable, Input, OptionList, Select

from poppy_tui.agent.config import load_config_file
from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.format import checks_summary, local_time, plural, possessive
from poppy_tui.ui.safe import fit_line, wrapped_first_line
from poppy_tui.ui.screens.companies import CompaniesScreen
from poppy_tui.ui.screens.composer import ComposerScreen
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.conversation import ConversationScreen
from poppy_tui.ui.screens.help import HelpScreen
from poppy_tui.ui.screens.history import STATUS_FILTERS, HistoryScreen
from poppy_tui.ui.screens.inbox import InboxScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.theme_setting import with_theme
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    build_sample,
    jacket_terms,
    record_notifications,
    review_shown,
    screen_up,
    send_through,
    started,
    wait_for,
)

NARROW = (80, 24)
WIDE = (160, 48)


@pytest.fixture
def make_app(make_agent):
    """make_app(store, **config): the app on the real Agent over the store fixture's file."""

    def make(store, **config) -> PoppyApp:
        return PoppyApp(make_agent(**config), clock=lambda: FIXED_NOW)

    return make


async def settle(pilot) -> None:
    """Let what the start or the last key set going finish: the first frame's follow-ups, the
    screens' workers (loads, the checks' thread) and what they posted."""
    await started(pilot)


def row_text(table: DataTable, index: int) -> str:
    return " | ".join(str(c) for c in table.get_row_at(index))


# ---- 1-2: layouts at 80x24 --------------------------------------------------------------------


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_inbox_shows_every_waiting_row_and_no_sideways_scrollbar(store, size, make_app):
    build_sample(store)
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#pending-table", OperationTable)
        assert table.row_count == 3
        lines = sum(row.height for row in table.rows.values())
        assert table.size.height == lines + 1  # every row and the header: nothing hidden below
        assert not table.show_horizontal_scrollbar
        assert table.virtual_size.width <= table.size.width
        # The summary has the width that is left, not three letters.
        summary = next(c for k, c in table.columns.items() if k.value == "summary")
        assert summary.width >= 28


async def test_at_80_columns_the_summary_wraps_so_rows_read_differently(store, make_app):
    company = add_company(store, "Manzanita Outfitters", 8401)
    start = "Move your jacket fitting (bkg_2Fm8) at Manzanita Outfitters Portland from Sat, Dec 5 at 10:00 AM to "
    add_operation(
        store,
        company,
        "bkc_1",
        start + "Fri, Dec 4 at 2:00 PM.",
        expires_at=FIXED_NOW + timedelta(minutes=9),
    )
    add_operation(
        store,
        company,
        "bkc_2",
        start + "Mon, Dec 7 at 11:30 AM.",
        expires_at=FIXED_NOW + timedelta(minutes=8),
    )
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#pending-table", OperationTable)
        shown = [row_text(table, i).replace("\n", " ") for i in range(2)]
        assert "Mon, Dec 7" in shown[0] and "Fri, Dec 4" in shown[1]


async def test_history_rows_at_80_columns_carry_their_summaries(store, make_app):
    company = add_company(store, "Manzanita Outfitters", 8401)
    add_operation(store, company, "exc_1", "Exchange the socks for size L.")
    add_operation(store, company, "cnl_1", "Cancel the Trailhead Coffee Club.")
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, HistoryScreen)
                and app.screen.query_one("#history-table", DataTable).row_count == 2
            ),
        )
        await settle(pilot)
        table = app.screen.query_one("#history-table", DataTable)
        rows = {row_text(table, i) for i in range(table.row_count)}
        assert len(rows) == 2
        assert any("socks" in r for r in rows) and any("Coffee" in r for r in rows)
        assert table.virtual_size.width <= table.size.width  # nothing scrolls sideways


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_help_dialog_fits_the_screen(store, size, make_app):
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        dialog = app.screen.query_one("#help-dialog")
        assert dialog.region.right <= size[0] and dialog.region.x >= 0


async def test_the_navigation_bar_names_every_screen_at_80_columns(store, make_app):
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        bar = str(app.screen.query_one("#title-bar").render())
        for label in ("Inbox", "History", "Companies", "New", "Talk"):
            assert label in bar
        assert len(bar.splitlines()[0]) <= 80


def test_a_truncation_marker_is_never_longer_than_what_it_hides():
    assert fit_line("application", 8) == "applica…"  # one character hidden, one shown for it
    long = fit_line("a" * 100, 40)
    assert len(long) == 40 and long.endswith("…(+72 chars)")
    # A marker that would crowd out the text gives way to a bare ellipsis.
    assert fit_line("refund of USD 24.00 to the card", 12) == "refund of U…"
    assert fit_line("short", 20) == "short"


def test_a_wrapped_summary_keeps_the_part_that_differs():
    start = "Move your fitting at Manzanita Outfitters Portland from Sat, Dec 5 at 10:00 AM to "
    one = wrapped_first_line(start + "Fri, Dec 4 at 2:00 PM.", 30, 4)
    two = wrapped_first_line(start + "Mon, Dec 7 at 11:30 AM.", 30, 4)
    assert one != two and "Fri, Dec 4" in one.replace("\n", " ")
    assert all(len(line) <= 30 for line in one.splitlines()) and len(one.splitlines()) <= 4


# ---- 3-4: navigation --------------------------------------------------------------------------


async def test_a_global_key_always_shows_its_screen_at_the_top(store, make_app):
    company = add_company(store, "Manzanita Outfitters", 8401, talk=True)
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompaniesScreen)
        await pilot.press("t")  # talk to the highlighted Company
        await settle(pilot)
        assert isinstance(app.screen, ConversationScreen)
        assert app.screen.query_one("#talk-company", Select).value == company.id
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompaniesScreen)  # not the Talk screen it once led to


async def test_a_review_left_with_a_global_key_is_closed_on_the_way(store, make_app):
    rows = build_sample(store)
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        app.open_review(rows["jacket"])
        await review_shown(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("h")
        await screen_up(pilot, HistoryScreen)
        await settle(pilot)
        await pilot.press("i")
        await screen_up(pilot, InboxScreen)
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen)
        assert len(app.screen_stack) == 1


async def test_letters_typed_on_new_request_never_navigate_or_quit(store, make_app):
    add_company(store, "Manzanita Outfitters", 8401)
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ComposerScreen)
        screen.query_one("#composer-actions", OptionList).focus()  # outside any text field
        await pilot.press(*"itm_4Qa", "h", "c", "q")
        await settle(pilot)
        assert app.screen is screen and app.is_running
        await pilot.press("escape")  # the way out is Esc
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen)


async def test_esc_leaves_the_history_search_box_so_keys_are_keys_again(store, make_app):
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("h")
        await settle(pilot)
        await pilot.press("slash", "x")
        search = app.screen.query_one("#history-search", Input)
        await wait_for(pilot, lambda: search.value == "x")
        assert app.focused is search
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.focused is app.screen.query_one("#history-table"))
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen) and search.value == "x"


async def test_new_request_from_companies_and_back_with_n_keeps_the_company(store, make_app):
    add_company(store, "Larkspur Air", 8402)
    company = add_company(store, "Manzanita Outfitters", 8401)
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        table = app.screen.query_one("#companies-table", DataTable)
        table.move_cursor(row=[c.id for c in app.screen.companies].index(company.id))
        await pilot.press("enter")
        await settle(pilot)
        composer = app.screen
        assert isinstance(composer, ComposerScreen)
        assert composer.query_one("#composer-company", Select).value == company.id
        assert not composer.query_one("#composer-right").can_focus  # Shift+Tab never lands on it
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is composer
        assert composer.query_one("#composer-company", Select).value == company.id
        assert composer.company is not None and composer.company.id == company.id


# ---- 5-8: deciding and being told -------------------------------------------------------------


async def test_the_confirm_dialog_footer_shows_its_own_keys_only(store, make_app):
    from textual.widgets._footer import FooterKey

    rows = build_sample(store)
    app = make_app(store, arm_delay_seconds=0)
    async with app.run_test(size=NARROW) as pilot:
        app.open_review(rows["jacket"])
        await review_shown(pilot)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await settle(pilot)
        shown = {key.description for key in app.screen.query(FooterKey)}
        assert shown == {"Yes, approve", "Cancel"}


async def test_the_review_header_keeps_via_and_its_interface_together_at_80_columns(
    store, make_app
):
    # With the demo's ID lengths the one long line broke between "via" and "MCP" at 80 columns.
    from poppy_tui.protocol.requests import McpRequest

    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(
        store,
        company,
        "cnl_IJCe_1xS",
        "Cancel your Trailhead Coffee Club subscription.",
        revision="1796402761-tPePyO6_-uEZ",
        request=McpRequest(f"{company.base_url}/mcp", "cancel_subscription", {"id": "sub_6Tc1"}),
    )
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        app.open_review(row)
        await review_shown(pilot)
        line = app.screen.query_one("#operation-line")
        shown = [line.render_line(y).text.rstrip() for y in range(line.size.height)]
        # The id and revision, then via and when, then who asked (the CLI made this request).
        assert shown[0].endswith("(1 of 1)"), shown
        assert shown[1].startswith("via MCP   received "), shown
        assert shown[2:] == ["asked by the CLI"], shown


async def a_pressed_on_review(
    store, row: str, arm_delay_seconds: float, make_app
) -> tuple[str, list[str]]:
    """Open the review of the sample's `row` and press a once: (its banner before the key, the
    toasts said). The confirmation must not have opened."""
    rows = build_sample(store)
    app = make_app(store, arm_delay_seconds=arm_delay_seconds)
    notes = record_notifications(app)
    async with app.run_test(size=NARROW, notifications=True) as pilot:
        app.open_review(rows[row])
        screen = await review_shown(pilot)
        banner = str(screen.query_one("#outcome").render())
        await pilot.press("a")
        # The key was handled: it said why not (the positive sign that it was pressed at all).
        await wait_for(pilot, lambda: any("Nothing was approved" in m for m in notes))
        await settle(pilot)
        assert app.screen is screen  # no confirmation
        return banner, list(notes)


async def test_the_arming_delay_is_visible_and_an_early_a_says_why(store, make_app):
    banner, said = await a_pressed_on_review(store, "jacket", 30, make_app)
    assert "approve… (available in" in banner
    assert any(
        m.startswith("Not yet: approve is available in") and "Nothing was approved" in m
        for m in said
    )


@pytest.mark.parametrize(
    ("screen", "selector", "line"),
    [
        (
            "companies",
            "#companies-help",
            "s: sign in at it   o: sign out   p: pair a phone (poppy-tui web)",
        ),
        (
            "help",
            ".field-help",
            'Remap keys in config.toml by id: approve = "A" under [keybindings].',
        ),
    ],
)
async def test_key_help_reads_whole_on_a_line_at_80_columns(
    store, screen, selector, line, make_app
):
    # Run together, the Companies help wrapped "s/o:" onto the end of one line and "sign in/out"
    # onto the next, and Help's example broke between 'approve =' and '"A"'.
    build_sample(store)
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        if screen == "companies":
            app.action_show_companies()
        else:
            await pilot.press("question_mark")
        await settle(pilot)
        help_text = app.screen.query(selector).first()
        lines = str(help_text.render()).splitlines()
        assert all(len(shown) <= help_text.content_region.width for shown in lines), (
            help_text.content_region,
            lines,
        )
        assert line in lines


async def test_a_on_a_settled_operation_says_it_never_can_not_not_yet(store, make_app):
    # "Not yet: it is not waiting for a decision (it is performed)" promised a later that never comes.
    _, said = await a_pressed_on_review(store, "performed", 0, make_app)
    assert said == [
        "Can't approve: it is not waiting for a decision (it is performed). Nothing was approved."
    ]


async def test_an_approval_completing_is_told_from_the_inbox(store, tmp_path, make_app):
    rows = build_sample(store)
    app = make_app(store)
    notes = record_notifications(app)
    async with app.run_test(size=NARROW, notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen)
        # Another process (the dispatcher) sends the approved one and the Company performs it.
        send_through(
            store,
            rows["approved"],
            FIXED_NOW + timedelta(seconds=10),
            Status.PERFORMED,
            "Refunded $24.00.",
        )
        app.notify_store_changed()
        await wait_for(pilot, lambda: any(m.startswith("Performed:") for m in notes))
        said = list(notes)
        assert any(
            m.startswith("Performed: Manzanita Outfitters confirmed it did this.") and "Beanie" in m
            for m in said
        )


async def test_a_performed_operation_shows_no_live_countdown(store, make_app):
    rows = build_sample(store)
    send_through(store, rows["jacket"], FIXED_NOW, Status.PERFORMED, "Done.")
    app = make_app(store)
    async with app.run_test(size=NARROW) as pilot:
        app.open_review(rows["jacket"])
        await review_shown(pilot)
        expiry = str(app.screen.query_one("#review-expiry").render())
        assert "Expires in" not in expiry and "no longer matters, it is performed" in expiry


def test_cli_history_shows_no_countdown_for_a_decided_operation(store):
    from poppy_tui.cli.output import row_line

    rows = build_sample(store)
    send_through(store, rows["jacket"], FIXED_NOW, Status.PERFORMED, "Done.")
    performed = next(r for r in store.list_operations(limit=50) if r.id == rows["jacket"])
    waiting = next(r for r in store.list_operations(limit=50) if r.id == rows["hostile"])
    assert "no longer matters: performed" in row_line(performed) and " (in " not in row_line(
        performed
    )
    assert "expires " in row_line(waiting)


# ---- 9-11: what the screens say ---------------------------------------------------------------


async def test_only_a_new_expiry_is_called_new_expiry_not_new_terms(store, make_app):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=FIXED_NOW + timedelta(minutes=10),
        revision="r1",
    )
    store.mark_seen(store.get_operation(row).current.id)
    add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=FIXED_NOW + timedelta(minutes=20),
        revision="r2",
    )
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        app.open_review(row)
        await review_shown(pilot)
        changes = str(app.screen.query_one("#changes").render())
        assert "NEW EXPIRY" in changes and "NEW TERMS" not in changes
        assert "new expiry only" in str(app.screen.query_one("#operation-line").render())
    # and changed terms are still new terms
    add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms("80.00"),
        expires_at=FIXED_NOW + timedelta(minutes=20),
        revision="r3",
    )
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        app.open_review(row)
        await review_shown(pilot)
        assert "NEW TERMS" in str(app.screen.query_one("#changes").render())


async def test_one_time_format_with_the_zone_in_header_terms_and_record(store, make_app):
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(
        store,
        company,
        "bkc_1",
        "Move the fitting.",
        terms={"starts_at": "2030-01-16T10:00:00-08:00"},
        expires_at=FIXED_NOW + timedelta(minutes=9),
    )
    app = make_app(store)
    async with app.run_test(size=WIDE) as pilot:
        app.open_review(row)
        await review_shown(pilot)
        screen = app.screen
        assert "UTC" in str(screen.query_one("#operation-line").render())
        assert "(2030-01-15 12:09:00 UTC)" in str(screen.query_one("#review-expiry").render())
        terms = screen.query_one("#terms")
        assert any(value.startswith("2030-01-16T10:00:00-08:00") for _, value in terms.rows)
    assert local_time(FIXED_NOW) == "2030-01-15 12:00:00 UTC"


def test_grammar_plurals_and_possessives():
    assert plural(1, "warning") == "1 warning" and plural(2, "warning") == "2 warnings"
    assert checks_summary(0, 2) == "2 warnings"
    assert checks_summary(1, 1) == "1 danger and 1 warning"
    assert possessive("Manzanita Outfitters") == "Manzanita Outfitters'"
    assert possessive("Larkspur Air") == "Larkspur Air's"


def test_the_history_status_filter_has_no_duplicate_labels():
    labels = [label for label, _ in STATUS_FILTERS.values()]
    assert len(labels) == len(set(labels))


async def test_the_grace_toast_has_no_number_that_would_stand_still(store, make_agent):
    rows = build_sample(store)
    # The real clock: the store stamps the grace period with it.
    app = PoppyApp(make_agent(arm_delay_seconds=0, grace_seconds=30))
    notes = record_notifications(app)
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        app.open_review(rows["jacket"])
        screen = await review_shown(pilot)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: "sending in" in str(screen.query_one("#outcome").render()))
        await wait_for(pilot, lambda: any(m.startswith("Approved.") for m in notes))
        toast = next(m for m in notes if m.startswith("Approved."))
        assert not any(ch.isdigit() for ch in toast)
        assert "sending in" in str(app.screen.query_one("#outcome").render())


# ---- 14: the theme is kept --------------------------------------------------------------------


async def test_a_theme_picked_is_written_to_config_toml_and_used_next_time(
    store, tmp_path, make_agent
):
    config_file = tmp_path / "config.toml"
    config_file.write_text('# mine\ngrace_seconds = 5\n\n[keybindings]\napprove = "A"\n')
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW, config_file=config_file)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        app.theme = "nord"
        await wait_for(pilot, lambda: 'theme = "nord"' in config_file.read_text())
    saved = load_config_file(config_file)
    assert (
        saved.theme == "nord" and saved.grace_seconds == 5 and saved.keybindings == {"approve": "A"}
    )
    assert config_file.read_text().startswith("# mine\n")
    again = PoppyApp(make_agent(config=saved), clock=lambda: FIXED_NOW, config_file=config_file)
    async with again.run_test(size=NARROW) as pilot:
        await settle(pilot)
        assert again.theme == "nord"


def test_with_theme_replaces_only_the_top_level_line():
    text = 'theme = "textual-dark"\n[keybindings]\ntheme = "t"\n'
    assert with_theme(text, "gruvbox") == 'theme = "gruvbox"\n[keybindings]\ntheme = "t"\n'
    assert with_theme("", "nord") == 'theme = "nord"\n'


async def test_at_80_columns_the_footer_shows_every_review_key_during_the_grace_period(
    store, make_agent
):
    from textual.widgets._footer import FooterKey

    rows = build_sample(store)
    app = PoppyApp(make_agent(arm_delay_seconds=0, grace_seconds=600))
    async with app.run_test(size=NARROW) as pilot:
        app.open_review(rows["jacket"])
        screen = await review_shown(pilot)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: (
                app.screen is screen
                and screen.check_action("withdraw", ()) is True
                and "Withdraw" in {key.description for key in screen.query(FooterKey)}
            ),
        )
        await settle(pilot)
        keys = {key.description: key for key in app.screen.query(FooterKey)}
        assert {"Decline…", "Withdraw", "Back", "Quit"} <= set(keys)
        assert all(key.region.right <= NARROW[0] for key in keys.values())  # none cut off ("q Q")
