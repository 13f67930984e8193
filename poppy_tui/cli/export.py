"""`history --format ndjson|csv --since --until`: exporting the record for scripts and spreadsheets.

ndjson is lossless: one `show --json` record per line (revisions, decisions, attempts, events,
outcome), ASCII-escaped like all our JSON. csv is for spreadsheets: one row per operation, nested
values as ASCII-escaped JSON, Company text sanitised as on a terminal, and a cell that a
spreadsheet would run as a formula (= + - @) starts with an apostrophe.
"""

from __future__ import annotations

import csv
import json
import sys
from datetime import datetime, UTC
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable, Iterator

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import record_json, row_json, safe_block

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRow, Store

PAGE = 500
CSV_COLUMNS = (
    "id",
    "operation_id",
    "company",
    "company_domain",
    "interface",
    "status",
    "summary",
    "terms",
    "revision",
    "revision_count",
    "approved_revision",
    "expires_at",
    "created_at",
    "updated_at",
    "decided_at",
    "outcome_detail",
    "outcome",
    "decisions",
    "attempts",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


_UNIT_SECONDS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "week": 604800,
    "weeks": 604800,
}


def parse_when(text: str | None, option: str, now: datetime | None = None) -> str | None:
    """A date, an RFC 3339 time, or a time relative to now ("10 minutes ago", "1h", "yesterday"),
    as the store's fixed-width UTC stamp (text order is time order)."""
    if text is None:
        return None
    value = _relative_time(text, now or datetime.now().astimezone())
    if value is None:
        try:
            value = datetime.fromisoformat(text.strip().replace("z", "Z"))
        except ValueError:
            raise CliError(
                f"{option} must be a date or time such as 2026-12-01, 2026-12-01T09:00:00Z, "
                f"'10 minutes ago', '1h' or 'yesterday', got {text!r}",
                Exit.USAGE,
            ) from None
    if value.tzinfo is None:
        value = value.astimezone()  # local time, as a person typing a date means it
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _relative_time(text: str, now: datetime) -> datetime | None:
    """`now` less what `text` says ("90s", "10 minutes ago", "2 d"), or local midnight for "today"
    and "yesterday"; None when `text` is not relative."""
    import re
    from datetime import timedelta

    words = text.strip().lower()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if words == "now":
        return now
    if words == "today":
        return midnight
    if words == "yesterday":
        return midnight - timedelta(days=1)
    found = re.fullmatch(r"(\d{1,6})\s*([a-z]+)(\s+ago)?", words)
    if not found or found.group(2) not in _UNIT_SECONDS:
        return None
    return now - timedelta(seconds=int(found.group(1)) * _UNIT_SECONDS[found.group(2)])


def rows_between(
    store: Store,
    statuses: Any,
    company_id: int | None,
    since: str | None,
    until: str | None,
    limit: int | None,
) -> Iterator[OperationRow]:
    """Newest change first, last changed in [since, until), at most `limit`."""
    offset = 0
    given = 0
    while True:
        page = store.list_operations(statuses, company_id=company_id, limit=PAGE, offset=offset)
        for row in page:
            if until is not None and row.updated_at >= until:
                continue
            if since is not None and row.updated_at < since:
                return
            yield row
            given += 1
            if limit is not None and given >= limit:
                return
        if len(page) < PAGE:
            return
        offset += PAGE


def _line_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=False)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        text = _line_json(value)
    else:
        text = safe_block(str(value))[0] if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_ndjson(store: Store, rows: Iterable[OperationRow], out=None) -> int:
    out = out or sys.stdout
    count = 0
    for row in rows:
        out.write(_line_json(record_json(store, store.get_operation(row.id))) + "\n")
        count += 1
    return count


def write_csv(store: Store, rows: Iterable[OperationRow], out=None) -> int:
    out = out or sys.stdout
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    count = 0
    for row in rows:
        record = record_json(store, store.get_operation(row.id))
        listed = row_json(row)
        values = {
            **listed,
            "company": row.company_name,
            "company_domain": row.company_domain,
            "outcome": record["outcome"],
            "decisions": record["decisions"],
            "attempts": record["attempts"],
        }
        writer.writerow([_cell(values.get(column)) for column in CSV_COLUMNS])
        count += 1
    return count
