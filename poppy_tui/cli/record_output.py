"""One operation as `show` and `show --json` give it: its record in full (every revision,
decision, send attempt and event), who asked, where it stands (the lifecycle's explanation, as
the TUI says it), what poppy-tui found out of an outcome in doubt, and with them the resource as
last read (cli/resource_output.py) and whose account it is (cli/account_output.py), each loaded
only when an operation is shown. Import these from cli/output.py, like the rest of what the
command line prints."""

from __future__ import annotations

import json

from poppy_tui.cli.safe_text import (
    COMPANY_INDENT,
    company_json_text,
    indented,
    safe_block,
    safe_line,
)
from poppy_tui.cli.status_words import (
    expiry_text,
    settled_expiry_text,
    stamp_text,
    status_name,
    status_text,
    utc_text,
)

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from poppy_tui.agent.store import (
        AttemptRecord,
        DecisionRecord,
        EventRecord,
        OperationRecord,
        RevisionRecord,
        Store,
    )

# Attempt outcomes as `show` lists them, where the stored word would mislead.
ATTEMPT_TEXT = {"sign_in_required": "the Company asked for sign-in first; nothing was performed"}


# ---- JSON shapes ----------------------------------------------------------------------------


def revision_json(revision: RevisionRecord) -> dict[str, Any]:
    return {
        "revision": revision.revision,
        "summary": revision.summary,
        "terms": revision.terms,
        "expires_at": utc_text(revision.expires_at),
        "expires_at_as_sent": revision.expires_at_text,
        "company_text": revision.carrier_text,
        "received_at": revision.received_at,
        "seen_at": revision.seen_at,
    }


def _request_json(record: OperationRecord) -> dict[str, Any]:
    from poppy_tui.protocol.requests import request_to_json

    return json.loads(request_to_json(record.request))


def record_json(store: Store, record: OperationRecord) -> dict[str, Any]:
    from poppy_tui.cli.resource_output import resource_json
    from poppy_tui.safety.who_asked import asked_by_json

    revisions = store.revisions(record.id)
    names = {r.id: r.revision for r in revisions}
    return {
        "id": record.id,
        "operation_id": record.operation_id,
        "company": {
            "id": record.company.id,
            "name": record.company.name,
            "domain": record.company.domain,
            "base_url": record.company.base_url,
        },
        "interface": record.interface,
        "status": record.status.value,
        "current": revision_json(record.current),
        "approved_revision": names.get(record.approved_revision_id)
        if record.approved_revision_id
        else None,
        "request": _request_json(record),
        "revisions": [revision_json(r) for r in revisions],
        "decisions": [_decision_json(d, names) for d in store.decisions(record.id)],
        "attempts": [_attempt_json(a, names) for a in store.attempts(record.id)],
        "events": [_event_json(e) for e in store.events(record.id)],
        # Everyone whose request returned it, first asker first (safety/who_asked.py).
        "requested_by": asked_by_json(store.asked_by(record.id)),
        "outcome": record.outcome,
        "outcome_detail": record.outcome_detail,
        "unknown_reason": store.unknown_reason(record.id)
        if record.status.value == "outcome_unknown"
        else None,
        "found_out": store.observations(record.id),
        "resource_now": resource_json(store, record),
        "next_look_at": record.next_attempt_at
        if record.status.value == "outcome_unknown"
        else None,
        # Returned signed in, it belongs to the account (Ops 3): which one, where known (else null),
        # and the other account signed in there now, if any (then it can't be approved or sent).
        "account_owned": record.account_owned,
        "account": record.account,
        "signed_in_as_other_account": _accounts().other_account_of(store, record),
        # Whether the sign-in now is shown to be its account (same, other, unconfirmed: held until
        # the person says in the review; signed_out), and the line that says why it is held.
        **_accounts().account_standing_json(store, record),
        # Earlier operations for the same action whose outcome is not known: this one can't be approved yet.
        "held_by": [e.operation_row for e in store.earlier_in_doubt(record.id)]
        if record.status.is_open
        else [],
        # On its way (and when), or why not: the lifecycle's explanation, as the TUI says it.
        "where_it_stands": explanation_json(where_it_stands(store, record)),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }


