"""The who-asked migration (schema migration 10): a database of the schema before it opens with
nothing lost; the gate's requests from before agents had names are the agent `default`'s (the
one token there was), so a `default` agent still reads the operations they returned and nobody
else does; the CLI's stay the CLI's."""

from __future__ import annotations

import sqlite3

from poppy_tui.agent.store import Store
from tests.store.migration_support import undo_who_asked
from poppy_tui.agent.store.schema import SCHEMA_VERSION
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

# Its number in schema.MIGRATIONS (later migrations are appended after it).
WHO_ASKED_MIGRATION = 10

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
    "extensions": {"operations": [{"version": "2"}]},
}


def _old_store(path) -> dict[str, int]:
    """An operation the gate's request returned and one the CLI's did, taken back to schema 9."""
    rows = {}
    with Store.open(path) as store:
        company = store.upsert_company(
            "http://127.0.0.1:9", parse_poppy_json(DOCUMENT, "127.0.0.1:9", True)
        )
        for origin, operation_id in (("mcp", "op_gate"), ("cli", "op_cli")):
            request_id = store.add_request(
                company.id, ApiRequest("POST", f"http://127.0.0.1:9/{operation_id}", {}), origin
            )
            operation = parse_operation(
                {
                    "operation_id": operation_id,
                    "revision": "r1",
                    "summary": "Old terms",
                    "expires_at": "2099-01-01T00:00:00Z",
                }
            )
            rows[origin] = store.record_operation(
                company.id, request_id, company.session_id, operation, None, "api"
            ).operation_row
    db = sqlite3.connect(path)
    undo_who_asked(db)
    db.execute(f"PRAGMA user_version={WHO_ASKED_MIGRATION - 1}")
    db.commit()
    db.close()
    return rows


def test_the_gates_old_requests_are_the_default_agents_and_the_clis_stay_the_clis(tmp_path):
    path = tmp_path / "poppy.db"
    rows = _old_store(path)
    with Store.open(path) as store:
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        gate, cli = rows["mcp"], rows["cli"]
        assert store.get_operation(gate).current.summary == "Old terms"  # nothing lost
        [by_gate] = store.asked_by(gate)
        assert (by_gate.origin, by_gate.agent, by_gate.first_request) == ("mcp", "default", True)
        [by_cli] = store.asked_by(cli)
        assert (by_cli.origin, by_cli.agent, by_cli.first_request) == ("cli", None, False)
        assert store.visible_to("default", gate) and not store.visible_to("default", cli)
        assert store.operations_of("default") == {gate}
        assert store.gate_activity()["default"].waiting == 1
        # And it records who asks from now on.
        store.record_gate_use("laptop", None)
        assert store.gate_activity()["laptop"].last_used_at is not None
