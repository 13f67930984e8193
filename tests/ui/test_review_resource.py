"""The review shows the resource an operation changes, as read from the Company now, under the
terms (agent/resource_read.py, ui/widgets/resource_view.py), checks it against the terms, reads
it again on demand and just before the confirmation. The real Agent against a Company written
from the spec alone (tests/companies/resource_company.py), at 80x24 and 160x48."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from datetime import datetime, timedelta, UTC
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.widgets import Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.help import HelpScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.widgets.resource_view import ResourceView
from tests.companies.resource_company import ResourceCompany
from tests.ui.ui_sample import ui_config, wait_for, workers_done

BIG, SMALL = (160, 48), (80, 24)


@pytest.fixture
def juniper() -> Iterator[ResourceCompany]:
    company = ResourceCompany()
    yield company
    company.stop()


async def open_agent(tmp_path, juniper, order_id: str, **config) -> tuple[Agent, int]:
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(request_timeout_seconds=5.0, **config),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    company = await agent.add_company(juniper.base_url)
    result = await agent.call_api(
        company, "POST", f"/orders/{order_id}/exchanges", {"item_id": "it_1"}
    )
    assert result.outcome == "operation", result
    await agent.settle_resource_reads(10)
    return agent, result.operation_row


@contextlib.asynccontextmanager
async def reviewing(tmp_path, juniper, order_id: str, size: tuple[int, int], **config):
    """The real Agent's operation for an exchange on `order_id`, its review open in the TUI at
    `size` once the resource's read is in: (app, pilot, screen). The Agent is closed after."""
    agent, row = await open_agent(tmp_path, juniper, order_id, **config)
    try:
        app = PoppyApp(agent, initial_screen=f"review:{row}")
        async with app.run_test(size=size) as pilot:
            yield app, pilot, await review(app, pilot)
    finally:
        await agent.aclose()


def title(screen: ReviewScreen) -> str:
    return str(screen.query_one("#resource-title", Static).render())


def view_text(screen: ReviewScreen) -> str:
    view = screen.query_one("#resource", ResourceView)
    return "\n".join(f"{key} {value}" for key, value in view.rows) + "\n" + str(view.render())


def drawn(view: ResourceView) -> str:
    """The section as the terminal draws it (the Rich table rendered to plain text)."""
    import io

    from rich.console import Console

    console = Console(width=150, record=True, file=io.StringIO(), color_system=None)
    console.print(view._content())
    return console.export_text()


def panel_text(screen: ReviewScreen) -> str:
    return "\n".join(str(s.render()) for s in screen.query("#discrepancies Static"))


async def review(app, pilot) -> ReviewScreen:
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, ReviewScreen)
            and app.screen.resource_read is not None
            and not app.screen._reading
        ),
        describe=lambda: repr(app.screen),
    )
    return app.screen


@pytest.mark.parametrize("size", [BIG, SMALL])
async def test_a_resource_that_disagrees_is_shown_with_its_danger(tmp_path, juniper, size):
    async with reviewing(tmp_path, juniper, "ord_other", size=size) as (app, pilot, screen):
        assert title(screen).startswith("Now (read from GET /orders/ord_other at "), title(screen)
        assert "resource_mismatch" in {f.code for f in screen.findings}
        await wait_for(
            pilot,
            lambda: "DANGER:" in panel_text(screen) and '"it_2"' in panel_text(screen),
            describe=lambda: panel_text(screen),
        )
        view = screen.query_one("#resource", ResourceView)
        assert ("items[0].item_id", "it_2") in view.rows and "items[0].item_id" in view.named
        if size == SMALL:
            # Folded behind one key at 80x24: the title says which.
            assert view.folded and title(screen).endswith(" — v shows it, g reads it again"), title(
                screen
            )
            assert "named by the terms (v shows them)" in str(view.render())
            await pilot.press("v")
            assert not view.folded and title(screen).endswith(" — v hides it, g reads it again")
        else:
            assert not view.folded
        assert "▶ items[0].item_id" in drawn(view)  # the field the terms name is marked


async def test_a_read_that_fails_says_so_in_one_line(tmp_path, juniper):
    async with reviewing(tmp_path, juniper, "ord_gone", size=SMALL) as (app, pilot, screen):
        text = str(screen.query_one("#resource", ResourceView).render())
        assert text == "couldn't read it: the Company answered HTTP 500 (server_error)", text
        assert not any(f.code.startswith("resource_") for f in screen.findings)


async def test_hostile_fields_never_reach_the_terminal_raw(tmp_path, juniper):
    async with reviewing(tmp_path, juniper, "ord_evil", size=BIG) as (app, pilot, screen):
        view = screen.query_one("#resource", ResourceView)
        shown = "".join(key + value for key, value in view.rows)
        assert "\\x1b" in shown and "⟨U+202E⟩" in shown and "[@click=app.quit]" in shown
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in shown
        # what the terminal gets: the table as drawn holds no raw escape from the Company
        text = drawn(view)
        assert "\\x1b]52" in text and "\x1b" not in text and "\u202e" not in text


