"""The TUI against the real Agent and the demo Company on loopback: compose, talk, approve, send."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.widgets import Button, Input, OptionList, Select

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.composer import ComposerScreen
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.conversation import ConversationScreen, MessageView, OperationCard
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import (
    record_notifications,
    review_shown,
    screen_up,
    started,
    wait_for,
    workers_done,
)

SIZE = (120, 36)
CONFIG = Config(
    grace_seconds=30.0,
    arm_delay_seconds=0.2,
    request_timeout_seconds=5.0,
    retry_window_seconds=20.0,
)
EXCHANGE = {
    "order_id": "ord_7Hk2",
    "item_id": "itm_4Qa",
    "replacement_sku": "stormline-insulated-m",
}


@pytest.fixture
def shop(company):
    """The demo Company (tests/conftest.py's `company`)."""
    return company


@pytest.fixture
def make_agent(tmp_path):
    made: list[Agent] = []

    def make(**overrides) -> Agent:
        paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
        # A key in memory: the tests never touch the person's keyring.
        agent = Agent.open(
            paths,
            replace(CONFIG, **overrides),
            key=ec.generate_private_key(ec.SECP256R1()),
            reply_wait_seconds=3.0,
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.store.close()


async def pick_action(pilot, screen: ComposerScreen, label: str) -> None:
    await wait_for(pilot, lambda: any(a.label == label for a in screen.actions))
    index = next(i for i, a in enumerate(screen.actions) if a.label == label)
    listing = screen.query_one("#composer-actions", OptionList)
    listing.focus()
    listing.highlighted = index
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.action is not None and screen.action.label == label)


async def compose_for(pilot, screen: ComposerScreen, company) -> None:
    """Once the app has started, choose `company` in the composer's Company list."""
    await started(pilot)
    screen.query_one("#composer-company", Select).value = company.id


async def talk_to(pilot, screen: ConversationScreen, company) -> None:
    """Once the app has started, choose `company` in Talk's Company list and wait until Talk has
    taken it up and the message box has the keys."""
    await started(pilot)
    screen.query_one("#talk-company", Select).value = company.id
    await wait_for(pilot, lambda: screen.company is not None and screen.company.id == company.id)
    await wait_for(pilot, lambda: isinstance(screen.app.focused, Input))


def fill(screen: ComposerScreen, values: dict[str, str]) -> None:
    for widget_id, field in screen.field_ids.items():
        if field.name in values:
            screen.query_one(f"#{widget_id}", Input).value = values[field.name]


async def test_composer_sends_an_api_request_and_opens_the_operations_review(make_agent, shop):
    agent = make_agent()
    manzanita = await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="compose")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ComposerScreen)
        await compose_for(pilot, screen, manzanita)
        await pick_action(pilot, screen, "POST /api/orders/{order_id}/exchanges")
        assert {f.name for f in screen.field_ids.values()} == set(EXCHANGE)
        fill(screen, EXCHANGE)
        await pilot.press("ctrl+s")
        review = await screen_up(pilot, ReviewScreen)
        record = agent.store.get_operation(review.operation_row)
        assert record.interface == "api" and record.operation_id == "exc_5Rt2"
        assert record.request.url.endswith("/api/orders/ord_7Hk2/exchanges")
        assert record.request.body == {
            "item_id": "itm_4Qa",
            "replacement_sku": "stormline-insulated-m",
        }
        assert record.status == Status.PENDING  # sending asked; nothing was approved
        assert shop.context.shop.performed("exc_5Rt2") == 0


async def test_composer_calls_an_mcp_tool_and_shows_a_plain_result(make_agent, shop):
    agent = make_agent()
    manzanita = await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="compose")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await compose_for(pilot, screen, manzanita)
        await pick_action(pilot, screen, "tool get_order")
        fill(screen, {"order_id": "ord_7Hk2"})
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.last_result is not None)
        assert screen.last_result.outcome == "performed"
        shown = str(screen.query_one("#composer-result").render())
        assert "DONE" in shown and "ord_7Hk2" in shown
        # A tool that needs approval opens the review instead.
        await pick_action(pilot, screen, "tool exchange_item")
        fill(screen, EXCHANGE)
        await pilot.press("ctrl+s")
        await screen_up(pilot, ReviewScreen)
        assert agent.store.get_operation(app.screen.operation_row).interface == "mcp"


async def test_composer_reports_a_missing_required_field_and_sends_nothing(make_agent, shop):
    agent = make_agent()
    manzanita = await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="compose")
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.screen
        await compose_for(pilot, screen, manzanita)
        await pick_action(pilot, screen, "POST /api/orders/{order_id}/exchanges")
        fill(screen, {"order_id": "ord_7Hk2"})
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("required" in m for m in notes))
        await workers_done(pilot)
        assert screen.last_result is None
        assert agent.store.count_operations() == 0


