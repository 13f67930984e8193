"""Identifiers: order, item and SKU IDs in the terms against the summary (Ops §5). No Textual."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

from poppy_tui.safety.dates import _dates_of
from poppy_tui.safety.extract import normalize_for_compare
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.money import _CURRENCY_KEYS
from poppy_tui.safety.terms_values import (
    Path,
    _decimal,
    _field,
    _flatten,
    _norm_key,
    _quote,
    format_path,
)

_ID_KEY_WORDS = frozenset({"id", "sku", "number", "num", "no", "ref", "reference", "code"})
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _raw_leaf(path: Path) -> str | None:
    for element in reversed(path):
        if isinstance(element, str):
            return element
    return None


def _is_id_key(key: str | None) -> bool:
    """order_id, orderId, SKU, promo-code; not "paid" or "valid"."""
    if not key:
        return False
    words = _KEY_WORDS.findall(key)
    return bool(words) and words[-1].lower() in _ID_KEY_WORDS


_ID_VALUE = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+")
_ID_PREFIX = re.compile(r"([A-Za-z]+)[_-]")


def _is_id_like(key: str | None, value: str) -> bool:
    if not (2 <= len(value) <= 200) or any(ch.isspace() for ch in value):
        return False
    if (
        (key and _norm_key(key) in _CURRENCY_KEYS)
        or _decimal(value) is not None
        or _dates_of(value)
    ):
        return False
    if _is_id_key(key):
        return True
    return (
        bool(_ID_VALUE.fullmatch(value))
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def _mentions_id(text: str, value: str) -> bool:
    needle = normalize_for_compare(value)
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])" + re.escape(needle) + r"(?![A-Za-z0-9_])", re.IGNORECASE
    )
    if pattern.search(text):
        return True
    parts = re.split(r"[-_]", needle)
    if len(parts) > 1 and not any(c.isdigit() for c in needle) and all(parts):
        return all(
            re.search(r"(?<![A-Za-z0-9])" + re.escape(p) + r"(?![A-Za-z0-9])", text, re.IGNORECASE)
            for p in parts
        )
    return False


def _check_ids(
    findings: _Findings,
    terms: Mapping[str, Any],
    text: str,
    confirmed: set[str],
    free_text: bool = False,
) -> None:
    """Terms IDs against the summary. `free_text`: the operation answers a conversation
    message, which names no IDs, so an ID the summary leaves out can't be checked either
    way and is a note (info), not a warning on every honest operation. An ID the summary
    replaces with another of the same kind stays a danger."""
    for path, value in _flatten(terms):
        if not isinstance(value, str) or not _is_id_like(_raw_leaf(path), value):
            continue
        if _mentions_id(text, value):
            continue
        prefix = _ID_PREFIX.match(value)
        if prefix:
            others = re.findall(
                r"(?<![A-Za-z0-9_-])"
                + re.escape(prefix.group(1))
                + r"[_-][A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*",
                text,
            )
            if others:
                findings.add(
                    "id_mismatch",
                    f"The terms say {format_path(path)} = {_quote(value)}, but the summary mentions {_quote(others[0])}.",
                    _field(path),
                )
                continue
        if value in confirmed:
            continue  # the User's own request names it; the summary may describe it in words
        if free_text:
            findings.add(
                "id_not_in_summary",
                f"The terms include {format_path(path)} = {_quote(value)}, which the summary doesn't mention; "
                "a conversation names no IDs, so poppy could not check it.",
                _field(path),
                "info",
            )
            continue
        findings.add(
            "id_not_in_summary",
            f"The terms include {format_path(path)} = {_quote(value)}, which the summary doesn't mention.",
            _field(path),
        )
