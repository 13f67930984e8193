"""The TUI's first frame (the first-frame target in docs/benchmarks.md; docs/architecture.md,
"Performance at scale"): what it shows and what it costs, as behaviour.

The first frame carries the inbox's rows (read at mount, not after on_ready), only a screen's
worth of them is built before it (the rest follow), and nothing of the network stack is imported
before it. Time is measured by tests/benchmarks/bench_firstframe.py, never here.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
from datetime import timedelta
from pathlib import Path
from typing import Any

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.stylesheet import StableStylesheet
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    add_company,
    add_operation,
    wait_for,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs the real program's TUI path (`poppy-tui --home H`) headless: the TUI is started by
# cli/commands.py as always, only without a terminal. When the app's work waiting for
# the first frame is shown (_after_first_frame), it notes the modules loaded so far and the rows
# on screen; it exits when the network would be prepared.
_PROBE = """
import gc, json, sys
import poppy_tui.cli.commands as commands
from poppy_tui.cli.main import main

def run_tui(agent, initial_screen="inbox", config_file=None):
    from poppy_tui.ui.app import PoppyApp
    seen = {}

    class Probe(PoppyApp):
        def _after_first_frame(self):
            seen["modules"] = sorted(n for n, m in list(sys.modules.items()) if m is not None)
            seen["rows"] = self.screen.query_one("#pending-table").row_count
            seen["collector_on_before"] = gc.isenabled()
            seen["collections_before"] = len(collections)
            super()._after_first_frame()
            seen["collector_on_after"] = gc.isenabled()
            seen["frozen_after"] = gc.get_freeze_count()

    app = Probe(agent, initial_screen=initial_screen, config_file=config_file)
    agent.prepare_network = lambda: app.call_from_thread(app.exit)
    app.run(headless=True)
    print(json.dumps(seen), file=sys.stderr)

# Cycle collections from main()'s start (the CLI's own imports, asyncio's, Textual's...) to the first frame.
collections = []
gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))

commands.require_terminal = lambda: None
commands.run_tui = run_tui
raise SystemExit(main(sys.argv[1:]))
"""

# Sending's libraries and the text checks' (the review screen's) have no place before the first frame.
NOT_BEFORE_FIRST_FRAME = {
    "httpx",
    "httpcore",
    "jwt",
    "cryptography",
    "authlib",
    "keyring",
    "mcp",
    "markdown_it",
    "poppy_tui.agent.dispatcher",
    "poppy_tui.agent.outcome_probe",
    "poppy_tui.agent.transports.api",
    "poppy_tui.agent.signin.service",
    "poppy_tui.agent.keys",
    "poppy_tui.safety.discrepancies",
    # The store's write side and the records' dataclasses: the inbox reads through agent.reader.
    "poppy_tui.agent.store.store",
    "poppy_tui.agent.store.records",
    "poppy_tui.agent.store.decisions",
    "poppy_tui.agent.store.operations",
    "poppy_tui.agent.store.dispatch",
    # Rich's emoji names, which markup parsing (a str column label) imports.
    "rich._emoji_codes",
    # What only making a request needs: its types.
    "poppy_tui.protocol.requests",
    # A bare start (`poppy-tui --home H`) needs no argument parser (cli/main.bare_start).
    "argparse",
    "poppy_tui.cli.parser",
    # Outcome toasts take their first look after the first frame.
    "poppy_tui.ui.outcome_toasts",
}


def present(modules: set[str], names: set[str]) -> set[str]:
    return {n for n in names if any(m == n or m.startswith(n + ".") for m in modules)}


def fill(store: Store, count: int) -> list[int]:
    company = add_company(store, "Manzanita Outfitters", 8401)
    return [
        add_operation(
            store,
            company,
            f"op_{n}",
            f"Exchange order {n}",
            expires_at=FIXED_NOW + timedelta(minutes=10 + (n * 7) % count),
        )
        for n in range(count)
    ]


def home_with_three_operations(tmp_path) -> tuple[Path, dict[str, str]]:
    """A home whose inbox holds three operations, and the environment a TUI child starts in."""
    home = tmp_path / "home"
    paths = resolve_paths(home)
    paths.ensure()
    with Store.open(paths.database) as store:
        fill(store, 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POPPY_TUI_")}
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return home, env


def test_the_first_frame_imports_no_network_stack_and_has_the_rows(tmp_path):
    home, env = home_with_three_operations(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
    )
    seen = json.loads(done.stderr.rstrip("\n").split("\n")[-1])
    modules = set(seen["modules"])
    assert "textual" in modules and "poppy_tui.ui.screens.inbox" in modules  # it did start the TUI
    assert seen["rows"] == 3
    assert not present(modules, NOT_BEFORE_FIRST_FRAME)
    # No cycle collections before the first frame (ui/startup_gc.py); the collector is on
    # after it, with what start-up built out of its view.
    assert seen["collector_on_before"] is False
    assert (
        seen["collections_before"] == 0
    )  # held from main() on: importing asyncio made ~24 (~7-10 ms)
    assert seen["collector_on_after"] is True and seen["frozen_after"] > 0


_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
)


def visible_text(received: bytes) -> str:
    """What a terminal shows of `received`: its text, escape codes taken out."""
    return _ESCAPES.sub("", received.decode("utf-8", "replace"))


def start_in_pty(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """`argv` on a 120x36 pseudo-terminal, in a session of its own (so the terminal is not its
    controlling one: closing the other end sends it no SIGHUP). Returns it and the master end."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
        cwd=REPO,
        start_new_session=True,
    )
    os.close(slave)
    return proc, master