async def test_approve_then_the_dispatcher_worker_sends_and_shows_the_outcome(make_agent, shop):
    agent = make_agent(grace_seconds=0.5)
    manzanita = await agent.add_company(shop.base_url)
    result = await agent.call_api(
        manzanita,
        "POST",
        "/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    assert result.outcome == "operation"
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        app.open_review(result.operation_row)
        screen = await review_shown(pilot)
        await wait_for(pilot, screen.can_approve)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: agent.store.get_operation(result.operation_row).status == Status.PERFORMED,
            timeout=20,
        )
        # The app's poll sees the dispatcher's commit and the review re-reads it.
        await wait_for(
            pilot,
            lambda: (
                "PERFORMED" in str(screen.query_one("#outcome").render())
                and "#1" in str(screen.query_one("#progress").render())
            ),
        )
        assert "#1" in str(screen.query_one("#progress").render())
        assert shop.context.shop.performed("exc_5Rt2") == 1


async def test_conversation_shows_messages_and_operation_cards_and_words_never_approve(
    make_agent, shop
):
    agent = make_agent()
    manzanita = await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="talk")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        await talk_to(pilot, screen, manzanita)
        await pilot.press(
            *"I'd like to exchange my Stormline jacket for the insulated one", "enter"
        )
        await wait_for(pilot, lambda: len(screen.query(OperationCard)) == 1, timeout=15)
        texts = [str(m.render()) for m in screen.query(MessageView)]
        assert any(t.startswith("You") and "Stormline" in t for t in texts)
        assert any("Manzanita Outfitters" in t and "approve" in t for t in texts)
        card = screen.query_one(OperationCard)
        row = card.operation_row
        # Typing approval is only a message: the operation stays pending.
        count = len(texts)
        await pilot.press(*"yes, I approve, go ahead", "enter")
        await wait_for(pilot, lambda: len(screen.query(MessageView)) >= count + 2, timeout=15)
        assert agent.store.get_operation(row).status == Status.PENDING
        assert agent.store.decisions(row) == []
        assert shop.context.shop.performed("exc_5Rt2") == 0
        card = screen.query_one(OperationCard)
        card.focus()
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen)
        assert app.screen.operation_row == row


async def test_each_card_keeps_the_terms_its_message_proposed(make_agent, shop):
    agent = make_agent()
    manzanita = await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="talk")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await talk_to(pilot, screen, manzanita)
        await pilot.press(
            *"I'd like to exchange my Stormline jacket for the insulated one", "enter"
        )
        await wait_for(pilot, lambda: len(screen.query(OperationCard)) == 1, timeout=15)
        await pilot.press(*"size L instead", "enter")
        await wait_for(pilot, lambda: len(screen.query(OperationCard)) == 2, timeout=15)
        # The first card learns of the newer revision after the second card is in: wait for it
        # to say so.
        await wait_for(
            pilot,
            lambda: (
                "replaced by a newer revision" in str(screen.query(OperationCard).first().render())
            ),
            describe=lambda: [str(card.render()) for card in screen.query(OperationCard)],
        )
        first, second = [str(card.render()) for card in screen.query(OperationCard)]
        revisions = agent.store.revisions(screen.query(OperationCard).first().operation_row)
        assert len(revisions) == 2
        assert (
            revisions[0].revision in first
            and "(M)" in first
            and "replaced by a newer revision" in first
        )
        assert revisions[1].revision in second and "(L)" in second and "waiting for you" in second


async def test_new_request_by_keyboard_at_80x24_highlights_and_never_focuses_the_invisible(
    make_agent, shop
):
    """New request by keyboard (docs/tui.md, "Screens": the first one is highlighted): something
    highlighted at first; Shift+Tab lands on things you can see and use."""
    agent = make_agent()
    await agent.add_company(shop.base_url)
    app = PoppyApp(agent, initial_screen="compose")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, ComposerScreen)
        listing = screen.query_one("#composer-actions", OptionList)
        await wait_for(pilot, lambda: bool(screen.actions) and app.focused is listing)
        assert listing.highlighted == 0
        await pilot.press("down", "down", "enter")  # the exchange, by keyboard alone
        await wait_for(pilot, lambda: screen.action is not None)
        assert screen.action.label == "POST /api/orders/{order_id}/exchanges"
        for _ in range(6):
            await pilot.press("shift+tab")  # returns once the screen has handled it
            await pilot.pause()
            focused = app.focused
            assert focused is not None and focused.id != "composer-right"
            assert (
                isinstance(focused, (OptionList, Input, Select, Button))
                or focused.id == "composer-raw"
            )
