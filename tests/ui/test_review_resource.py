"""The review shows the resource an operation changes, as the Company's API says it is now, set
apart under the terms and titled as not part of what the person approves (agent/resource_read.py,
ui/widgets/resource_view.py), checks it against the terms (promise-like text flagged), reads it
again on demand and just before the confirmation, says "no read offered", "couldn't read it" and
"not read yet" apart, and once the decision is carried out titles it "Before the decision" and
offers no read. The real Agent against a Company written from the spec alone
(tests/companies/resource_company.py), at 80x24 and 160x48."""

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
from tests.ui.ui_sample import screen_up, ui_config, wait_for, workers_done

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
        head, detail = title(screen).split("\n")
        assert head == "Now: what the Company's API says — not part of what you approve", head
        assert detail.startswith("read from GET /orders/ord_other at "), detail
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
        assert text == "Couldn't read it: the Company answered HTTP 500 (server_error)", text
        assert title(screen).split("\n")[1].startswith("couldn't read it from GET /orders/ord_gone")
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
        await screen_up(pilot, ConfirmApproveScreen)
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
        await screen_up(pilot, ConfirmApproveScreen)
        note = str(app.screen.query_one("#confirm-resource", Static).render())
        # Named as the review's section names it (where from, when), with a verdict (walk K2:
        # "Now read at 02:01:44" said neither).
        assert note.startswith("Now (read from GET /orders/ord_true at "), note
        if read_ago:
            assert len(juniper.state.reads) == reads + 1
            assert note.endswith(": unchanged since you opened the review"), note
        else:
            assert len(juniper.state.reads) == reads  # seconds old: not read again
            assert ": as the review shows it (" in note and "nothing read since" in note, note
            assert "unchanged" not in note and "CHANGED" not in note


async def test_a_read_that_times_out_before_the_confirmation_is_named_and_said(
    tmp_path, juniper, monkeypatch
):
    import poppy_tui.agent.resource_read as resource_read

    monkeypatch.setattr(resource_read, "CONFIRM_DEADLINE_SECONDS", 0.5)
    monkeypatch.setattr(resource_read, "READ_DEADLINE_SECONDS", 0.5)
    juniper.state.trickle_seconds = 0.05
    async with reviewing(tmp_path, juniper, "ord_slow", size=SMALL) as (app, pilot, screen):
        await wait_for(pilot, lambda: screen.can_approve())
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen, timeout=20)
        note = str(app.screen.query_one("#confirm-resource", Static).render())
        assert note.startswith("Now"), note  # the section's name, as the review's title says it
        assert "couldn't read it again: no complete answer within 0.5 s" in note, note


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
        await screen_up(pilot, HelpScreen)
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
            head, detail = title(screen).split("\n")
            assert head.startswith("Before the decision: what the Company's API said"), head
            assert "not part of the deal" in head
            assert detail.startswith("read from GET /orders/ord_other at "), detail
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


async def test_no_safe_read_says_no_read_offered_and_never_gets_the_actions_url(tmp_path, juniper):
    """A47: the Company's OpenAPI offers only a catch-all GET that matches the action's own URL;
    nothing is read (the action's URL is never fetched), and the review says "no read offered",
    which is neither "couldn't read it" nor "not read yet"."""
    juniper.state.catch_all = True
    async with reviewing(tmp_path, juniper, "ord_true", size=SMALL) as (app, pilot, screen):
        assert juniper.state.action_gets == [] and juniper.state.reads == []
        head, detail = title(screen).split("\n")
        assert detail.startswith("no read offered"), detail
        text = str(screen.query_one("#resource", ResourceView).render())
        assert text.startswith("No read offered: the Company's OpenAPI offers no GET"), text
        assert "Couldn't" not in text and "Not read yet" not in text
    from poppy_tui.cli.output import show_text

    agent, row = await open_agent(tmp_path / "again", juniper, "ord_true")
    try:
        shown = show_text(agent.store, agent.store.get_operation(row))
        assert (
            "what the Company's API says (not part of what you approve): no read offered" in shown
        )
        assert juniper.state.action_gets == []
    finally:
        await agent.aclose()