def read_until(master: int, expected: list[str]) -> bytes:
    """What the terminal receives until every one of `expected` has arrived (as text shown)."""
    received = b""
    while not all(piece in visible_text(received) for piece in expected):
        ready, _, _ = select.select([master], [], [], 60)
        chunk = os.read(master, 65536) if ready else b""
        assert chunk, f"{expected} never arrived: {received[-500:]!r}"
        received += chunk
    return received


def terminal_text_until(argv: list[str], env: dict[str, str], expected: list[str]) -> str:
    """What a 120x36 terminal receives from `argv` (escape codes taken out) until every one of
    `expected` has arrived; the program is then stopped."""
    proc, master = start_in_pty(argv, env)
    try:
        received = read_until(master, expected)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)
    return visible_text(received)


def test_the_first_frame_written_is_the_whole_inbox_with_its_rows(tmp_path):
    # Textual drew a mode's first screen inside its start-up batch, a frame it never writes,
    # and the first frame written after it was a partial one: the title bar, the hint and the
    # footer, without the section title and the rows (which came a frame later).
    home, env = home_with_three_operations(tmp_path)
    hint = "Enter: review the highlighted operation"
    text = terminal_text_until(
        [sys.executable, "-m", "poppy_tui", "--home", str(home)],
        env,
        ["Waiting for your decision (3)", "Manzanita", hint],
    )
    # Top to bottom, once: nothing below the rows reached the terminal before them.
    assert text.index("Waiting for your decision (3)") < text.index("Manzanita") < text.index(hint)


class FirstFrameApp(PoppyApp):
    """Notes the inbox's rows at on_ready, which Textual posts after its first layout and frame."""

    rows_at_ready: int | None = None
    items_at_ready: list[str] = []  # the operations the table was given, in order
    title_at_ready: str = ""
    loaded_at_ready: bool = False
    lines_at_ready: int = 0  # the lines of the rows in the table
    last_height_at_ready: int = 0
    checked_at_ready: int = 0  # rows whose stored checks were read

    def on_ready(self) -> None:
        table = self.screen.query_one("#pending-table", OperationTable)
        self.rows_at_ready = table.row_count
        self.items_at_ready = list(table.items)
        self.title_at_ready = str(self.screen.query_one("#pending-title").render())
        self.lines_at_ready = sum(row.height for row in table.ordered_rows)
        self.last_height_at_ready = table.ordered_rows[-1].height if table.row_count else 0
        self.checked_at_ready = sum(item.checked for item in table.items.values())
        self.loaded_at_ready = self.screen.loaded
        super().on_ready()


async def every_row_shown(pilot, app) -> OperationTable:
    """The inbox's table once the rows added after the first frame are all in (10 s at most):
    the whole list read (not only the first frame's rows) and each of its rows added."""
    table = app.screen.query_one("#pending-table", OperationTable)
    await wait_for(
        pilot,
        lambda: table.complete and not app.screen.partial,
        describe=lambda: f"every row shown ({table.row_count} so far)",
    )
    return table


