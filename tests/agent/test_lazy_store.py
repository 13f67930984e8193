"""Agent.open(lazy_store=True), the TUI's: lists are read through a light InboxReader, and the
whole store (its write side and records, ~20 ms of imports) opens on first use, after the
TUI's first frame (docs/architecture.md, "First frame")."""

from __future__ import annotations

import asyncio
import threading

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.reader import InboxReader
from tests.ui.ui_sample import add_company, add_operation


def test_lists_come_through_the_reader_and_the_whole_store_opens_once_on_first_use(paths):
    paths.ensure()
    with Store.open(paths.database) as store:
        row = add_operation(
            store, add_company(store, "Juniper Telecom", 8402), "op_1", "Cancel the plan"
        )
    agent = Agent.open(paths, Config(grace_seconds=0.0), lazy_store=True)
    try:
        reader = agent.reader
        assert isinstance(reader, InboxReader) and not isinstance(reader, Store)
        assert [r.operation_id for r in reader.list_operations([Status.PENDING])] == ["op_1"]
        before = reader.change_token()

        opened: list[Store] = []
        threads = [threading.Thread(target=lambda: opened.append(agent.store)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len({id(store) for store in opened}) == 1  # one store, however many ask at once

        # A decision committed through the whole store is what the reader lists and polls next.
        agent.decline(row, agent.store.get_operation(row).current.id)
        assert agent.reader is reader
        assert reader.change_token() != before
        assert reader.list_operations([Status.PENDING]) == []
        assert [r.status for r in reader.list_operations([Status.DECLINED])] == [Status.DECLINED]
    finally:
        asyncio.run(agent.aclose())


def test_an_agent_opened_with_its_store_reads_lists_from_it(paths):
    agent = Agent.open(paths, Config(grace_seconds=0.0))
    try:
        assert agent.reader is agent.store
    finally:
        asyncio.run(agent.aclose())
