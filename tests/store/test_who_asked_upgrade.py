"""Who asked (schema migration 10), on real old stores (tests/store/old_stores/, each written by
the code of its version): every operation of every version, upgraded, names who asked for it (the
requests that returned its revisions); the gate's requests from before agents had names are the
agent `default`'s, and only it reads what they returned; version 10's own record (an agent, then
the CLI, asking for the same terms) reads back as that code wrote it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from poppy_tui.agent.store import Store

OLD = Path(__file__).resolve().parent / "old_stores"
VERSIONS = sorted(int(p.stem[1:]) for p in OLD.glob("v*.sql"))
WHO_ASKED = 10


def load(version: int, path: Path) -> dict:
    db = sqlite3.connect(path)
    try:
        db.executescript((OLD / f"v{version}.sql").read_text())
    finally:
        db.close()
    return json.loads((OLD / f"v{version}.json").read_text())


@pytest.mark.parametrize("version", VERSIONS, ids=[f"v{v}" for v in VERSIONS])
def test_every_operation_of_every_version_names_who_asked(version, tmp_path):
    made = load(version, tmp_path / "poppy.db")
    with Store.open(tmp_path / "poppy.db") as store:
        for row, recorded in made["operations"].items():
            asked = store.asked_by(int(row))
            assert asked, (version, row)
            if version >= WHO_ASKED:
                assert [[a.origin, a.agent, a.client, a.first_request] for a in asked] == made[
                    "asked_by"
                ][row]
            else:  # the old code's requests were all the CLI's (old_stores/fill.py)
                assert [(a.origin, a.agent) for a in asked] == [("cli", None)], recorded
    if version >= WHO_ASKED:
        agents = {k: v for k, v in made["asked_by"].items() if any(a[1] for a in v)}
        assert [[a[0], a[1]] for v in agents.values() for a in v] == [
            ["mcp", "laptop"],
            ["cli", None],
        ]


def test_the_gates_requests_from_before_names_are_the_default_agents(tmp_path):
    """A version-9 store in which the gate made one request: after the upgrade it is the agent
    default's, which reads the operation it returned, as nobody else (but the person) does."""
    path = tmp_path / "poppy.db"
    made = load(9, path)
    row, recorded = next(iter(made["operations"].items()))
    db = sqlite3.connect(path)
    db.execute("UPDATE requests SET origin='mcp' WHERE id=?", (recorded["request_id"],))
    db.commit()
    db.close()
    with Store.open(path) as store:
        [asked] = [a for a in store.asked_by(int(row)) if a.origin == "mcp"]
        assert (asked.agent, asked.first_request) == ("default", True)
        assert store.visible_to("default", int(row)) and not store.visible_to("laptop", int(row))
        assert int(row) in store.operations_of("default")
        others = {int(r) for r in made["operations"] if r != row}
        assert not {r for r in others if store.visible_to("default", r)}
        assert store.operations_of("default") == {int(row)}
        assert recorded["status"] == "pending"
        assert store.gate_activity()["default"].waiting == 1  # the agents screen counts it
        store.record_gate_use("laptop", None)  # and who asks is recorded from now on
        assert store.gate_activity()["laptop"].last_used_at is not None