async def every_row_checked(pilot, app) -> OperationTable:
    """The inbox's table once every row has its checks (computed and stored by the checks' thread)."""
    table = await every_row_shown(pilot, app)
    await wait_for(
        pilot,
        lambda: all(item.checked for item in table.items.values()),
        20,
        describe=lambda: f"{sum(not i.checked for i in table.items.values())} rows unchecked",
    )
    return table


async def test_a_long_inbox_shows_a_screenful_first_then_every_row_in_order(store, make_agent):
    rows = fill(store, 150)
    async with PoppyApp(make_agent(), clock=lambda: FIXED_NOW).run_test(size=(120, 36)) as pilot:
        await every_row_checked(pilot, pilot.app)  # a first run stores every revision's checks
    app = FirstFrameApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        table = await every_row_shown(pilot, app)
        assert app.loaded_at_ready and app.rows_at_ready is not None
        assert 0 < app.rows_at_ready < len(rows)  # the first frame had rows, not all of them
        # ... as many as the table can show (it is 60% of the 36 lines at most)
        assert app.lines_at_ready >= 36 * 0.6
        # Only the rows of the first frame had their stored checks read before it; the others
        # are read right after it (their badges filled in), not computed again.
        assert app.rows_at_ready <= app.checked_at_ready < len(rows)
        table = await every_row_checked(pilot, app)
        assert all(item.checked for item in table.items.values())
        assert not app.screen.checking and not app.screen._handed
        assert table.row_count == len(rows)
        # Soonest to expire first, across the rows added after the first frame too.
        expiries = [table.items[row.key.value].row.expires_at for row in table.ordered_rows]
        assert expiries == sorted(expiries)


async def test_only_the_rows_of_the_first_frame_are_read_and_built_before_it(store, make_agent):
    # The whole list (500 rows, their summaries told apart) was read and made into items before
    # the first frame, which shows a screenful: ~10 ms of it. The title still counts them all,
    # and the first rows are the complete list's first rows, soonest to expire first.
    rows = fill(store, 150)
    app = FirstFrameApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        table = await every_row_shown(pilot, app)
        assert 0 < app.rows_at_ready <= len(app.items_at_ready) < len(rows)
        # Rows were built until their lines filled what the table can show, and no further.
        assert (
            app.lines_at_ready - app.last_height_at_ready < table.first_rows() <= app.lines_at_ready
        )
        assert app.title_at_ready == f"Waiting for your decision ({len(rows)})"
        assert len(table.items) == table.row_count == len(rows)
        assert list(table.items)[: len(app.items_at_ready)] == app.items_at_ready
        assert not app.screen.partial
        assert (
            str(app.screen.query_one("#pending-title").render())
            == f"Waiting for your decision ({len(rows)})"
        )


def test_the_first_rows_are_the_whole_lists_first_in_expiry_order(store):
    fill(store, 40)
    from poppy_tui.ui.format import INBOX_STATUSES

    whole = store.list_operations(INBOX_STATUSES, limit=30)  # a page of the 40, as the inbox's
    whole.sort(key=lambda r: (r.expires_at, r.id))
    first, count, heads = store.soonest_to_expire(INBOX_STATUSES, 7, limit=30)
    assert count == 30 and len(heads) == 30
    assert first == whole[:7]
    assert sorted(heads) == sorted(r.summary for r in whole)
    assert store.soonest_to_expire(INBOX_STATUSES, 0, limit=30)[0] == []


async def test_the_cursor_stays_on_its_operation_when_a_long_inbox_is_read_again(store, make_agent):
    fill(store, 150)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        table = await every_row_shown(pilot, app)
        table.move_cursor(row=120)
        chosen = table.selected_row_key()
        app.notify_store_changed()  # rebuilt: row 120 comes back only after the first chunks
        await wait_for(pilot, lambda: table.complete, describe=lambda: "the table rebuilt")
        assert table.row_count == 150
        assert table.selected_row_key() == chosen


def count_parses(monkeypatch: Any) -> dict[Any, int]:
    """Counts the parses of each CSS source (by where it was read from), at Textual's parser:
    the public `parse` function its stylesheets call."""
    import textual.css.stylesheet as stylesheet_module

    parses: dict[Any, int] = {}
    parse = stylesheet_module.parse

    def counting(scope: str, css: str, read_from: Any, *args: Any, **kwargs: Any) -> Any:
        parses[read_from] = parses.get(read_from, 0) + 1
        return parse(scope, css, read_from, *args, **kwargs)

    monkeypatch.setattr(stylesheet_module, "parse", counting)
    return parses


