"""What the command line prints: JSON shapes for scripts and plain text for people.

Everything a Company wrote is hostile until proven otherwise. Text meant for a terminal
goes through poppy_tui.safety.sanitize; JSON is dumped with ensure_ascii, which escapes
every control, bidi and non-ASCII character, so it is both terminal-safe and lossless
for a parser. The shapes here are documented in docs/cli.md: add fields, never rename.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, UTC

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, TextIO
    from collections.abc import Iterable

    from poppy_tui.agent.store import (
        AttemptRecord,
        CompanyRecord,
        DecisionRecord,
        EventRecord,
        OperationRecord,
        OperationRow,
        RevisionRecord,
        Store,
    )

# Company text is indented by this much, so a line that starts at column 0 is always poppy-tui's.
COMPANY_INDENT = "  "
LINE_CHARS = 200

STATUS_TEXT = {
    "pending": "needs your approval: open poppy-tui to review",
    "withdrawn": "approval withdrawn before anything was sent; waiting for a decision: open poppy-tui to review",
    "approved": "approved; it will be sent when the grace period ends",
    "sending": "approved; being sent to the Company",
    "performed": "performed by the Company",
    "declined": "declined; nothing was sent",
    "not_performed": "not performed: the Company did not do it",
    "outcome_unknown": (
        "sent, but whether it took effect is unknown; check with the Company, then record what happened in poppy-tui"
    ),
    "expired": "expired before it was approved; nothing was sent",
}
# An approval held back because the Company asked for sign-in (status sending, waiting_sign_in set):
# not on its way, so never "being sent".
WAITING_SIGN_IN_TEXT = (
    "approved; waiting for you to sign in to the Company, then it is sent (until the terms expire)"
)
# Attempt outcomes as `show` lists them, where the stored word would mislead.
ATTEMPT_TEXT = {"sign_in_required": "the Company asked for sign-in first; nothing was performed"}


def status_name(record: Any) -> str:
    """The state as people read it: `waiting for sign-in` rather than `sending` while it waits."""
    return (
        "waiting for sign-in" if getattr(record, "waiting_sign_in", None) else record.status.value
    )


def status_text(record: Any) -> str:
    """STATUS_TEXT for a record, saying "waiting for sign-in" for an approval that waits for it."""
    if getattr(record, "waiting_sign_in", None):
        return WAITING_SIGN_IN_TEXT
    return STATUS_TEXT.get(record.status.value, record.status.value)


# ---- terminal-safe text ---------------------------------------------------------------------


def safe_line(text: object, max_chars: int = LINE_CHARS) -> str:
    """One line of untrusted text: controls, escapes and bidi tricks neutralised, newlines folded."""
    from poppy_tui.safety.sanitize import sanitize_line

    return sanitize_line("" if text is None else str(text), max_chars).text


# What each sanitiser flag means, in words a person can act on.
FLAG_TEXT = {
    "control": "control characters",
    "escape": "terminal escape sequences",
    "bidi": "text-direction controls",
    "invisible": "invisible characters",
    "markup": "markup that looks like an action or a link",
    "mixed_script": "words mixing alphabets (look-alike letters)",
}


def safe_block(text: object) -> tuple[str, list[str]]:
    """Several lines of untrusted text, and (in words) what the sanitiser had to neutralise."""
    from poppy_tui.safety.sanitize import sanitize

    result = sanitize("" if text is None else str(text))
    return result.text, [
        FLAG_TEXT.get(flag, flag) for flag in sorted(result.flags) if flag != "truncated"
    ]


def indented(text: str, prefix: str = COMPANY_INDENT) -> str:
    return "\n".join(
        prefix + line if line else prefix.rstrip() for line in text.splitlines() or [""]
    )


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, indent=2)


# One list item per line: compact (json's C encoder; indent runs its pure-Python one), ASCII.
json_line = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def emit_json_list(key: str, batches: Iterable[list[str]]) -> None:
    """`{"KEY": [...]}` on stdout with one item per line, each item a json_line text, written as
    the batches come: a long list (`pending --json` with 10,000 operations waiting) is neither
    indented by json's pure-Python encoder nor held whole in memory. Still one JSON object."""
    out = sys.stdout
    out.write(f"{{{json_line(key)}: [")
    separator = "\n  "
    for batch in batches:
        if batch:
            out.write(separator + ",\n  ".join(batch))
            separator = ",\n  "
    out.write("\n]}\n" if separator != "\n  " else "]}\n")
    out.flush()


def emit(text: str = "", stream: TextIO | None = None) -> None:
    print(text, file=stream or sys.stdout, flush=True)


