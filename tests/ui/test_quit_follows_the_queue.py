"""The quit dialog follows what happens behind it. An approval that is sent while the dialog is open
(its grace period ran out, or another process sent it) is said to be performed there, and once
nothing is left to send the dialog stops offering "send now" and "leave it queued" (choices that
no longer mean anything) and offers to quit. Its footer lists its own keys only. In the demo,
"leave it queued" says what it means there: the demo Company stops, so it is never sent.

Through the real Agent and its dispatcher, against a Company written from the spec alone."""

from __future__ import annotations


import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.quit_dialog import QuitScreen
from tests.ui.ui_sample import screen_up, ui_config, wait_for

GRACE = 3600.0  # far longer than any test runs: only a send made elsewhere ends it


async def approved_cancellation(tmp_path, strict) -> tuple[Agent, int]:
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths,
        ui_config(grace_seconds=GRACE, request_timeout_seconds=5.0),
        key=ec.generate_private_key(ec.SECP256R1()),
        reply_wait_seconds=3.0,
    )
    company = await agent.add_company(strict.base_url)
    result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert result.outcome == "operation"
    op = agent.store.get_operation(result.operation_row)
    agent.approve(op.id, op.current.id)
    return agent, op.id


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def footer_keys(app) -> set[str]:
    return {
        binding.key
        for (_, binding, enabled, _) in app.screen.active_bindings.values()
        if binding.show and enabled
    }


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_an_approval_sent_behind_the_dialog_is_said_and_the_stale_choices_go(
    tmp_path, strict, size
):
    agent, row = await approved_cancellation(tmp_path, strict)
    try:
        app = PoppyApp(agent)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.painted)
            await pilot.press("q")
            await screen_up(pilot, QuitScreen)
            assert "1 approved operation not sent yet" in text_of(app, "#quit-title")
            assert footer_keys(app) == {
                "s",
                "l",
                "escape",
            }  # the dialog's own keys, not the inbox's
            # Another window ends the grace period (as `poppy-tui send` or its end would): the
            # TUI's dispatcher sends it while the dialog is open.
            with Store.open(agent.store.path) as elsewhere:
                elsewhere.send_now([row])
            await wait_for(
                pilot,
                lambda: "Nothing is left to send" in text_of(app, "#quit-title"),
                describe=lambda: text_of(app, "#quit-title"),
            )
            assert "(now performed)" in text_of(app, f"#quit-operation-{row}")
            assert "leave it queued" not in text_of(app, "#quit-help")
            assert text_of(app, "#quit-help").startswith("q  quit")
            assert footer_keys(app) == {"q", "escape"}
            await pilot.press("l")  # no longer a choice: nothing happens
            assert app.is_running and isinstance(app.screen, QuitScreen)
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running)
        assert agent.store.get_operation(row).status == Status.PERFORMED
        assert strict.state.perform_count["cxl_bk_1"] == 1
    finally:
        agent.store.close()


async def test_in_the_demo_leaving_it_queued_says_it_is_never_sent(tmp_path, strict):
    agent, row = await approved_cancellation(tmp_path, strict)
    try:
        app = PoppyApp(agent, demo=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.painted)
            await pilot.press("q")
            await screen_up(pilot, QuitScreen)
            choices = app.screen.query_one("#quit-help")
            help_text = str(choices.render())
            assert "the demo Company stops now" in help_text and "never be sent" in help_text
            assert "sends it when it next runs" not in help_text
            assert all(len(line) <= choices.content_region.width for line in help_text.splitlines())
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitScreen))
        assert agent.store.get_operation(row).status == Status.APPROVED
    finally:
        agent.store.close()


async def test_in_the_demo_l_withdraws_what_it_says_will_never_be_sent(tmp_path, strict):
    """The demo's `l` says the approval will never be sent (its Company stops now): the store
    says so too, so the demo's home never shows it on its way later (walk C8)."""
    agent, row = await approved_cancellation(tmp_path, strict)
    try:
        app = PoppyApp(agent, demo=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.painted)
            await pilot.press("q")
            await screen_up(pilot, QuitScreen)
            await pilot.press("l")
            await wait_for(pilot, lambda: not app.is_running)
        assert agent.store.get_operation(row).status == Status.WITHDRAWN
        assert strict.state.approvals_received() == []
    finally:
        agent.store.close()
