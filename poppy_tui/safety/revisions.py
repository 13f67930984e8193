"""Revisions: what changed since the revision the User last saw (Ops §3). No Textual."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal
from collections.abc import Mapping

from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.money import key_amount
from poppy_tui.safety.sanitize import sanitize, sanitize_line
from poppy_tui.safety.terms_values import _QUOTE_CHARS, _canonical, _flatten, _shown, format_path

__all__ = ["RevisionDiff", "RevisionKind", "TermsChange", "classify_revision", "diff_revisions"]


class RevisionKind(str, Enum):
    """What a revision is, next to the one the person saw before (Ops §3: a new revision comes
    whenever the summary, terms or expiry change; docs/safety.md, `classify_revision`).

    Only NEW_TERMS is "new terms": an expiry that moved, or a new revision ID
    over the same content, is not something new to read.
    """

    FIRST = "first"  # nothing seen before
    NEW_TERMS = "new_terms"  # the summary or the terms changed
    NEW_EXPIRY = "new_expiry"  # only expires_at changed
    SAME_CONTENT = "same_content"  # a new revision ID; summary, terms and expiry as before
    UNCHANGED = "unchanged"  # the same revision again, as it was
    REUSED = "reused"  # the same revision ID with other content (Ops §3 forbids it)
    OTHER_OPERATION = "other_operation"  # not a revision of the same operation

    @property
    def label(self) -> str:
        """Lower-case words for a header or a list: "new terms", "new expiry"."""
        return _KIND_LABELS[self]

    @property
    def needs_rereading(self) -> bool:
        """The person has something new to read (or must distrust what they read)."""
        return self in (RevisionKind.NEW_TERMS, RevisionKind.REUSED, RevisionKind.OTHER_OPERATION)


_KIND_LABELS = {
    RevisionKind.FIRST: "first revision",
    RevisionKind.NEW_TERMS: "new terms",
    RevisionKind.NEW_EXPIRY: "new expiry",
    RevisionKind.SAME_CONTENT: "new revision, nothing changed",
    RevisionKind.UNCHANGED: "same revision",
    RevisionKind.REUSED: "revision reused with other terms",
    RevisionKind.OTHER_OPERATION: "another operation",
}


@dataclass(frozen=True)
class TermsChange:
    path: str
    kind: Literal["added", "removed", "changed"]
    old: str | None
    new: str | None


@dataclass(frozen=True)
class RevisionDiff:
    """What changed between the revision the User last saw and this one.

    `summary_diff` holds unified-diff lines of the sanitised summaries.
    """

    summary_diff: tuple[str, ...]
    terms_changes: tuple[TermsChange, ...]
    summary_changed: bool
    terms_changed: bool
    expires_changed: bool

    @property
    def changed(self) -> bool:
        return self.summary_changed or self.terms_changed or self.expires_changed

    @property
    def kind(self) -> RevisionKind:
        """NEW_TERMS, NEW_EXPIRY or SAME_CONTENT: what the content change amounts to."""
        if self.summary_changed or self.terms_changed:
            return RevisionKind.NEW_TERMS
        if self.expires_changed:
            return RevisionKind.NEW_EXPIRY
        return RevisionKind.SAME_CONTENT


def classify_revision(previous: Operation | None, current: Operation) -> RevisionKind:
    """What `current` is next to `previous` (the revision the person last saw, or None).

    The UI says "new terms" only for NEW_TERMS; NEW_EXPIRY is "new expiry".
    """
    if previous is None:
        return RevisionKind.FIRST
    if previous.operation_id != current.operation_id:
        return RevisionKind.OTHER_OPERATION
    kind = diff_revisions(previous, current).kind
    if previous.revision == current.revision:
        return RevisionKind.UNCHANGED if kind is RevisionKind.SAME_CONTENT else RevisionKind.REUSED
    return kind


def _leaf_map(terms: Any) -> dict[str, Any]:
    if not isinstance(terms, Mapping):
        return {}
    return {format_path(p): v for p, v in _flatten(terms) if p}


def _change_values(old: Any, new: Any) -> tuple[str, str]:
    before, after = _shown(old), _shown(new)
    if before == after:  # 70 and "70" differ, and must not look the same
        before, after = _shown(_canonical(old)), _shown(_canonical(new))
    return before, after


def diff_revisions(previous: Operation, current: Operation) -> RevisionDiff:
    """Line diff of the summaries and key-path diff of the terms."""
    before = sanitize(previous.summary).text.splitlines()
    after = sanitize(current.summary).text.splitlines()
    summary_changed = previous.summary != current.summary
    if not summary_changed:
        summary_diff: tuple[str, ...] = ()
    elif len(before) + len(after) > 20000:
        summary_diff = (
            f"@@ the summary changed ({len(before)} lines -> {len(after)} lines); too long to compare line by line @@",
        )
    else:
        summary_diff = tuple(
            difflib.unified_diff(before, after, "previous", "current", lineterm="", n=2)
        )
    old_leaves, new_leaves = _leaf_map(previous.terms), _leaf_map(current.terms)
    changes: list[TermsChange] = []
    for path, value in old_leaves.items():
        if path not in new_leaves:
            changes.append(TermsChange(path, "removed", _shown(value), None))
        elif _canonical(value) != _canonical(new_leaves[path]) or type(value) is not type(
            new_leaves[path]
        ):
            old_text, new_text = _change_values(value, new_leaves[path])
            changes.append(TermsChange(path, "changed", old_text, new_text))
    for path, value in new_leaves.items():
        if path not in old_leaves:
            changes.append(TermsChange(path, "added", None, _shown(value)))
    terms_changed = bool(changes) or ((previous.terms is None) != (current.terms is None))
    return RevisionDiff(
        summary_diff=summary_diff,
        terms_changes=tuple(changes),
        summary_changed=summary_changed,
        terms_changed=terms_changed,
        expires_changed=previous.expires_at != current.expires_at,
    )


def _describe_change(change: TermsChange) -> str:
    if change.kind == "added":
        return f"{change.path} added ({sanitize_line(change.new or '', _QUOTE_CHARS).text})"
    if change.kind == "removed":
        return f"{change.path} removed (was {sanitize_line(change.old or '', _QUOTE_CHARS).text})"
    old = sanitize_line(change.old or "", _QUOTE_CHARS).text
    new = sanitize_line(change.new or "", _QUOTE_CHARS).text
    return f"{change.path} {old} → {new}"


def _check_revision(
    findings: _Findings, operation: Operation, previous: Operation, previous_seen: bool = True
) -> None:
    since = "since you last saw this" if previous_seen else "since the revision before"
    if previous.operation_id != operation.operation_id:
        findings.add(
            "different_operation",
            "This is a different operation from the one compared with, so no changes are shown.",
        )
        return
    diff = diff_revisions(previous, operation)
    if previous.revision == operation.revision:
        if diff.changed:
            findings.add(
                "revision_reused",
                "The Company sent different terms under the revision you already saw. "
                "A revision must never change; don't approve until this is explained.",
                "revision",
            )
        return
    if diff.terms_changed:
        listed = "; ".join(_describe_change(c) for c in diff.terms_changes[:5])
        more = f"; and {len(diff.terms_changes) - 5} more" if len(diff.terms_changes) > 5 else ""
        detail = f": {listed}{more}." if listed else "."
        findings.add("terms_changed", f"The terms changed {since}{detail}", "terms")
        old_amount, new_amount = key_amount(previous), key_amount(operation)
        if old_amount != new_amount:
            findings.add(
                "amount_changed",
                f"The amount changed from {old_amount or 'none'} to {new_amount or 'none'} {since}.",
                "terms",
            )
    if diff.summary_changed:
        findings.add("summary_changed", f"The summary changed {since}; read it again.", "summary")
    if not diff.terms_changed and not diff.summary_changed:
        if diff.expires_changed:
            findings.add("expiry_changed", f"Only the expiry time changed {since}.", "expires_at")
        else:
            findings.add(
                "new_revision",
                "This is a new revision with the same summary, terms and expiry.",
                "revision",
            )
