"""The README's `call` example and docs/demo-company.md's MCP example, exactly as written there,
one after the other against the demo Company: both are performed (the MCP example once asked to
exchange the item the `call` had just exchanged, and was refused)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path


from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.exit_codes import Exit

ROOT = Path(__file__).resolve().parents[2]


def readme_call() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^poppy-tui call .*?\\\n\s+--body '.*?' --wait$", text, re.M | re.S)
    assert found, "README no longer has the two-window call example"
    return shlex.split(found.group(0).replace("\\\n", " "))[1:]


def docs_mcp_example() -> list[str]:
    text = (ROOT / "docs" / "demo-company.md").read_text(encoding="utf-8")
    found = re.search(r"`(poppy-tui tool \"Manzanita Outfitters\" [^`]*--wait)`", text)
    assert found, "docs/demo-company.md no longer has the MCP example"
    return shlex.split(found.group(1))[1:]


def approve_and_send(cli, home) -> None:
    with Store.open(resolve_paths(home).database) as store:
        (waiting,) = store.list_operations([Status.PENDING])
        store.approve(waiting.id, store.get_operation(waiting.id).current.id, grace_seconds=0)
    sent = cli("send")
    assert sent.code == Exit.OK, sent.err


def test_the_readme_call_then_the_docs_mcp_example_are_both_performed(cli, home, shop):
    for argv in (readme_call(), docs_mcp_example()):
        without_wait = [
            word for word in argv if word != "--wait"
        ]  # the person's decision comes below
        run = cli(*without_wait)
        assert run.code == Exit.PENDING, (argv, run.err)
        approve_and_send(cli, home)
    with Store.open(resolve_paths(home).database) as store:
        statuses = [row.status for row in store.list_operations(newest_first=False)]
    assert statuses == [Status.PERFORMED, Status.PERFORMED]
