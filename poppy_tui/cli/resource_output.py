"""`show`'s and `show --json`'s resource part: the resource the operation changes as poppy-tui
last read it (agent/resource_read.py), compared with the terms as the review compares it, and
set apart from them: what the Company's API says is never part of what the person approves
(Ops 3, Ops 5). Every field of it is the Company's, so every one goes out sanitised."""

from __future__ import annotations

from poppy_tui.cli.safe_text import COMPANY_INDENT, safe_line
from poppy_tui.cli.status_words import stamp_text

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from poppy_tui.agent.store import OperationRecord, Store

# Statuses whose resource is still compared with the terms: the decision is not carried out yet.
_BEFORE_SENDING = ("pending", "withdrawn", "approved")


def resource_comparison(store: Store, record: OperationRecord) -> tuple[Any, Any]:
    """(the last read of the resource the operation changes, its comparison with the terms: all
    checks before the decision is carried out, only the promise-like text flagged after)."""
    read = store.resource_read(record.id)
    if read is None or not read.ok:
        return read, None
    from poppy_tui.safety.resource_checks import compare_resource, source_label

    terms = record.current.terms if record.status.value in _BEFORE_SENDING else None
    return read, compare_resource(terms, read.body, source_label(read.source))


def resource_json(store: Store, record: OperationRecord) -> dict[str, Any] | None:
    read, comparison = resource_comparison(store, record)
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


def resource_lines(store: Store, record: OperationRecord) -> list[str]:
    """The resource as last read (agent/resource_read.py), as the review shows it: what the
    Company's API says, set apart from the terms and never part of what the person approves."""
    read, comparison = resource_comparison(store, record)
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
