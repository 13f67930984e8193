"""The terms against the resource they change, as read from the Company just now. No Textual, no I/O.

A person approves terms the Company wrote; the Company also answers a read of the thing the
action changes (an order, a subscription, a booking), independently of the summary. Where the
two disagree, the terms describe something other than what is there (Ops §5: "point out any
difference to the User"). Only what identifies the thing is compared, never what the action
changes: a booking change's new `starts_at` differs from the booking's on purpose, its
`previous_starts_at` must not.

- `resource_mismatch`: an ID in the terms (`item_id`, `booking_id`, `flight_number`…) that the
  resource holds under the same key with other values only (an exchange of an item the order
  doesn't contain), or a `previous_…`/`current_…` term that differs from the resource's field;
- `resource_state`: the thing the terms name is already cancelled, exchanged, refunded…, so
  the action is moot or impossible;
- `resource_price_mismatch`: a `price` in the terms that differs from the price the resource
  gives the same item;
- and what resource_claims.py finds: promise-like text (flagged, never shown plain), money,
  recipients and dates the resource gives otherwise than the terms.

Messages name both sides: the terms field and the resource field compared, and where the
resource was read from. Company values in them are sanitised and cut (`_quote`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from collections.abc import Mapping
from urllib.parse import urlsplit

from poppy_tui.protocol.timestamps import parse_rfc3339
from poppy_tui.safety.findings import _RANK, Finding, _Findings
from poppy_tui.safety.identifiers import _is_id_key, _raw_leaf
from poppy_tui.safety.money import _CURRENCY_KEYS
from poppy_tui.safety.sanitize import sanitize_line
from poppy_tui.safety.terms_values import (
    Path,
    _decimal,
    _dicts,
    _field,
    _flatten,
    _norm_key,
    _quote,
    _same_value,
    format_path,
)

__all__ = [
    "ResourceComparison",
    "check_resource",
    "compare_resource",
    "resource_rows",
    "source_label",
]

# States after which an action on the thing is moot or impossible (normalised: letters only).
MOOT_STATES = frozenset(
    {
        "cancelled",
        "canceled",
        "closed",
        "deleted",
        "refunded",
        "exchanged",
        "returned",
        "expired",
        "ended",
        "voided",
        "void",
        "terminated",
        "revoked",
        "removed",
    }
)
_STATE_KEYS = frozenset({"status", "state"})
_PRICE_KEYS = frozenset({"price", "unitprice", "itemprice"})
# Terms words that say a value describes the thing as it is, not as it will be.
_PRESENT_PREFIX = re.compile(
    r"^(?i:previous|current|old|from|existing|original)(?:[_\-]|(?=[A-Z]))(.+)$"
)
_MAX_LISTED = 5


@dataclass(frozen=True)
class ResourceComparison:
    findings: tuple[Finding, ...]
    # Resource fields the terms name (format_path of the resource's leaves), to highlight.
    named: frozenset[str] = field(default_factory=frozenset)
    # Resource fields whose text reads like a promise (resource_claims.py), shown flagged.
    flagged: frozenset[str] = field(default_factory=frozenset)


def check_resource(terms: Any, resource: Any, source: str) -> list[Finding]:
    return list(compare_resource(terms, resource, source).findings)


def source_label(source: str) -> str:
    """Where a read came from, for the screen: `GET /api/orders/ord_7Hk2` (the origin is the
    Company's, shown beside its name), `MCP get_subscription(subscription_id=sub_6Tc1)`; sanitised."""
    if source.startswith("GET "):
        parts = urlsplit(source[4:])
        return sanitize_line(
            "GET " + (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), 200
        ).text
    return sanitize_line(source, 200).text


def resource_rows(resource: Any) -> list[tuple[str, str]]:
    """(path, value) for every leaf of the resource, sanitised, never cut (the terms table's rule)."""
    from poppy_tui.safety.terms_values import terms_rows

    if isinstance(resource, Mapping):
        return terms_rows(resource)
    return [("(value)", sanitize_line(str(resource), 10_000).text)]


def compare_resource(terms: Any, resource: Any, source: str) -> ResourceComparison:
    """Findings, danger first, and the resource fields they looked at. `source` says where the
    resource was read from (`GET /api/orders/ord_7Hk2`), for the messages. Never raises."""
    findings = _Findings()
    named: set[str] = set()
    flagged: frozenset[str] = frozenset()
    if not isinstance(resource, Mapping):
        return ResourceComparison((), frozenset())
    if not isinstance(terms, Mapping) or not terms:
        terms = {}
    where = sanitize_line(source, 120).text
    try:
        leaves = _flatten(resource)
        by_key: dict[str, list[tuple[Path, Any]]] = {}
        for path, value in leaves:
            key = _leaf_key_raw(path)
            if key is not None:
                by_key.setdefault(_norm_key(key), []).append((path, value))
        from poppy_tui.safety.resource_claims import check_claims

        flagged = check_claims(findings, terms, resource, where)
        if terms:
            objects = _named_objects(terms, resource, by_key, source, named)
            _check_ids(findings, terms, resource, by_key, source, where, named)
            _check_present_values(findings, terms, resource, where, named)
            _check_states(findings, objects, where, named)
            _check_prices(findings, terms, objects, where, named)
    except Exception:  # noqa: BLE001 - hostile input must not hide the other findings
        findings.add(
            "check_failed",
            f"poppy could not finish comparing the terms with what {where} returned; treat it with suspicion.",
            None,
        )
    findings.close_caps()
    ordered = sorted(findings.items, key=lambda f: _RANK[f.severity])
    return ResourceComparison(tuple(ordered), frozenset(named), flagged)


# ---- what the terms name ------------------------------------------------------------------------


def _leaf_key_raw(path: Path) -> str | None:
    return _raw_leaf(path)


def _term_ids(terms: Mapping[str, Any]) -> list[tuple[Path, str, str]]:
    """(terms path, normalised key, value) of every ID the terms give."""
    found = []
    for path, value in _flatten(terms):
        key = _raw_leaf(path)
        if key is None or not isinstance(value, str) or not value.strip():
            continue
        if _norm_key(key) in _CURRENCY_KEYS or not _is_id_key(key) or _PRESENT_PREFIX.match(key):
            continue
        found.append((path, _norm_key(key), value))
    return found


def _own_id_key(norm_key: str, source: str) -> bool:
    """`booking_id` may be a resource's plain `id` when it was read as a booking
    (`GET /bookings/bk_1`, `get_booking`)."""
    if not norm_key.endswith("id") or len(norm_key) <= 2:
        return False
    return norm_key[:-2] in _norm_key(source)


def _named_objects(
    terms: Mapping[str, Any],
    resource: Mapping[str, Any],
    by_key: dict[str, list[tuple[Path, Any]]],
    source: str,
    named: set[str],
) -> list[tuple[Path, Mapping[str, Any]]]:
    """The resource itself and each object in it that holds an ID the terms give (the item an
    exchange names), deepest last."""
    objects: dict[Path, Mapping[str, Any]] = {(): resource}
    containers = dict(_dicts(resource))
    for _, key, value in _term_ids(terms):
        for path, held in by_key.get(key, []):
            if isinstance(held, str) and _same_value(held, value) and len(path) > 1:
                parent = path[:-1]
                if parent in containers:
                    objects[parent] = containers[parent]
                    named.add(format_path(path))
    return sorted(objects.items(), key=lambda item: len(item[0]))


# ---- the checks ---------------------------------------------------------------------------------


def _check_ids(
    findings: _Findings,
    terms: Mapping[str, Any],
    resource: Mapping[str, Any],
    by_key: dict[str, list[tuple[Path, Any]]],
    source: str,
    where: str,
    named: set[str],
) -> None:
    for path, key, value in _term_ids(terms):
        held = [
            (p, v)
            for p, v in by_key.get(key, [])
            if isinstance(v, (str, int)) and not isinstance(v, bool)
        ]
        if (
            not held
            and "id" in resource
            and _own_id_key(key, source)
            and isinstance(resource["id"], (str, int))
        ):
            held = [(("id",), resource["id"])]
        if not held:
            continue  # the resource doesn't say: nothing to compare
        same = [p for p, v in held if _same_value(v, value)]
        # The field that matches, or, when none does, every field it was compared with.
        named.update(format_path(p) for p in (same or [p for p, _ in held]))
        if same:
            continue
        resource_key = sanitize_line(_raw_leaf(held[0][0]) or key, 60).text
        others = ", ".join(_quote(v) for _, v in held[:_MAX_LISTED])
        more = f" and {len(held) - _MAX_LISTED} more" if len(held) > _MAX_LISTED else ""
        findings.add_capped(
            "resource_mismatch",
            f"The terms name {_field(path)} {_quote(value)}, but what {where} returned just now holds no "
            f"{resource_key} {_quote(value)}: it holds {others}{more}. The terms may change something "
            "other than what is there.",
            _field(path),
        )


def _check_present_values(
    findings: _Findings,
    terms: Mapping[str, Any],
    resource: Mapping[str, Any],
    where: str,
    named: set[str],
) -> None:
    """`previous_starts_at` in the terms is the resource's `starts_at` as it is now."""
    top = {_norm_key(k): (k, v) for k, v in resource.items() if isinstance(k, str)}
    for key, value in terms.items():
        if not isinstance(key, str) or isinstance(value, (Mapping, list)):
            continue
        match = _PRESENT_PREFIX.match(key)
        if not match or _norm_key(match.group(1)) not in top:
            continue
        resource_key, held = top[_norm_key(match.group(1))]
        if isinstance(held, (Mapping, list)):
            continue
        named.add(format_path((resource_key,)))
        if _same_value(value, held) or _same_moment(value, held):
            continue
        findings.add_capped(
            "resource_mismatch",
            f"The terms say {_field((key,))} is {_quote(value)}, but what {where} returned just now has "
            f"{format_path((resource_key,))} {_quote(held)}. The terms may describe something other than what is there.",
            _field((key,)),
        )


def _check_states(
    findings: _Findings, objects: list[tuple[Path, Mapping[str, Any]]], where: str, named: set[str]
) -> None:
    for path, obj in objects:
        for key, value in obj.items():
            if (
                not isinstance(key, str)
                or _norm_key(key) not in _STATE_KEYS
                or not isinstance(value, str)
            ):
                continue
            state = "".join(ch for ch in value.casefold() if ch.isalpha())
            if state not in MOOT_STATES:
                continue
            shown = format_path((*path, key))
            named.add(shown)
            thing = "it" if not path else f"{format_path(path)}"
            findings.add(
                "resource_state",
                f"What {where} returned just now says {thing} is {_quote(value)} ({shown}): the action may be "
                "moot or impossible, and the terms don't say so.",
                None,
            )


def _check_prices(
    findings: _Findings,
    terms: Mapping[str, Any],
    objects: list[tuple[Path, Mapping[str, Any]]],
    where: str,
    named: set[str],
) -> None:
    """A `price` in the terms against the price of the most specific object the terms name."""
    for key, value in terms.items():
        if not isinstance(key, str) or _norm_key(key) not in _PRICE_KEYS:
            continue
        ours = _money(value)
        if ours is None:
            continue
        for path, obj in reversed(objects):
            match = next(
                (k for k in obj if isinstance(k, str) and _norm_key(k) == _norm_key(key)), None
            )
            if match is None:
                continue
            theirs = _money(obj[match])
            if theirs is None:
                break
            named.add(format_path((*path, match)))
            same_currency = ours[1] is None or theirs[1] is None or ours[1] == theirs[1]
            if ours[0] != theirs[0] or not same_currency:
                findings.add_capped(
                    "resource_price_mismatch",
                    f"The terms give {_field((key,))} as {_quote(value)}, but what {where} returned just now "
                    f"gives {format_path((*path, match))} as {_quote(obj[match])}.",
                    _field((key,)),
                )
            break


def _money(value: Any) -> tuple[Decimal, str | None] | None:
    if isinstance(value, Mapping):
        amount = _decimal(value.get("amount", value.get("value")))
        currency = value.get("currency")
        if amount is None:
            return None
        return abs(amount), currency.strip().upper() if isinstance(currency, str) else None
    amount = _decimal(value)
    return (abs(amount), None) if amount is not None else None


def _same_moment(a: Any, b: Any) -> bool:
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    try:
        return parse_rfc3339(a.strip()) == parse_rfc3339(b.strip())
    except Exception:  # noqa: BLE001 - not a date-time: they differ
        return False
