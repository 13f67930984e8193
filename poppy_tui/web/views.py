"""What the pages show, read from the store and checked as the TUI checks it: the list of what
waits, and one operation's review (the same checks, holds, banner and words as the TUI's review
screen: agent/review_words.py). Everything a Company wrote is Markup from web/html.py."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup

from poppy_tui.agent.review_words import (
    approve_blocked,
    badge_counts,
    banner,
    checks_title,
    review_findings,
    severity_label,
)
from poppy_tui.agent.status_words import (
    ATTEMPT_LABELS,
    IN_PROGRESS_STATUSES,
    INBOX_STATUSES,
    checks_summary,
    countdown,
    interface_label,
    local_time,
    record_status_label,
    record_status_meaning,
)
from poppy_tui.agent.store.records import Status
from poppy_tui.safety.who_asked import asked_by_line, short_requester
from poppy_tui.web import html

log = logging.getLogger(__name__)

DECLINABLE = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)
RECENT = 20
# Labels for the buttons the banner's key hints stand for (review_words.Banner.head(keys=False)).
BUTTONS = {
    "approve": "Approve…",
    "decline": "Decline…",
    "withdraw": "Withdraw",
    "resolve": "I checked…",
}


def _iso(moment: datetime | None) -> str:
    return "" if moment is None else moment.isoformat()


@dataclass
class Row:
    id: int
    company: Markup
    via: str
    summary: Markup
    amount: Markup | None
    status: str
    expires_at: str
    expires_in: str
    dangers: int
    warnings: int
    requester: Markup | None = None
    awaits_decision: bool = False  # its expiry counts down beside it


def _rows(store: Any, rows: list[Any], now: datetime, min_read_seconds: float) -> list[Row]:
    from poppy_tui.agent.revision_checks import check_record
    from poppy_tui.safety.checker import CHECKER_VERSION

    stored = store.current_checks([row.id for row in rows], CHECKER_VERSION)
    out = []
    for row in rows:
        checks = stored.get(row.id)
        if checks is not None:
            amount, findings = checks.amount, checks.findings
        else:
            try:
                checked = check_record(store, store.get_operation(row.id), now, min_read_seconds)
                amount, findings = checked.amount, checked.findings
            except Exception:  # a damaged row still lists; its review says why
                log.warning("checking operation %s for the list failed", row.id, exc_info=True)
                amount, findings = None, ()
        dangers, warnings = badge_counts(findings)
        # Who asked, as the TUI's inbox row says it (safety/who_asked.py: already neutralised).
        requester = short_requester(row.origin, row.requester) if row.origin else None
        out.append(
            Row(
                id=row.id,
                company=html.company(row.company_name, row.company_domain, 60, with_domain=False),
                via=interface_label(row.interface),
                summary=html.line(_first_line(row.summary), 240),
                amount=html.line(amount, 60) if amount else None,
                status=record_status_label(row),
                expires_at=_iso(row.expires_at),
                expires_in=countdown((row.expires_at - now).total_seconds()),
                dangers=dangers,
                warnings=warnings,
                requester=Markup.escape(requester) if requester else None,
                awaits_decision=row.status in (Status.PENDING, Status.WITHDRAWN),
            )
        )
    return out


def _first_line(text: str) -> str:
    for candidate in str(text).split("\n", 50):
        if candidate.strip():
            return candidate.strip()
    return ""


def inbox(store: Any, now: datetime, min_read_seconds: float) -> dict[str, Any]:
    waiting = store.list_operations(list(INBOX_STATUSES), newest_first=False, limit=200)
    waiting.sort(key=lambda row: row.expires_at)
    moving = store.list_operations(list(IN_PROGRESS_STATUSES), newest_first=False, limit=200)
    settled = store.list_operations(
        [Status.PERFORMED, Status.NOT_PERFORMED, Status.DECLINED, Status.EXPIRED], limit=RECENT
    )
    return {
        "waiting": _rows(store, waiting, now, min_read_seconds),
        "moving": _rows(store, moving, now, min_read_seconds),
        "settled": _rows(store, settled, now, min_read_seconds),
    }


@dataclass
class FindingView:
    severity: str
    label: str
    message: Markup
    field: Markup | None


@dataclass
class Review:
    """One operation's review, as the page shows it."""

    record: Any
    revision_id: int
    company: Markup
    company_plain: str
    domain: Markup
    base_url: Markup
    supports_operations: bool
    company_warning: str | None
    operation_id: Markup
    revision: Markup
    revision_number: int
    revision_count: int
    via: str
    received: str
    owner: str | None
    expires_at: str
    expires_text: str
    expires_in: str
    settled: str | None
    status: str
    status_value: str
    banner_head: str
    banner_meaning: str | None
    grace_until: str | None
    blocked: tuple[str, bool] | None
    findings: list[FindingView]
    findings_title: str
    dangers: int
    warnings: int
    changes: list[Markup]
    summary: Markup
    summary_first: Markup
    terms: list[tuple[Markup, Markup]] | None
    request: list[tuple[str, Markup]]
    attempts: list[Markup]
    outcome: Markup | None
    amount: Markup | None
    can_decline: bool
    can_withdraw: bool
    can_resolve: bool
    waiting_sign_in: bool
    unsignable: str | None
    raw: Markup = Markup("")
    requester: Markup | None = None
    # Where it stands, in the words `poppy-tui show` (and the MCP tools) say it: Agent.explain.
    where: Markup = Markup("")
    extra: dict[str, Any] = field(default_factory=dict)


