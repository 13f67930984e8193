"""Quantities: a terms count (quantity, nights, seats...) against the summary (Ops §5)."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

from poppy_tui.safety.extract import find_money
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.terms_values import _decimal, _field, _flatten, _leaf_key, format_path

_QUANTITY_KEYS = frozenset(
    {
        "quantity",
        "qty",
        "count",
        "nights",
        "seats",
        "tickets",
        "guests",
        "passengers",
        "units",
        "pieces",
        "rooms",
    }
)


def _is_quantity_key(key: str | None) -> bool:
    return key is not None and (key in _QUANTITY_KEYS or key.endswith(("quantity", "qty", "count")))


_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a": 1,
    "an": 1,
    "single": 1,
}
_QTY_PATTERNS = (
    re.compile(r"(?<![A-Za-z])(?:qty|quantity)\s*[:=]?\s*(\d+)", re.IGNORECASE),
    re.compile(r"(?<![\w.,])(\d+)\s*[x×](?![\w])"),
    re.compile(r"(?<![\w])[x×]\s*(\d+)(?![\w.,])"),
)
_WORD_NUMBER = r"(\d+|" + "|".join(w for w in _NUMBER_WORDS if len(w) > 2) + r")"


def _check_quantities(findings: _Findings, terms: Mapping[str, Any], text: str) -> None:
    numbers = {int(n) for n in (m.amount for m in find_money(text)) if n == n.to_integral_value()}
    lowered = text.lower()
    stated: list[int] = []
    for pattern in _QTY_PATTERNS:
        for found in pattern.findall(text):
            if len(stated) < 1000 and int(found) not in stated:
                stated.append(int(found))
    for path, value in _flatten(terms):
        key = _leaf_key(path)
        if not _is_quantity_key(key) or isinstance(value, bool):
            continue
        number = _decimal(value)
        if number is None or number != number.to_integral_value():
            continue
        wanted = int(number)
        said = list(stated)
        if key and key in _QUANTITY_KEYS - {"quantity", "qty", "count"}:
            noun = re.compile(
                _WORD_NUMBER + r"\s+" + re.escape(key.rstrip("s")) + r"s?(?![A-Za-z])",
                re.IGNORECASE,
            )
            for word in noun.findall(text):
                said.append(int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()])
        if said and wanted not in said:
            findings.add(
                "quantity_mismatch",
                f"The terms say {format_path(path)} = {wanted}, but the summary says {', '.join(str(n) for n in said[:3])}.",
                _field(path),
            )
            continue
        if said or wanted in numbers or wanted == 1:
            continue
        if any(
            n == wanted and re.search(rf"(?<![A-Za-z]){w}(?![A-Za-z])", lowered)
            for w, n in _NUMBER_WORDS.items()
        ):
            continue
        findings.add(
            "quantity_not_in_summary",
            f"The terms say {format_path(path)} = {wanted}, which the summary doesn't mention.",
            _field(path),
        )