async def test_a_read_that_times_out_is_couldnt_read_it_not_no_read_offered(tmp_path, juniper):
    agent, row = await open_agent(tmp_path, juniper, "ord_slow")
    try:
        read = await agent.read_resource(row, deadline=0.5)
        assert read is not None and read.state == "failed", read
        assert read.problem == "no complete answer within 0.5 s"
    finally:
        await agent.aclose()


async def test_not_read_yet_is_said_until_a_read_is_in(tmp_path, juniper):
    from poppy_tui.ui.widgets.resource_view import resource_title

    assert resource_title(None, reading=False) == (
        "Now: what the Company's API says — not part of what you approve",
        "not read yet",
    )
    assert resource_title(None, reading=True)[1] == "reading it from the Company…"
    view = ResourceView()
    view.read = None
    assert str(view._content()) == "Not read yet."


@pytest.mark.parametrize("size", [BIG, SMALL])
async def test_promises_in_the_state_are_flagged_and_disagreeing_money_is_a_danger(
    tmp_path, juniper, size
):
    """A48: "Juniper GUARANTEES a refund of $500.00 if you approve" in the order, and an extra
    charge of $45.00 where the terms say none: each a DANGER naming both sides; the guarantee is
    shown flagged (marked, in italics, said to bind nothing), never plain; so in `show`."""
    async with reviewing(tmp_path, juniper, "ord_claims", size=size) as (app, pilot, screen):
        codes = {f.code for f in screen.findings if f.code.startswith("resource_")}
        assert codes == {"resource_money_claim", "resource_money_mismatch"}, codes
        assert all(
            f.severity == "danger" for f in screen.findings if f.code.startswith("resource_m")
        )
        view = screen.query_one("#resource", ResourceView)
        assert "guarantee" in view.flagged
        if size == SMALL:
            assert view.folded and "1 reading like a promise" in str(view.render())
            await pilot.press("v")
        text = drawn(view)
        assert "⚠ guarantee" in text and "binds nothing" in text
        assert "The Company's API as read, not terms" in text
    from poppy_tui.cli.output import record_json, show_text

    agent, row = await open_agent(tmp_path / "show", juniper, "ord_claims")
    try:
        op = agent.store.get_operation(row)
        shown = show_text(agent.store, op)
        assert "Now, what the Company's API says (not part of what you approve), read from" in shown
        assert (
            "! guarantee: Juniper GUARANTEES a refund of $500.00 if you approve (reads like a promise: binds nothing)"
            in shown
        )
        assert "DANGER: What GET /orders/ord_claims returned just now says, in guarantee" in shown
        now = record_json(agent.store, op)["resource_now"]
        assert now["state"] == "read" and now["flagged"] == ["guarantee"]
    finally:
        await agent.aclose()


async def test_the_live_review_once_sent_says_before_the_decision_and_offers_no_read(
    tmp_path, juniper
):
    """K16: staying on the review through the send, the title becomes "Before the decision" and
    `g` is no longer offered (nor does it read)."""
    async with reviewing(tmp_path, juniper, "ord_true", size=SMALL, grace_seconds=0.0) as (
        app,
        pilot,
        screen,
    ):
        assert "g reads it again" in title(screen)
        await wait_for(pilot, screen.can_approve)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: screen.record is not None and screen.record.status.value == "performed",
            timeout=20,
        )
        await wait_for(pilot, lambda: title(screen).startswith("Before the decision"))
        assert "reads it" not in title(screen)
        assert screen.check_action("read_resource", ()) is False
        reads = len(juniper.state.reads)
        await pilot.press("g")
        await pilot.pause()
        assert len(juniper.state.reads) == reads
