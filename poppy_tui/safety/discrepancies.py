"""Check an operation before the User is asked to approve it (Ops §5). No Textual.

The Company writes both the summary and the terms, so the summary alone could
describe something other than the terms, and the terms something other than
what we asked for. Every difference becomes a Finding the approval screen shows.
Findings are our words; any Company value quoted in one is sanitised first.
Codes and severities are listed in docs/safety.md and in findings.CODES.

Each kind of check lives in its own module (money, dates, quantities,
identifiers, request_match, text_checks, expiry, revisions); this one runs them
in order and keeps the public names importable from one place.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from collections.abc import Mapping

from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import ConversationRequest
from poppy_tui.safety.dates import _check_dates
from poppy_tui.safety.expiry import _check_expiry
from poppy_tui.safety.findings import _RANK, CODES, Finding, _Findings
from poppy_tui.safety.identifiers import _check_ids
from poppy_tui.safety.money import _check_direction, _check_money, key_amount
from poppy_tui.safety.quantities import _check_quantities
from poppy_tui.safety.request_match import _check_request, _request_values, _TermsIndex
from poppy_tui.safety.revisions import (
    RevisionDiff,
    RevisionKind,
    TermsChange,
    _check_revision,
    classify_revision,
    diff_revisions,
)
from poppy_tui.safety.summary_reading import _summary_check_text
from poppy_tui.safety.terms_values import format_path, terms_rows
from poppy_tui.safety.text_checks import _check_text

__all__ = [
    "CODES",
    "Finding",
    "RevisionDiff",
    "RevisionKind",
    "TermsChange",
    "check_operation",
    "classify_revision",
    "diff_revisions",
    "format_path",
    "key_amount",
    "terms_rows",
]


def check_operation(
    operation: Operation,
    request: Any,
    previous: Operation | None = None,
    now: datetime | None = None,
    min_read_seconds: float = 60,
    previous_seen: bool = True,
) -> list[Finding]:
    """Every discrepancy worth showing before approval, danger first.

    `request` is the ApiRequest, McpRequest or ConversationRequest that returned
    the operation (or None). A conversation has no structured request, so only
    the terms-vs-summary checks apply to it. `previous_seen` says whether the person opened
    `previous` (what the revision findings say the change is "since"). Never raises: a check that fails
    becomes a "check_failed" finding, because silence would read as "all fine".
    """
    findings = _Findings()
    stages: list[tuple[str, Any]] = [
        ("text", lambda: _check_text(findings, operation)),
        ("expiry", lambda: _check_expiry(findings, operation, now, min_read_seconds)),
    ]
    terms = operation.terms
    if not isinstance(terms, Mapping) or not terms:
        stages.append(
            (
                "terms",
                lambda: findings.add(
                    "no_terms",
                    "This operation has no structured terms, so the summary could not be checked "
                    "against them or against what you asked for. Read the summary carefully.",
                    "terms",
                ),
            )
        )
    else:
        cache: dict[str, str] = {}

        def summary_text() -> str:
            if "text" not in cache:
                cache["text"] = _summary_check_text(operation.summary)
            return cache["text"]

        stages += [
            ("request", lambda: _check_request(findings, _TermsIndex(terms), request)),
            ("money", lambda: _check_money(findings, terms, summary_text())),
            ("money direction", lambda: _check_direction(findings, terms, summary_text())),
            ("dates", lambda: _check_dates(findings, terms, summary_text(), operation)),
            ("quantities", lambda: _check_quantities(findings, terms, summary_text())),
            (
                "ids",
                lambda: _check_ids(
                    findings,
                    terms,
                    summary_text(),
                    _request_values(request),
                    free_text=isinstance(request, ConversationRequest),
                ),
            ),
        ]
    if previous is not None:
        stages.append(
            ("revision", lambda: _check_revision(findings, operation, previous, previous_seen))
        )
    for name, stage in stages:
        try:
            stage()
        except Exception:  # noqa: BLE001 - hostile input must not hide the other findings
            findings.add(
                "check_failed",
                f"poppy could not finish its {name} check on this operation; treat it with suspicion.",
                None,
            )
    findings.close_caps()
    return sorted(findings.items, key=lambda f: _RANK[f.severity])