async def test_start_up_parses_the_stylesheet_once_and_a_theme_still_restyles(agent, monkeypatch):
    # Textual reparsed every source when the inbox (a mode's screen) was first shown, and the
    # next widget class parsed them all a third time: three parses of poppy.tcss before the
    # first frame. A theme (new variables) must still parse again and restyle.
    parses = count_parses(monkeypatch)
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    ours = (str(PoppyApp.CSS_PATH), "")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert parses[ours] == 1
        title = app.screen.query_one("#pending-title")
        before = title.styles.color
        parsed_first = [
            rule for rule in app.stylesheet.rules if not rule.is_default_rules
        ]  # poppy.tcss: the only non-default CSS
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        await pilot.pause()
        parsed_now = [
            rule for rule in app.stylesheet.rules if not rule.is_default_rules
        ]  # poppy.tcss: the only non-default CSS
        assert len(parsed_now) == len(parsed_first)
        assert not any(now is first for now, first in zip(parsed_now, parsed_first, strict=True))
        assert title.styles.color != before


def test_a_reparse_with_the_same_variables_keeps_the_rules_and_new_variables_parse_again():
    css = ".x { color: $accent; }"
    sheet = StableStylesheet(variables={"accent": "red"})
    sheet.add_source(css, read_from=("test.tcss", ""))
    first = sheet.rules
    sheet.set_variables({"accent": "red"})
    sheet.reparse()
    assert sheet.rules[0] is first[0]
    sheet.set_variables({"accent": "blue"})
    sheet.reparse()
    assert sheet.rules[0] is not first[0]
    assert sheet.rules[0].styles.color != first[0].styles.color


def screens_css_read(app: PoppyApp) -> bool:
    from poppy_tui.ui.screens.base import SCREENS_CSS

    return app.stylesheet.has_source(SCREENS_CSS, "")


async def test_other_screens_css_waits_for_the_first_of_them_and_then_styles_it(store, make_agent):
    # The inbox's first frame parses poppy.tcss only; screens.tcss comes with the first other screen.
    rows = fill(store, 2)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert not screens_css_read(app)
        app.open_review(rows[0])
        await pilot.pause()
        assert screens_css_read(app)
        header = app.screen.query_one("#review-header")
        assert header.styles.border_bottom[0] == "heavy"  # a rule of screens.tcss