def note(text: str) -> None:
    """poppy-tui's own commentary (progress, explanations): stderr, so stdout stays the result."""
    print(text, file=sys.stderr, flush=True)


def note_wrapped(text: str, indent: str = "  ") -> None:
    """`text` on stderr in lines that fit an 80-column terminal, each starting with `indent`
    (a line that wraps in the terminal breaks mid-word)."""
    import textwrap

    for line in textwrap.wrap(
        text,
        79,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    ):
        note(line)


def company_block(name: str, text: object) -> str:
    """A Company's words, labelled with who said them and indented beneath.

    The label starts with our own words, not the Company's name: a name is Company text too,
    and at column 0 it could pass for a line of poppy-tui's.
    """
    body, flags = safe_block(text)
    lines = [f"message from {safe_line(name, 80)}:", indented(body)]
    if flags:
        lines.append(f"(poppy-tui neutralised in that text: {', '.join(flags)})")
    return "\n".join(lines)


def company_json_text(value: Any) -> str:
    """A Company's JSON answer for people: ASCII-escaped JSON, indented like other Company text."""
    return indented(to_json(value))


# ---- times ----------------------------------------------------------------------------------


def utc_text(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_text(value: object) -> str:
    """A stored time ("2026-12-04T18:57:04.386595Z") as every line of `show` writes a time:
    "2026-12-04 18:57:04 UTC". What doesn't parse is shown as it is, sanitised."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return safe_line(value, 60)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the store writes UTC
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def expiry_text(value: datetime, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    shown = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    seconds = (value - now).total_seconds()
    if seconds <= 0:
        return f"{shown} (passed)"
    return f"{shown} (in {_duration(seconds)})"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} seconds"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} hours"
    return f"{round(seconds / 86400)} days"


# ---- JSON shapes ----------------------------------------------------------------------------


def company_interfaces(company: CompanyRecord) -> dict[str, str | None]:
    """Where each interface is: the very look-ups the agent uses to send requests."""
    from poppy_tui.agent.companies import conversation_endpoint, mcp_url, openapi_url

    return {
        "api": openapi_url(company),
        "mcp": mcp_url(company),
        "conversation": conversation_endpoint(company),
    }


def company_json(company: CompanyRecord) -> dict[str, Any]:
    return {
        "id": company.id,
        "name": company.name,
        "domain": company.domain,
        "base_url": company.base_url,
        "supports_operations": company.supports_operations,
        "interfaces": company_interfaces(company),
        "discovered_at": company.discovered_at,
        "updated_at": company.updated_at,
    }


def row_json(row: OperationRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "operation_id": row.operation_id,
        "company": {"id": row.company_id, "name": row.company_name, "domain": row.company_domain},
        "interface": row.interface,
        "status": row.status.value,
        "summary": row.summary,
        "terms": row.terms,
        "expires_at": utc_text(row.expires_at),
        "revision": row.revision,
        "revision_count": row.revision_count,
        "approved_revision": row.approved_revision,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "decided_at": row.decided_at,
        "outcome_detail": row.outcome_detail,
        # An approval held back until the person signs in again: status stays "sending".
        "waiting_sign_in": row.waiting_sign_in,
        # Who asked for the current terms (docs/cli.md; the agent's name through the gate).
        "requested_by": {"origin": row.origin, "agent": row.requester},
    }


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
        "resource_now": _resource_json(store, record),
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


def company_line(company: CompanyRecord) -> str:
    """Name (marked ⚠ when it could imitate another) and verified domain, then the rest;
    a marked name gets a second, indented line saying why."""
    from poppy_tui.safety.company_name import company_label

    label = company_label(company.name, company.domain, 80)
    interfaces = [name for name, url in company_interfaces(company).items() if url]
    line = (
        f"{label.text} at {safe_line(company.base_url)}; "
        f"operations v2: {'yes' if company.supports_operations else 'no'}; "
        f"interfaces: {', '.join(interfaces) or 'none'}"
    )
    return f"{line}\n{COMPANY_INDENT}{label.warning}" if label.warning else line


def _company_label_text(name: object, domain: object, max_chars: int = 80) -> str:
    from poppy_tui.safety.company_name import company_label

    return company_label(name, domain, max_chars).text


def _company_marked_name(name: object, domain: object, max_chars: int) -> str:
    """A queue row's Company: the name with ⚠ when it could imitate another (`show` gives the domain)."""
    from poppy_tui.safety.company_name import company_label

    return company_label(name, domain, max_chars).marked_name


def settled_expiry_text(status: Any, value: datetime) -> str:
    """A decided operation's expiry no longer counts down: say so instead of 'in 14 minutes'."""
    if getattr(status, "is_final", False) and getattr(status, "value", "") != "expired":
        shown = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"expiry {shown} (no longer matters: {status.value.replace('_', ' ')})"
    return f"expires {expiry_text(value)}"


def row_line(row: OperationRow) -> str:
    from poppy_tui.safety.who_asked import requester_text

    status = status_name(row)
    return (
        f"{row.id}  {status}  {_company_marked_name(row.company_name, row.company_domain, 60)}  "
        f"{settled_expiry_text(row.status, row.expires_at)}  "
        f"asked by {requester_text(row.origin, row.requester)}\n"
        f"{COMPANY_INDENT}{safe_line(row.summary)}"
    )


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


# Statuses whose resource is still compared with the terms: the decision is not carried out yet.
_BEFORE_SENDING = ("pending", "withdrawn", "approved")


def _resource_comparison(store: Store, record: OperationRecord) -> tuple[Any, Any]:
    """(the last read of the resource the operation changes, its comparison with the terms: all
    checks before the decision is carried out, only the promise-like text flagged after)."""
    read = store.resource_read(record.id)
    if read is None or not read.ok:
        return read, None
    from poppy_tui.safety.resource_checks import compare_resource, source_label

    terms = record.current.terms if record.status.value in _BEFORE_SENDING else None
    return read, compare_resource(terms, read.body, source_label(read.source))


def _resource_json(store: Store, record: OperationRecord) -> dict[str, Any] | None:
    read, comparison = _resource_comparison(store, record)
    if read is None:
        return None
    found = {**read.to_json(), "revision": None, "findings": [], "terms_name": [], "flagged": []}
    found.pop("revision_row", None)
    if read.revision_id is not None:
        found["revision"] = next(
            (r.revision for r in store.revisions(record.id) if r.id == read.revision_id), None
        )
    if comparison is not None:
        found["findings"] = [
            {"severity": f.severity, "code": f.code, "message": f.message, "field": f.field}
            for f in comparison.findings
        ]
        found["terms_name"] = sorted(comparison.named)
        found["flagged"] = sorted(comparison.flagged)
    return found


def _resource_lines(store: Store, record: OperationRecord) -> list[str]:
    """The resource as last read (agent/resource_read.py), as the review shows it: what the
    Company's API says, set apart from the terms and never part of what the person approves."""
    read, comparison = _resource_comparison(store, record)
    if read is None:
        return []
    from poppy_tui.safety.resource_checks import resource_rows, source_label

    settled = record.status.value not in _BEFORE_SENDING
    head = (
        "Before the decision, what the Company's API said (not part of the deal)"
        if settled
        else "Now, what the Company's API says (not part of what you approve)"
    )
    if read.state == "no_read_offered":
        reason = (read.problem or "").removeprefix("no read offered").lstrip(": ")
        return [f"{head}: no read offered ({safe_line(reason or 'nothing safe to read', 300)})"]
    where = f" from {source_label(read.source)}" if read.source else ""
    if not read.ok:
        return [
            f"{head}: couldn't read it{where} at {stamp_text(read.read_at)}: "
            f"{safe_line(read.problem or 'no answer', 300)}"
        ]
    lines = [f"{head}, read{where} at {stamp_text(read.read_at)}:"]
    named = comparison.named if comparison is not None else frozenset()
    flagged = comparison.flagged if comparison is not None else frozenset()
    for key, value in resource_rows(read.body):
        if key in flagged:
            lines.append(
                f"{COMPANY_INDENT}! {safe_line(key, 80)}: {safe_line(value)} "
                "(reads like a promise: binds nothing)"
            )
            continue
        mark = "> " if key in named else ""
        lines.append(f"{COMPANY_INDENT}{mark}{safe_line(key, 80)}: {safe_line(value)}")
    if named:
        lines.append(f"{COMPANY_INDENT}(> marks a field the terms name)")
    if comparison is not None and not settled:
        for finding in comparison.findings:
            lines.append(f"{finding.severity.upper()}: {safe_line(finding.message, 600)}")
    return lines


def show_text(store: Store, record: OperationRecord) -> str:
    """One operation, linear and labelled, for reading aloud as well as reading."""
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
    lines.extend(_resource_lines(store, record))
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


def sign_in_text(record: Any) -> str:
    """`companies list`'s sign-in column: who is signed in, and with which scopes."""
    if record is None:
        return "signed out"
    who = f" as {safe_line(record.account, 100)}" if record.account else ""
    return f"signed in{who} ({record.kind}), scopes {safe_line(' '.join(record.scopes), 500) or 'none'}"


def sign_in_json(record: Any) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "kind": record.kind,
        "account": record.account,
        "scopes": list(record.scopes),
        "issuer": record.issuer,
        "signed_in_at": record.signed_in_at,
    }
