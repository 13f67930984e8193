"""Who asked: the requester of each request (an agent through the gate, by name; the CLI; the
TUI), which operations each request returned, and what an agent may read through the gate: the
operations its own requests returned (migration 10)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.agent.store.connection import StoreBase, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.status import Status, loads

WAITING = (Status.PENDING.value, Status.WITHDRAWN.value)


@dataclass(frozen=True)
class AskedBy:
    """One who asked for an operation: `origin` is the interface they used ('mcp' for the gate,
    'cli', 'tui', 'demo'; 'refresh' for a conversation read), `agent` the gate agent's name,
    `client` what its MCP client said it is ({"name", "version"}: a claim). `first_request`: no
    request from this agent came before (an agent not seen before)."""

    origin: str
    agent: str | None
    client: dict[str, Any] | None
    first_request: bool
    at: str


@dataclass(frozen=True)
class GateActivity:
    """What the store knows of one agent: when it last called a tool of the gate, when it last
    made a request, what its client last said it is, and how many of its operations wait for the
    person."""

    last_used_at: str | None
    last_asked_at: str | None
    client: dict[str, Any] | None
    waiting: int


class RequesterStore(StoreBase):
    """Requesters, the operations their requests returned, and the gate's agents' activity."""

    def link_request_operation(self, db: Any, request_id: int, operation_row: int) -> None:
        """Within record_operation's transaction: `request_id` returned `operation_row`."""
        db.execute(
            "INSERT OR IGNORE INTO request_operations (request_id, operation_row) VALUES (?,?)",
            (request_id, operation_row),
        )

    def asked_by(self, operation_row: int) -> list[AskedBy]:
        """Everyone whose requests returned this operation, in the order they first asked."""
        rows = self._db.execute(
            "SELECT q.origin, q.requester, q.requester_client, min(q.id), min(q.created_at)"
            " FROM request_operations ro JOIN requests q ON q.id = ro.request_id"
            " WHERE ro.operation_row = ? GROUP BY q.origin, q.requester ORDER BY min(q.id)",
            (operation_row,),
        ).fetchall()
        asked = []
        for origin, agent, client, first_id, at in rows:
            earlier = agent is not None and (
                self._db.execute(
                    "SELECT 1 FROM requests WHERE requester = ? AND id < ? LIMIT 1",
                    (agent, first_id),
                ).fetchone()
                is not None
            )
            asked.append(
                AskedBy(
                    origin=origin,
                    agent=agent,
                    client=loads(client),
                    first_request=agent is not None and not earlier,
                    at=at,
                )
            )
        return asked

    def visible_to(self, agent: str, operation_row: int) -> bool:
        """Whether a request of the gate agent `agent` returned this operation."""
        return (
            self._db.execute(
                "SELECT 1 FROM request_operations ro JOIN requests q ON q.id = ro.request_id"
                " WHERE ro.operation_row = ? AND q.requester = ? LIMIT 1",
                (operation_row, agent),
            ).fetchone()
            is not None
        )

    def operations_of(self, agent: str) -> set[int]:
        """Every operation the gate agent `agent`'s requests returned."""
        rows = self._db.execute(
            "SELECT DISTINCT ro.operation_row FROM request_operations ro"
            " JOIN requests q ON q.id = ro.request_id WHERE q.requester = ?",
            (agent,),
        ).fetchall()
        return {r[0] for r in rows}

    def latest_conversation_of(
        self, company_id: int, agent: str
    ) -> tuple[int, str, str, str | None] | None:
        """(row, endpoint, conversation_id, cursor) of the newest conversation with a Company
        that the gate agent `agent` wrote in: an agent continues its own, never another's."""
        row = self._db.execute(
            "SELECT c.id, c.endpoint, c.conversation_id, c.cursor FROM conversations c"
            " WHERE c.company_id = ? AND EXISTS (SELECT 1 FROM requests q WHERE q.requester = ?"
            " AND q.company_id = c.company_id AND q.interface = 'conversation'"
            " AND json_extract(q.request_json, '$.conversation_id') = c.conversation_id)"
            " ORDER BY c.updated_at DESC, c.id DESC LIMIT 1",
            (company_id, agent),
        ).fetchone()
        return None if row is None else tuple(row)

    def record_gate_use(self, agent: str, client_json: str | None) -> None:
        """The gate agent `agent` called a tool now, from a client that says it is `client_json`."""
        with self._write(Durability.LAZY) as db:
            db.execute(
                "INSERT INTO gate_agents (name, last_used_at, client) VALUES (?,?,?)"
                " ON CONFLICT (name) DO UPDATE SET last_used_at = excluded.last_used_at,"
                " client = coalesce(excluded.client, gate_agents.client)",
                (agent, stamp(), client_json),
            )

    def gate_activity(self) -> dict[str, GateActivity]:
        """Every agent the store has seen (a tool called, or a request made), by name."""
        used = {
            r[0]: (r[1], loads(r[2]))
            for r in self._db.execute(
                "SELECT name, last_used_at, client FROM gate_agents"
            ).fetchall()
        }
        # The newest request of each (SQLite takes the other columns from the max() row).
        latest = self._db.execute(
            "SELECT requester, max(id), created_at, requester_client FROM requests"
            " WHERE requester IS NOT NULL GROUP BY requester"
        ).fetchall()
        asked = {r[0]: r[2] for r in latest}
        said = {r[0]: loads(r[3]) for r in latest}
        waiting = {
            r[0]: r[1]
            for r in self._db.execute(
                "SELECT q.requester, count(DISTINCT o.id) FROM requests q"
                " JOIN request_operations ro ON ro.request_id = q.id"
                " JOIN operations o ON o.id = ro.operation_row"
                f" WHERE q.requester IS NOT NULL AND o.status IN ({','.join('?' * len(WAITING))})"
                " GROUP BY q.requester",
                WAITING,
            ).fetchall()
        }
        return {
            name: GateActivity(
                last_used_at=used.get(name, (None, None))[0],
                last_asked_at=asked.get(name),
                client=used.get(name, (None, None))[1] or said.get(name),
                waiting=waiting.get(name, 0),
            )
            for name in set(used) | set(asked)
        }