def review(
    agent: Any,
    operation_row: int,
    now: datetime,
    *,
    shown_revision_id: int | None,
    arming_left: float,
) -> Review:
    """The review of `operation_row`. `shown_revision_id`: the revision the page showed the person
    (None when it is shown now for the first time: then the current one); `arming_left`: seconds
    of the arming delay for this device and revision."""
    from poppy_tui.agent.revision_checks import check_record
    from poppy_tui.agent.review_words import (
        account_findings_of,
        account_hold_of,
        account_standing_of,
    )
    from poppy_tui.safety.account_owner import owner_line
    from poppy_tui.safety.terms_values import terms_rows

    store = agent.store
    record = store.get_operation(operation_row)
    current = record.current
    company = record.company
    is_open = record.status.is_open
    held = store.earlier_in_doubt(record.id) if is_open else []
    done_before = store.same_action_performed(record.id) if is_open else []
    # The sign-in's account as the TUI's review reads it: another account, or one not shown to
    # be the operation's (its approval held until the person says whose sign-in this is).
    standing, other = account_standing_of(store, record)
    checked = check_record(store, record, now, agent.config.min_read_seconds)
    resource = _resource(store, record, checked)
    findings = review_findings(
        record,
        held=held,
        done_before=done_before,
        other_account=other,
        account=account_findings_of(record, standing, other),
        checked=checked.findings,
        resource=resource["findings"] if resource else (),
    )
    dangers, warnings = badge_counts(findings)
    shown = current.id if shown_revision_id is None else shown_revision_id
    blocked = approve_blocked(
        record,
        loaded=True,
        readable=checked.operation is not None,
        shown_revision_id=shown,
        now=now,
        held=held,
        other_account=other,
        arming_left=arming_left,
    )
    # Only the arming delay stands in the way: the page shows Approve, which works once it ends.
    arming_only = (
        arming_left > 0
        and blocked is not None
        and (
            approve_blocked(
                record,
                loaded=True,
                readable=checked.operation is not None,
                shown_revision_id=shown,
                now=now,
                held=held,
                other_account=other,
            )
            is None
        )
    )
    problem = agent.signing_problem() if is_open else None
    from poppy_tui.agent.earlier_decline import declined_earlier

    explained = agent.explain(record.id)
    said = banner(
        record,
        now,
        arming_left=arming_left,
        unsignable=problem,
        key_for=lambda binding, key: BUTTONS.get(binding, key),
        # The same banner as the TUI's review: a decline of an earlier revision said, and an
        # approval's standing in the lifecycle's words (Agent.explain).
        declined_before=declined_earlier(store, record),
        where_it_stands=explained if record.status in (Status.APPROVED, Status.SENDING) else None,
        account_hold=account_hold_of(record, standing),
        company_stopped=_company_stopped(agent, company),
    )
    revisions = store.revisions(record.id)
    number = next((i for i, r in enumerate(revisions, 1) if r.id == current.id), len(revisions))
    changes: list[Markup] = []
    if checked.previous_operation is not None and checked.operation is not None:
        changes = _changes(checked.previous, checked.previous_operation, checked.operation)
    terms = (
        None
        if current.terms is None
        else [(html.line(k, 200), html.text(v)) for k, v in terms_rows(current.terms)]
    )
    grace_until = (
        record.send_after if record.status == Status.APPROVED and record.send_after else None
    )
    settled = (
        record_status_label(record)
        if record.status.is_final and record.status != Status.EXPIRED
        else None
    )
    attempts = store.attempts(record.id)
    where = explained.sentence(local_time)
    store.mark_seen(current.id)
    return Review(
        record=record,
        revision_id=current.id,
        company=html.company(company.name, company.domain, 80, with_domain=False),
        company_plain=html.plain(company.name, 80),
        domain=html.line(company.domain, 120),
        base_url=html.line(company.base_url, 120),
        supports_operations=company.supports_operations,
        company_warning=html.company_warning(company.name, company.domain),
        operation_id=html.line(record.operation_id, 80),
        revision=html.line(current.revision, 80),
        revision_number=number,
        revision_count=len(revisions),
        via=interface_label(record.interface),
        received=local_time(current.received_at),
        owner=owner_line(record.account) if record.account_owned else None,
        expires_at=_iso(current.expires_at),
        expires_text=local_time(current.expires_at),
        expires_in=countdown((current.expires_at - now).total_seconds()),
        settled=settled,
        status=record_status_label(record),
        status_value=record.status.value,
        banner_head=said.head(keys=False),
        banner_meaning=said.meaning,
        grace_until=_iso(_parse(grace_until)) if grace_until else None,
        blocked=blocked,
        findings=[
            FindingView(
                f.severity,
                severity_label(f.severity),
                html.text(f.message),
                html.line(f"[{f.field}]", 80) if getattr(f, "field", None) else None,
            )
            for f in findings
        ],
        findings_title=checks_title(findings),
        dangers=dangers,
        warnings=warnings,
        changes=changes,
        summary=html.summary(current.summary),
        summary_first=html.line(_first_line(current.summary), 240),
        terms=terms,
        request=_request(record.request),
        attempts=[_attempt_line(a) for a in attempts],
        outcome=html.json_text(record.outcome) if record.outcome is not None else None,
        amount=html.line(checked.amount, 60) if checked.amount else None,
        can_decline=record.status in DECLINABLE,
        can_withdraw=record.status == Status.APPROVED,
        can_resolve=record.status == Status.OUTCOME_UNKNOWN,
        waiting_sign_in=bool(record.waiting_sign_in),
        unsignable=problem,
        raw=html.json_text(current.raw),
        # The explanation quotes what the Company and the sign-in said (holds, outcome details).
        where=html.line(where, 600),
        # Everyone who asked, as the TUI's review header and `show` say it (safety/who_asked.py).
        requester=Markup.escape(asked_by_line(asked))
        if (asked := store.asked_by(record.id))
        else None,
        extra={
            "meaning": record_status_meaning(record),
            "checks": checks_summary(dangers, warnings),
            "arming_left": round(arming_left, 1),
            "arming_only": arming_only,
            "resource": resource,
        },
    )


