"""The requests poppy-tui sent for the person, who asked for each, and the first answer to each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from poppy_tui.agent.store.connection import StoreBase, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.records import loads, request_of
from poppy_tui.agent.store.rows import _dumps
from poppy_tui.protocol.requests import RequestDescription, request_to_json

# What an MCP client says it is (clientInfo) is kept to this many characters a field: a claim.
CLIENT_CHARS = 200


@dataclass(frozen=True)
class Requester:
    """Who made a request through the gate (`poppy-tui mcp`): the agent, by the name its token
    has (or the one the person gave a stdio gate), and what its MCP client says it is
    (clientInfo's name and version: the client's claim, never checked)."""

    agent: str
    client_name: str | None = None
    client_version: str | None = None

    def client_json(self) -> str | None:
        if self.client_name is None and self.client_version is None:
            return None
        return json.dumps(
            {
                "name": None if self.client_name is None else self.client_name[:CLIENT_CHARS],
                "version": None
                if self.client_version is None
                else self.client_version[:CLIENT_CHARS],
            },
            ensure_ascii=False,
        )


class RequestStore(StoreBase):
    """Requests and their first answers."""

    def add_request(
        self,
        company_id: int,
        request: RequestDescription,
        origin: str,
        requester: Requester | None = None,
    ) -> int:
        cursor = self._write_one(
            "INSERT INTO requests (company_id, interface, request_json, origin, created_at, requester,"
            " requester_client) VALUES (?,?,?,?,?,?,?)",
            (
                company_id,
                request.interface,
                request_to_json(request),
                origin,
                stamp(),
                None if requester is None else requester.agent,
                None if requester is None else requester.client_json(),
            ),
            Durability.SOON,
        )
        assert cursor.lastrowid is not None  # set by every INSERT
        return cursor.lastrowid

    def set_first_response(self, request_id: int, status: int | None, response: Any) -> None:
        with self._write(Durability.SOON):
            self._first_response(request_id, status, response)

    def _first_response(self, request_id: int, status: int | None, response: Any) -> None:
        self._db.execute(
            "UPDATE requests SET first_status=?, first_response_json=? WHERE id=? AND first_response_json IS NULL",
            (status, _dumps(response), request_id),
        )

    def get_request(self, request_id: int) -> tuple[RequestDescription, int | None, Any]:
        row = self._db.execute(
            "SELECT request_json, first_status, first_response_json FROM requests WHERE id=?",
            (request_id,),
        ).fetchone()
        if row is None:
            raise KeyError(request_id)
        return request_of(row[0]), row[1], loads(row[2])