async def test_read_again_on_demand_and_before_the_confirmation(tmp_path, juniper):
    async with reviewing(tmp_path, juniper, "ord_true", size=BIG) as (app, pilot, screen):
        assert screen.findings == () or all(
            not f.code.startswith("resource_") for f in screen.findings
        )
        opened = screen.opened_read
        assert opened is not None and opened.ok
        # on demand (g): the order was cancelled meanwhile; the check says the action is moot
        juniper.state.order_status["ord_true"] = "cancelled"
        reads = len(juniper.state.reads)
        await wait_for(pilot, lambda: screen.can_approve())
        pressed_at = time.monotonic()
        await pilot.press("g")
        # the new danger dims approve again for the arming delay: it is read before `a` works
        # (the delay restarted after g; on a loaded machine it may have run out again by now)
        await wait_for(
            pilot,
            lambda: (
                "resource_state" in {f.code for f in screen.findings}
                and screen._armed_at > pressed_at
            ),
            describe=lambda: repr(screen.findings),
        )
        assert len(juniper.state.reads) == reads + 1
        # before the confirmation: read again (it is older than a few seconds by then), and say it changed
        juniper.state.order_status["ord_true"] = "returned"
        # as if the last read were a minute old: the confirmation reads again
        screen.resource_read = dataclasses.replace(
            screen.resource_read, read_at=screen.resource_read.read_at - timedelta(minutes=1)
        )
        await wait_for(pilot, lambda: screen.can_approve())
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmApproveScreen))
        assert len(juniper.state.reads) == reads + 2
        note = str(app.screen.query_one("#confirm-resource", Static).render())
        assert note.startswith("CHANGED since you opened the review"), note
        assert "status delivered → returned" in note
        assert app.screen.dangers >= 1


@pytest.mark.parametrize("read_ago", [0, 60], ids=["read-seconds-ago", "read-a-minute-ago"])
async def test_unchanged_state_is_said_in_the_confirmation(tmp_path, juniper, read_ago):
    """A read seconds old is shown as it is ("read at"); an older one is read again before the
    confirmation, which says the state is unchanged since the review opened."""
    async with reviewing(tmp_path, juniper, "ord_true", size=SMALL) as (app, pilot, screen):
        await wait_for(pilot, lambda: screen.can_approve())
        reads = len(juniper.state.reads)
        # The review's one read, as if made `read_ago` seconds ago (it is the one it opened with).
        screen.opened_read = screen.resource_read = dataclasses.replace(
            screen.resource_read, read_at=datetime.now(UTC) - timedelta(seconds=read_ago)
        )
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmApproveScreen))
        note = str(app.screen.query_one("#confirm-resource", Static).render())
        if read_ago:
            assert len(juniper.state.reads) == reads + 1
            assert note.startswith("Now") and note.endswith(
                ": unchanged since you opened the review"
            ), note
            assert "read again at " in note
        else:
            assert len(juniper.state.reads) == reads  # seconds old: not read again
            assert note.startswith("Now") and "read at " in note, note
            assert "unchanged" not in note and "CHANGED" not in note


async def test_the_keys_are_remappable_and_listed_in_help(tmp_path, juniper):
    async with reviewing(
        tmp_path,
        juniper,
        "ord_other",
        keybindings={"toggle_resource": "z", "read_resource": "R"},
        size=SMALL,
    ) as (app, pilot, screen):
        assert title(screen).endswith(" — z shows it, R reads it again"), title(screen)
        await pilot.press("z")
        assert not screen.query_one("#resource", ResourceView).folded
        reads = len(juniper.state.reads)
        await pilot.press("R")
        await wait_for(pilot, lambda: len(juniper.state.reads) == reads + 1)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        from poppy_tui.ui.screens.help import binding_groups

        bindings, extra = next((b, e) for group, b, e in binding_groups() if group == "Review")
        review_rows = app.screen._rows(bindings, extra)
        assert ("z", "Now: show/hide", "toggle_resource") in review_rows
        assert ("R", "Read it again", "read_resource") in review_rows


async def test_a_decided_operation_reads_nothing_and_titles_its_last_read(tmp_path, juniper):
    agent, row = await open_agent(tmp_path, juniper, "ord_other")
    try:
        agent.decline(row, agent.store.get_operation(row).current.id)
        reads = len(juniper.state.reads)
        app = PoppyApp(agent, initial_screen=f"review:{row}")
        async with app.run_test(size=BIG) as pilot:
            await wait_for(
                pilot,
                lambda: (
                    isinstance(app.screen, ReviewScreen) and app.screen.resource_read is not None
                ),
            )
            screen = app.screen
            assert title(screen).startswith(
                "Before the decision (read from GET /orders/ord_other at "
            ), title(screen)
            assert "reads it again" not in title(screen)
            assert not any(
                f.code.startswith("resource_") for f in screen.findings
            )  # compared only before
            # g is handled (its binding is off once decided: the key does nothing) and nothing is
            # read: a key the screen does handle, pressed after it, shows the first was handled.
            view = screen.query_one("#resource", ResourceView)
            folded = view.folded
            await pilot.press("g")
            await pilot.press("v")  # show/hide, handled after g
            await wait_for(pilot, lambda: view.folded != folded, describe=lambda: "v handled")
            await workers_done(pilot)
            assert not any(w.group == "resource-read" for w in app.workers if not w.is_finished)
            assert len(juniper.state.reads) == reads
    finally:
        await agent.aclose()