# While the decision is still to be carried out, the resource as read from the Company now is
# compared with the terms (safety/resource_checks.py), as on the TUI's review.
BEFORE_SENDING = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)


def _company_stopped(agent: Any, company: Any) -> str | None:
    """What the TUI's review says of an approval for a demo's Company once the demo has ended
    (agent/demo_marker.py): nothing can reach it, so it will not be sent. Read on every page, as
    the page may be open in another process while the demo stops."""
    from poppy_tui.agent.demo_marker import stopped_demo, stopped_demo_line

    run = stopped_demo(agent.paths.data_dir)
    if run is None or not run.served(company.base_url):
        return None
    # The name is the Company's: the template's `clean` neutralises the whole line.
    return stopped_demo_line(run, str(company.name)[:60])


def _resource(store: Any, record: Any, checked: Any) -> dict[str, Any] | None:
    from poppy_tui.safety.resource_checks import compare_resource, resource_rows, source_label

    if record.status not in BEFORE_SENDING or checked.operation is None:
        return None
    read = store.resource_read(record.id)
    if read is None:
        return None
    if not read.ok:
        return {
            "findings": (),
            "source": html.line(source_label(read.source), 200) if read.source else None,
            "read_at": local_time(read.read_at),
            "problem": html.line(read.problem or "nothing usable came back", 300),
            "rows": [],
        }
    comparison = compare_resource(checked.operation.terms, read.body, source_label(read.source))
    return {
        "findings": comparison.findings,
        "source": html.line(source_label(read.source), 200),
        "read_at": local_time(read.read_at),
        "problem": None,
        "rows": [(html.line(k, 200), html.text(v)) for k, v in resource_rows(read.body)],
    }