async def test_another_first_screen_has_its_css(store, make_agent):
    fill(store, 2)
    app = PoppyApp(make_agent(), initial_screen="history", clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert screens_css_read(app)
        assert (
            app.screen.query_one("#history-table").styles.height.unit.name == "FRACTION"
        )  # height: 1fr
        app.action_show_inbox()
        await pilot.pause()
        app.action_show_history()
        await pilot.pause()
        assert app.screen.query_one("#history-table").styles.height.unit.name == "FRACTION"


async def test_an_empty_inbox_builds_no_table_columns_until_an_operation_comes(store, make_agent):
    # Nothing pending: the tables are hidden and the words say so; measuring their headers
    # (Rich, per column) was most of the empty inbox's refresh before its first frame.
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        # Mounted right after the first frame (hidden, empty).
        await wait_for(pilot, lambda: app.screen.query("#pending-table"))
        pending = app.screen.query_one("#pending-table", OperationTable)
        assert app.screen.query_one("#pending-empty").display and not pending.display
        assert not pending.columns
        fill(store, 2)
        app.notify_store_changed()
        await wait_for(pilot, lambda: pending.row_count == 2)
        assert pending.display and pending.row_count == 2
        assert [column.label.plain for column in pending.columns.values()][0] == "Company"


def test_the_collector_held_for_the_first_frame_is_released_only_once_and_only_if_held():
    import gc

    from poppy_tui.ui import startup_gc

    assert gc.isenabled()
    try:
        startup_gc.hold()
        assert not gc.isenabled() and startup_gc.held()
        startup_gc.release()
        assert gc.isenabled() and not startup_gc.held()
        gc.disable()  # someone else's choice: not ours to undo
        startup_gc.release()
        assert not gc.isenabled()
        startup_gc.hold()  # already off: nothing held, nothing released later
        assert not startup_gc.held()
    finally:
        gc.unfreeze()
        gc.enable()


class ProgressAtReadyApp(PoppyApp):
    """Notes at on_ready (after the first frame) whether the "In progress" section was built, and its rows."""

    progress_at_ready: list[int] | None = None  # its rows' operations; None: no section
    pending_table_at_ready: bool | None = None

    def on_ready(self) -> None:
        if (
            self.pending_table_at_ready is None
        ):  # Textual calls each class's on_ready: once is enough
            tables = list(self.screen.query("#progress-table").results(OperationTable))
            self.progress_at_ready = [int(key) for key in tables[0].items] if tables else None
            self.pending_table_at_ready = bool(self.screen.query("#pending-table"))
        super().on_ready()


async def test_an_empty_in_progress_section_is_built_after_the_first_frame_and_shows_what_arrives(
    store, make_agent
):
    # It was composed (a second table, styled and laid out while hidden) before the first frame
    # even with nothing on its way.
    rows = fill(store, 2)
    app = ProgressAtReadyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await every_row_shown(pilot, app)
        assert app.progress_at_ready is None
        # Mounted right after the first frame, hidden while empty.
        await wait_for(pilot, lambda: app.screen.query("#progress-table"))
        progress = app.screen.query_one("#progress-table", OperationTable)
        assert not progress.display and not app.screen.query_one("#progress-title").display
        # Between the pending rows and the hint, as it was composed before.
        order = [w.id for w in app.screen.query_one("#inbox-body").children]
        assert (
            order.index("pending-empty")
            < order.index("progress-title")
            < order.index("progress-table")
            < order.index("inbox-hint")
        )
        app.agent.approve(rows[0], store.get_operation(rows[0]).current.id)
        app.notify_store_changed()
        await wait_for(pilot, lambda: str(rows[0]) in progress.items)
        assert progress.display and list(progress.items) == [str(rows[0])]
        assert str(app.screen.query_one("#progress-title").render()) == "In progress (1)"


async def test_what_is_in_progress_at_start_is_in_the_first_frame(store, make_agent):
    rows = fill(store, 3)
    store.approve(rows[1], store.get_operation(rows[1]).current.id, 30)
    app = ProgressAtReadyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await every_row_shown(pilot, app)
        assert app.progress_at_ready == [rows[1]]
        assert app.screen.query_one("#progress-table").display


def test_a_bare_start_that_never_opens_the_tui_gives_the_collector_back_unfrozen(tmp_path, capsys):
    import gc

    from poppy_tui.cli.main import main

    frozen = gc.get_freeze_count()
    assert main(["--home", str(tmp_path / "nowhere")]) != 0  # no such home: the TUI never starts
    assert "doesn't exist" in capsys.readouterr().err
    assert gc.isenabled() and gc.get_freeze_count() == frozen


async def test_summary_cells_skip_rich_wrapping_only_where_it_would_change_nothing(
    store, make_agent
):
    # Drawing a cell ran Rich's word wrapping over lines already wrapped to the column (~3 ms of
    # a first frame's rows); a line wider in cells than in characters still needs it.
    from rich.console import Console

    company = add_company(store, "Manzanita Outfitters", 8401)
    summaries = [
        "Exchange the jacket on order ord_1 for the insulated one, for $70.00 more, charged to the card",
        "Cancel " + "会员资格" * 30,
        "Move 🙂 " * 40,
        "Short one",
    ]
    for n, summary in enumerate(summaries):
        add_operation(store, company, f"op_{n}", summary)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        table = await every_row_shown(pilot, app)
        width = table.summary_chars()
        console = Console(width=width, color_system=None)
        skipped = 0
        for key in table.items:
            shown = table.get_cell(key, "summary")
            wrapped = shown.copy()
            wrapped.no_wrap = False
            assert console.render_lines(shown, console.options) == console.render_lines(
                wrapped, console.options
            )
            skipped += shown.no_wrap
        assert skipped >= 2  # the plain ones
        wide = next(
            table.get_cell(k, "summary")
            for k, item in table.items.items()
            if "会员" in item.row.summary
        )
        assert not wide.no_wrap  # wider in cells than in characters: Rich wraps it, as before