def where_it_stands(store: Store, record: OperationRecord) -> Any:
    """agent/lifecycle's explanation of the operation now (the same words everywhere)."""
    from poppy_tui.agent import clock
    from poppy_tui.agent.lifecycle import explain

    return explain(store.lifecycle_facts(record.id), clock.now_utc())


def explanation_json(said: Any) -> dict[str, Any]:
    return {
        "why": said.why.value,
        "on_its_way": said.on_its_way,
        "at": said.at.isoformat() if said.at is not None else None,
        "says": said.sentence(),
    }


def _decision_json(decision: DecisionRecord, names: dict[int, str]) -> dict[str, Any]:
    return {
        "decision": decision.decision,
        "revision": names.get(decision.revision_id),
        "decided_at": decision.decided_at,
        "actor": decision.actor,
        "note": decision.note,
    }


def _attempt_json(attempt: AttemptRecord, names: dict[int, str]) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "revision": names.get(attempt.revision_id),
        "started_at": attempt.started_at,
        "finished_at": attempt.finished_at,
        "outcome": attempt.outcome,
        "http_status": attempt.http_status,
        "detail": attempt.detail,
        "response": attempt.response,
    }


def _event_json(event: EventRecord) -> dict[str, Any]:
    return {"at": event.at, "kind": event.kind, "detail": event.detail}


# ---- plain text for people (and screen readers: no tables, no box drawing) --------------------


def _company_label_text(name: object, domain: object, max_chars: int = 80) -> str:
    from poppy_tui.safety.company_name import company_label

    return company_label(name, domain, max_chars).text


def _asked_through(record: OperationRecord) -> str:
    request = record.request
    if record.interface == "api":
        return f"API: {safe_line(request.describe())}"
    if record.interface == "mcp":
        return f"MCP: tool {safe_line(getattr(request, 'tool', ''), 100)} at {safe_line(getattr(request, 'server_url', ''))}"
    if record.interface == "conversation":
        return f"conversation at {safe_line(getattr(request, 'endpoint', ''))}"
    return safe_line(record.interface, 40)


def _unknown_lines(store: Store, record: OperationRecord) -> list[str]:
    """Why an outcome is unknown, and what poppy-tui found out since (Ops 7), sanitised."""
    lines: list[str] = []
    if record.status.value == "outcome_unknown":
        lines.append(
            f"Why the outcome is unknown: {safe_line(store.unknown_reason(record.id) or '', 1000)}"
        )
        if record.next_attempt_at:
            lines.append(f"poppy-tui looks again by itself at {stamp_text(record.next_attempt_at)}")
    found = store.observations(record.id)
    if found:
        lines.append("Found out since (another way, Ops 7):")
        for item in found:
            what = {k: v for k, v in item.items() if k not in ("at", "source")}
            lines.append(
                f"{COMPANY_INDENT}{stamp_text(item.get('at'))}: {safe_line(str(item.get('source', '')), 200)}: "
                f"{safe_line(json.dumps(what, ensure_ascii=True), 1000)}"
            )
    return lines


def _revision_change(revisions: list[Any]) -> str:
    """What the newest revision changed from the one before, as the TUI's review header says it."""
    from poppy_tui.safety.revisions import diff_revisions

    try:
        kind = diff_revisions(revisions[-2].as_operation(), revisions[-1].as_operation()).kind.label
    except Exception:  # noqa: BLE001 - a stored revision that no longer parses: say only that it is new
        return "a new revision"
    return {"new terms": "the terms changed", "new expiry": "new expiry only"}.get(
        kind, "a new revision"
    )


def _accounts() -> Any:
    """The account part (cli/account_output.py), loaded when an operation is shown."""
    from poppy_tui.cli import account_output

    return account_output


def waiting_line(store: Store, record: OperationRecord) -> str:
    """Why a kept approval waits, true now (cli/account_output.waiting_line)."""
    return _accounts().waiting_line(store, record)


