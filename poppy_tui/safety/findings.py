"""Findings: what a check reports, with its severity. No Textual.

Codes and severities are listed in docs/safety.md and in CODES below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from poppy_tui.safety.wording import count as counted

__all__ = ["CODES", "Finding", "Severity"]

Severity = Literal["danger", "warning", "info"]

# code -> severity. A few codes have two severities; the stronger one is listed
# and docs/safety.md says when the weaker one applies.
CODES: dict[str, Severity] = {
    "request_mismatch": "danger",
    "amount_mismatch": "danger",
    "currency_mismatch": "danger",
    "direction_mismatch": "danger",
    "summary_amount_not_in_terms": "danger",
    "amount_not_in_summary": "warning",
    "id_mismatch": "danger",
    "id_not_in_summary": "warning",
    "date_mismatch": "danger",
    "date_not_in_summary": "warning",
    "summary_date_not_in_terms": "warning",
    "quantity_mismatch": "danger",
    "quantity_not_in_summary": "warning",
    "expired": "danger",
    "expires_soon": "warning",
    "no_terms": "warning",
    "bidi_control": "danger",
    "escape_sequence": "danger",
    "control_character": "warning",
    "invisible_character": "warning",
    "markup_tag": "warning",
    "mixed_script": "danger",  # warning when no single word mixes scripts
    "revision_reused": "danger",
    "operation_reused": "danger",  # safety/request_reuse.py
    "terms_changed": "warning",
    "amount_changed": "warning",
    "summary_changed": "warning",
    "expiry_changed": "info",
    "new_revision": "info",
    "different_operation": "info",
    "check_failed": "danger",
    # safety/resource_checks.py: the terms against the resource as read just now
    "resource_mismatch": "danger",
    "resource_state": "danger",
    "resource_price_mismatch": "danger",
    # safety/resource_claims.py: what the read says that the terms don't (never the deal)
    "resource_money_claim": "danger",
    "resource_money_mismatch": "danger",
    "resource_promise": "warning",
    "resource_recipient_mismatch": "warning",
    "resource_date_mismatch": "warning",
}

_RANK = {"danger": 0, "warning": 1, "info": 2}
_MAX_PER_CODE = 10


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str
    field: str | None = None


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._seen: set[tuple[str, str | None, str]] = set()
        self._per_code: dict[str, int] = {}

    def add(
        self, code: str, message: str, field: str | None = None, severity: Severity | None = None
    ) -> None:
        key = (code, field, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(Finding(severity or CODES[code], code, message, field))

    def add_capped(
        self, code: str, message: str, field: str | None, severity: Severity | None = None
    ) -> None:
        count = self._per_code.get(code, 0)
        self._per_code[code] = count + 1
        if count < _MAX_PER_CODE:
            self.add(code, message, field, severity)

    def close_caps(self) -> None:
        for code, count in self._per_code.items():
            if count > _MAX_PER_CODE:
                self.add(
                    code,
                    f"…and {counted(count - _MAX_PER_CODE, 'more field')} with the same problem.",
                    None,
                )
