"""Dates: calendar dates in the terms against those in the summary (Ops §5). No Textual."""

from __future__ import annotations

import re
from datetime import date, datetime, UTC
from typing import Any
from collections.abc import Mapping

from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.expiry import _aware
from poppy_tui.safety.extract import DateMention, find_dates
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.terms_values import _field, _flatten, _quote, format_path

_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|z|[+-]\d{2}:\d{2})?"
)


def _dates_of(value: str) -> set[date]:
    """The calendar dates a terms value names: its own date, and the UTC one."""
    text = value.strip()
    match = _ISO_DATE.fullmatch(text)
    dates: set[date] = set()
    try:
        if match:
            dates.add(date(int(match[1]), int(match[2]), int(match[3])))
        elif _ISO_DATETIME.fullmatch(text):
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            dates.add(parsed.date())
            if parsed.tzinfo is not None:
                dates.add(parsed.astimezone(UTC).date())
    except ValueError:
        return set()
    return dates


def _date_matches(mention: DateMention, dates: set[date]) -> bool:
    return any(
        d.month == mention.month
        and d.day == mention.day
        and (mention.year is None or mention.year == d.year)
        for d in dates
    )


def _check_dates(
    findings: _Findings, terms: Mapping[str, Any], text: str, operation: Operation
) -> None:
    terms_dates = [
        (path, value, dates)
        for path, value in _flatten(terms)
        if isinstance(value, str) and (dates := _dates_of(value))
    ]
    mentions = find_dates(text)
    allowed: set[date] = set()
    for _, _, dates in terms_dates:
        allowed |= dates
    expires = _aware(operation.expires_at)
    allowed |= {expires.date(), expires.astimezone(UTC).date()}
    unexplained = [m for m in mentions if not _date_matches(m, allowed)]
    missing = [
        (p, v) for p, v, dates in terms_dates if not any(_date_matches(m, dates) for m in mentions)
    ]
    for path, value in missing:
        if unexplained:
            said = ", ".join(_quote(m.text) for m in unexplained[:3])
            findings.add(
                "date_mismatch",
                f"The terms say {format_path(path)} = {_quote(value)}, but the summary gives the date {said}.",
                _field(path),
            )
        else:
            findings.add(
                "date_not_in_summary",
                f"The terms include the date {format_path(path)} = {_quote(value)}, which the summary doesn't mention.",
                _field(path),
            )
    if not missing:
        for mention in unexplained:
            findings.add(
                "summary_date_not_in_terms",
                f"The summary mentions the date {_quote(mention.text)}, which isn't in the terms.",
                "summary",
            )
