"""What the resource read just now says that the terms don't: never part of the deal. No Textual,
no I/O.

The read (agent/resource_read.py) is what the Company's API says now, beside the terms the person
approves (Ops 3: "the Company MUST perform only what the approved revision describes"). A hostile
or sloppy Company can put there what reads like part of the deal. So, besides the identity and
state checks of resource_checks.py:

- `resource_promise`: text that reads like a promise or a condition of the deal ("GUARANTEES a
  refund of $500.00 if you approve", "free of charge", "we will credit you") is flagged, never
  shown plain: it binds nothing; a money amount in it that the terms don't hold makes it a
  DANGER (`resource_money_claim`);
- `resource_money_mismatch` (DANGER): money the terms give under a key (a refund, a charge, a
  fee) that the resource gives under the same key as another, non-zero, amount.
What the action changes is not compared: a booking move's `starts_at`, an address change's
`address` differ from the resource's on purpose. So dates, recipients and statuses are compared
where the terms say they describe the thing as it is (`previous_…`, `current_…`: resource_checks.py,
DANGER), as are the IDs of the thing and of a recipient (`…_id`) and the thing's own state
(`resource_state`, DANGER: already cancelled, returned…); money under the same key is compared
here only where the resource gives a non-zero amount (a refund not made yet is 0, not another).

Every Company value in a message is sanitised and cut (`_quote`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from poppy_tui.safety.extract import find_money, normalize_for_compare
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.identifiers import _raw_leaf
from poppy_tui.safety.money import _terms_money
from poppy_tui.safety.sanitize import reading_text
from poppy_tui.safety.terms_values import (
    Path,
    _decimal,
    _field,
    _flatten,
    _norm_key,
    _quote,
    format_path,
)

# Words that make a value read like an undertaking or a condition of the deal.
PROMISE = re.compile(
    r"\b(?:guarantee[sd]?|guaranteed|promise[sd]?|warrant(?:y|ies|s|ed)?|assured?|"
    r"we(?:'ll| will| shall)\s+(?:refund|credit|pay|waive|reimburse|cover|send)|"
    r"will be (?:refunded|credited|waived|reimbursed|paid)|free of charge|at no (?:extra )?cost|"
    r"no (?:extra )?charge|(?:if|once|when|after) you approve|on approval|upon approval|"
    r"binding|committed to|entitled to)\b",
    re.IGNORECASE,
)
_CHANGE_PREFIX = re.compile(r"^(?i:new|to|target|requested|desired|proposed)(?:[_\-]|(?=[A-Z]))")
_PRESENT_PREFIX = re.compile(
    r"^(?i:previous|current|old|from|existing|original)(?:[_\-]|(?=[A-Z]))"
)
_PRICE_KEYS = frozenset({"price", "unitprice", "itemprice"})  # resource_checks.py compares these
_MAX_FLAGGED = 20


def check_claims(
    findings: _Findings, terms: Mapping[str, Any], resource: Mapping[str, Any], where: str
) -> frozenset[str]:
    """Add the findings above; return the resource fields whose text reads like a promise
    (format_path of the leaf), to show flagged."""
    flagged = _check_promises(findings, terms, resource, where)
    _check_money(findings, terms, resource, where)
    return flagged


# ---- promises --------------------------------------------------------------------------------


def _terms_amounts(terms: Mapping[str, Any]) -> set[Decimal]:
    found = {abs(m.amount) for m in _terms_money(terms)}
    for _, value in _flatten(terms):
        if isinstance(value, str):
            found |= {abs(m.amount) for m in find_money(normalize_for_compare(reading_text(value)))}
    return found


def _check_promises(
    findings: _Findings, terms: Mapping[str, Any], resource: Mapping[str, Any], where: str
) -> frozenset[str]:
    flagged: set[str] = set()
    amounts: set[Decimal] | None = None
    for path, value in _flatten(resource):
        if not isinstance(value, str) or len(flagged) >= _MAX_FLAGGED:
            continue
        read = normalize_for_compare(reading_text(value))
        if PROMISE.search(read) is None:
            continue
        flagged.add(format_path(path))
        shown = format_path(path)
        if amounts is None:
            amounts = _terms_amounts(terms)
        claimed = [m for m in find_money(read) if m.currencies and abs(m.amount) not in amounts]
        if claimed:
            findings.add_capped(
                "resource_money_claim",
                f"What {where} returned just now says, in {shown}, {_quote(value)}: money the terms "
                f"don't hold ({_quote(claimed[0].text)}). It is not part of what you approve: the "
                "Company performs only what the summary and terms describe.",
                None,
            )
        else:
            findings.add_capped(
                "resource_promise",
                f"What {where} returned just now has text that reads like a promise in {shown}: "
                f"{_quote(value)}. It is not part of what you approve: only the summary and terms are.",
                None,
            )
    return frozenset(flagged)


# ---- values the terms give under the same key -------------------------------------------------


def _resource_at(resource: Mapping[str, Any], path: Path) -> tuple[Path, Any] | None:
    """The resource's value at the terms' own path, else under the same key at its top level."""
    node: Any = resource
    for step in path:
        if (
            isinstance(node, Mapping)
            and step in node
            or isinstance(node, list)
            and isinstance(step, int)
            and 0 <= step < len(node)
        ):
            node = node[step]
        else:
            break
    else:
        return path, node
    key = _raw_leaf(path)
    if key is None:
        return None
    for name, value in resource.items():
        if isinstance(name, str) and _norm_key(name) == _norm_key(key):
            return (name,), value
    return None


def _compared(path: Path) -> bool:
    """Not what the action changes, nor a present value resource_checks.py compares."""
    return not any(
        isinstance(step, str) and (_CHANGE_PREFIX.match(step) or _PRESENT_PREFIX.match(step))
        for step in path
    )


def _money_of(value: Any) -> Decimal | None:
    if isinstance(value, Mapping):
        value = value.get("amount", value.get("value"))
    amount = _decimal(value)
    return abs(amount) if amount is not None else None


def _check_money(
    findings: _Findings, terms: Mapping[str, Any], resource: Mapping[str, Any], where: str
) -> None:
    for money in _terms_money(terms):
        path = money.path
        key = _raw_leaf(path)
        if key is None or not _compared(path):
            continue
        # The amount's own object when the terms nest it ({"refund": {"amount": …}}).
        holder = path[:-1] if _norm_key(key) in ("amount", "value") and len(path) > 1 else path
        name = _raw_leaf(holder)
        if name is None or _norm_key(name) in _PRICE_KEYS:
            continue
        found = _resource_at(resource, holder)
        if found is None:
            continue
        theirs = _money_of(found[1])
        if theirs is None or theirs == 0 or theirs == abs(money.amount):
            continue
        findings.add_capped(
            "resource_money_mismatch",
            f"The terms give {_field(holder)} as {_quote(money.text)}, but what {where} returned just "
            f"now gives {format_path(found[0])} as {_quote(found[1])}. Only the terms are what you approve.",
            _field(holder),
        )
