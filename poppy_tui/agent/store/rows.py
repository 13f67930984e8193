"""SQL column lists and the conversions from rows to records, shared by every part of the store."""

from __future__ import annotations

import functools
import json
from typing import Any
from collections.abc import Sequence

from poppy_tui.agent.store.connection import parse_stamp
from poppy_tui.agent.store.records import (
    AttemptRecord,
    CompanyRecord,
    OperationRecord,
    RevisionRecord,
    Status,
    loads,
    request_of,
)


_COMPANY_COLUMNS = "id, base_url, domain, name, document_json, supports_operations, user_id, session_id, discovered_at, updated_at"
_REVISION_COLUMNS = (
    "id, operation_row, revision, request_id, summary, terms_json, expires_at, expires_at_text, raw_json,"
    " carrier_text, received_at, seen_at, session_id"
)
_ATTEMPT_COLUMNS = (
    "id, operation_row, revision_id, number, idempotency_key, started_at, finished_at, outcome, http_status,"
    " response_json, detail, owner"
)


# An operation with its current revision, the request that revision answered, and its Company:
# one statement, since every screen and every send reads all four together.
_OPERATION_SELECT = (
    "SELECT o.id, o.operation_id, o.interface, o.session_id, o.status, o.approved_revision_id, o.send_after,"
    " o.idempotency_key, o.next_attempt_at, o.attempt_count, o.outcome_json, o.outcome_detail, o.created_at,"
    " o.updated_at, q.request_json, o.account_owned, o.waiting_sign_in, o.account, "
    + ", ".join(f"r.{c.strip()}" for c in _REVISION_COLUMNS.split(","))
    + ", "
    + ", ".join(f"c.{c.strip()}" for c in _COMPANY_COLUMNS.split(","))
    + " FROM operations o JOIN revisions r ON r.id = o.current_revision_id"
    " JOIN requests q ON q.id = r.request_id JOIN companies c ON c.id = o.company_id"
)
_REVISION_WIDTH = len(_REVISION_COLUMNS.split(","))
_OPERATION_WIDTH = 18  # the o.* and q.* columns before the revision's


@functools.lru_cache(maxsize=64)
def _company(row: tuple[Any, ...]) -> CompanyRecord:
    """Every operation read carries its Company, whose row (poppy.json included) rarely changes:
    one parsed record per distinct row. Records are read-only, so sharing one is safe."""
    return CompanyRecord(
        id=row[0],
        base_url=row[1],
        domain=row[2],
        name=row[3],
        document=json.loads(row[4]),
        supports_operations=bool(row[5]),
        user_id=row[6],
        session_id=row[7],
        discovered_at=row[8],
        updated_at=row[9],
    )


def _revision(row: Sequence[Any]) -> RevisionRecord:
    return RevisionRecord(
        id=row[0],
        operation_row=row[1],
        revision=row[2],
        request_id=row[3],
        summary=row[4],
        terms=loads(row[5]),
        expires_at=parse_stamp(row[6]),
        expires_at_text=row[7],
        raw=json.loads(row[8]),
        carrier_text=row[9],
        received_at=row[10],
        seen_at=row[11],
        session_id=row[12],
    )


def _attempt(row: Sequence[Any]) -> AttemptRecord:
    return AttemptRecord(
        id=row[0],
        operation_row=row[1],
        revision_id=row[2],
        number=row[3],
        idempotency_key=row[4],
        started_at=row[5],
        finished_at=row[6],
        outcome=row[7],
        http_status=row[8],
        response=loads(row[9]),
        detail=row[10],
        owner=row[11],
    )


def _operation(row: Sequence[Any]) -> OperationRecord:
    (
        op_id,
        operation_id,
        interface,
        session_id,
        status,
        approved_id,
        send_after,
        idem,
        next_at,
        attempts,
        outcome_json,
        outcome_detail,
        created,
        updated,
        request_json,
        account_owned,
        waiting_sign_in,
        account,
    ) = row[:_OPERATION_WIDTH]
    current = _revision(row[_OPERATION_WIDTH : _OPERATION_WIDTH + _REVISION_WIDTH])
    request = request_of(request_json)
    return OperationRecord(
        id=op_id,
        company=_company(tuple(row[_OPERATION_WIDTH + _REVISION_WIDTH :])),
        operation_id=operation_id,
        interface=request.interface,  # the current revision's (older rows kept the first's)
        session_id=session_id,
        status=Status(status),
        current=current,
        approved_revision_id=approved_id,
        send_after=send_after,
        idempotency_key=idem,
        next_attempt_at=next_at,
        attempt_count=attempts,
        outcome=loads(outcome_json),
        outcome_detail=outcome_detail,
        created_at=created,
        updated_at=updated,
        request=request,
        request_id=current.request_id,
        account_owned=bool(account_owned),
        waiting_sign_in=waiting_sign_in,
        account=account if account_owned else None,
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