def show_text(store: Store, record: OperationRecord) -> str:
    """One operation, linear and labelled, for reading aloud as well as reading."""
    from poppy_tui.cli.resource_output import resource_lines
    from poppy_tui.safety.who_asked import asked_by_line

    revisions = store.revisions(record.id)
    names = {r.id: r.revision for r in revisions}
    current = record.current
    lines = [
        f"Operation {record.id}: {safe_line(record.operation_id, 100)}",
        f"Company: {_company_label_text(record.company.name, record.company.domain)}",
        f"Status: {status_name(record)}: {status_text(record)}",
        f"Where it stands: {safe_line(where_it_stands(store, record).sentence(), 600)}",
        f"Asked through: {_asked_through(record)}",
        f"Asked by: {asked_by_line(store.asked_by(record.id))}",
    ]
    body = getattr(record.request, "body", None)
    arguments = getattr(record.request, "arguments", None)
    text = getattr(record.request, "text", None)
    if body is not None:
        lines.append(f"Request body: {safe_line(json.dumps(body, ensure_ascii=True), 400)}")
    if arguments:
        lines.append(f"Tool arguments: {safe_line(json.dumps(arguments, ensure_ascii=True), 400)}")
    if text:
        lines.append(f"Message sent: {safe_line(text, 400)}")
    summary, flags = safe_block(current.summary)
    lines.append("Summary, as the Company wrote it:")
    lines.append(indented(summary))
    if flags:
        lines.append(f"Warning: poppy-tui neutralised in the summary: {', '.join(flags)}")
    if current.terms:
        lines.append("Terms, as the Company sent them:")
        from poppy_tui.safety.discrepancies import terms_rows  # the TUI's terms table, same rows

        for key, value in terms_rows(current.terms):
            lines.append(f"{COMPANY_INDENT}{safe_line(key, 80)}: {safe_line(value)}")
    else:
        lines.append("Terms: none sent (only the summary describes this operation)")
    lines.extend(resource_lines(store, record))
    if current.carrier_text:
        lines.append("The Company's message with it:")
        lines.append(indented(safe_block(current.carrier_text)[0]))
    settled = settled_expiry_text(record.status, current.expires_at)
    lines.append(
        f"Expires: {expiry_text(current.expires_at)}"
        if settled.startswith("expires ")
        else f"Expiry: {settled.removeprefix('expiry ')}"
    )
    changed = (
        f" ({_revision_change(revisions)}: this is revision {len(revisions)})"
        if len(revisions) > 1
        else ""
    )
    lines.append(f"Revision: {safe_line(current.revision, 100)}{changed}")
    if record.approved_revision_id is not None:
        lines.append(f"Approved revision: {safe_line(names.get(record.approved_revision_id), 100)}")
    lines.append(
        f"Received: {stamp_text(record.created_at)}; last change: {stamp_text(record.updated_at)}"
    )
    lines.extend(_accounts().account_lines(store, record))
    held = store.earlier_in_doubt(record.id) if record.status.is_open else []
    if held:
        from poppy_tui.safety.request_reuse import in_doubt_reason

        lines.append(f"Can't be approved yet: {safe_line(in_doubt_reason(held), 1000)}")
    decisions = store.decisions(record.id)
    if decisions:
        lines.append("Decisions:")
        for d in decisions:
            extra = f"; note: {safe_line(d.note)}" if d.note else ""
            lines.append(
                f"{COMPANY_INDENT}{stamp_text(d.decided_at)}: {d.decision} revision {safe_line(names.get(d.revision_id), 100)}"
                f" by {safe_line(d.actor, 40)}{extra}"
            )
    attempts = store.attempts(record.id)
    if attempts:
        lines.append("Send attempts:")
        for a in attempts:
            status = f", HTTP {a.http_status}" if a.http_status is not None else ""
            result = ATTEMPT_TEXT.get(
                a.outcome or "", a.outcome or "no answer recorded (interrupted while sending)"
            )
            detail = f"; {safe_line(a.detail)}" if a.detail else ""
            lines.append(
                f"{COMPANY_INDENT}{a.number}: started {stamp_text(a.started_at)}: {result}{status}{detail}"
            )
    events = store.events(record.id)
    if events:
        lines.append("History:")
        for e in events:
            detail = f": {safe_line(e.detail)}" if e.detail else ""
            lines.append(f"{COMPANY_INDENT}{stamp_text(e.at)}: {safe_line(e.kind, 40)}{detail}")
    if record.outcome_detail:
        lines.append(f"Outcome: {safe_line(record.outcome_detail, 400)}")
    lines.extend(_unknown_lines(store, record))
    if record.outcome is not None:
        lines.append("The Company's final response:")
        lines.append(company_json_text(record.outcome))
    return "\n".join(lines)