def _parse(stamp: str) -> datetime | None:
    from poppy_tui.agent.status_words import parse_stamp

    return parse_stamp(stamp)


def _changes(previous: Any, previous_operation: Any, operation: Any) -> list[Markup]:
    """What changed since the revision the person saw: the review screen's "NEW TERMS" lines."""
    from poppy_tui.safety.discrepancies import diff_revisions

    diff = diff_revisions(previous_operation, operation)
    label = {"new terms": "NEW TERMS", "new expiry": "NEW EXPIRY"}.get(
        diff.kind.label, "NEW REVISION"
    )
    seen = "you saw" if previous.seen_at else "before this one (you did not open it)"
    lines = [
        Markup("<strong>{}:</strong> {} {} {}. {}").format(
            label,
            "only the expiry changed since revision"
            if diff.kind.label == "new expiry"
            else "changed since revision",
            html.line(previous.revision, 80),
            seen,
            "An approval covers one revision, so this one needs your decision.",
        )
    ]
    if not diff.changed:
        lines.append(Markup("The summary, terms and expiry are the same."))
    for change in diff.terms_changes:
        lines.append(
            Markup("<strong>{}</strong> {}: was {}, now {}").format(
                html.line(change.path, 120),
                change.kind,
                html.text(change.old) if change.old is not None else "(absent)",
                html.text(change.new) if change.new is not None else "(absent)",
            )
        )
    if diff.summary_changed:
        lines.append(Markup("The summary changed: read it again below."))
    return lines


def _request(request: Any) -> list[tuple[str, Markup]]:
    from poppy_tui.protocol.requests import ApiRequest, ConversationRequest, McpRequest

    def pretty(value: Any) -> Markup:
        return html.text(json.dumps(value, indent=2, ensure_ascii=False, default=str))

    if isinstance(request, ApiRequest):
        return [
            ("API request", html.text(f"{request.method} {request.url}")),
            ("Body", pretty(request.body) if request.body is not None else Markup("(no body)")),
        ]
    if isinstance(request, McpRequest):
        return [
            ("MCP tool call", html.text(f"{request.tool} on {request.server_url}")),
            ("Arguments", pretty(request.arguments)),
        ]
    if isinstance(request, ConversationRequest):
        return [
            ("Conversation message", html.text(f"to {request.endpoint}")),
            ("Text", html.text(request.text)),
        ]
    return [("Request", html.text(repr(request)))]


def _attempt_line(attempt: Any) -> Markup:
    line = f"#{attempt.number}  started {local_time(attempt.started_at)}"
    if attempt.finished_at is None:
        line += "  — no answer recorded yet (in flight, or the sender stopped)"
    else:
        line += f"  → {ATTEMPT_LABELS.get(attempt.outcome or '', attempt.outcome or '?')}"
        if attempt.http_status is not None:
            line += f" (HTTP {attempt.http_status})"
    if attempt.detail:
        return Markup("{}<br>{}").format(line, html.text(attempt.detail))
    return Markup("{}").format(line)
