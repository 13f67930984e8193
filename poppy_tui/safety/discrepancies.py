"""Check an operation before the User is asked to approve it (Ops §5). No Textual.

The Company writes both the summary and the terms, so the summary alone could
describe something other than the terms, and the terms something other than
what we asked for. Every difference becomes a Finding the approval screen shows.
Findings are our words; any Company value quoted in one is sanitised first.
Codes and severities are listed in docs/safety.md and in CODES below.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Literal, Mapping
from urllib.parse import unquote

from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import ApiRequest, McpRequest
from poppy_tui.safety.extract import (
    DateMention,
    MoneyMention,
    find_dates,
    find_money,
    normalize_for_compare,
)
from poppy_tui.safety.formatting import format_summary
from poppy_tui.safety.sanitize import mixed_script_words, sanitize, sanitize_line

__all__ = [
    "CODES",
    "Finding",
    "RevisionDiff",
    "TermsChange",
    "check_operation",
    "diff_revisions",
    "format_path",
    "key_amount",
    "terms_rows",
]

Severity = Literal["danger", "warning", "info"]

# code -> severity. A few codes have two severities; the stronger one is listed
# and docs/safety.md says when the weaker one applies.
CODES: dict[str, Severity] = {
    "request_mismatch": "danger",
    "amount_mismatch": "danger",
    "currency_mismatch": "danger",
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
    "terms_changed": "warning",
    "amount_changed": "warning",
    "summary_changed": "warning",
    "expiry_changed": "info",
    "new_revision": "info",
    "different_operation": "info",
    "check_failed": "danger",
}

_RANK = {"danger": 0, "warning": 1, "info": 2}
_QUOTE_CHARS = 60
_MAX_PER_CODE = 10
_UNBOUNDED = sys.maxsize


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str
    field: str | None = None


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


# --- paths, keys and values ----------------------------------------------------

Path = tuple[Any, ...]
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MAX_DEPTH = 64


def format_path(path: Iterable[Any]) -> str:
    """A key path for display: a.b[0]["odd key"]. Keys with dots or brackets are
    quoted, so a flat "price.amount" key can't pass for a nested one."""
    out: list[str] = []
    for element in path:
        if isinstance(element, int) and not isinstance(element, bool):
            out.append(f"[{element}]")
        elif isinstance(element, str) and _PLAIN_KEY.fullmatch(element):
            out.append(("." if out else "") + element)
        else:
            out.append("[" + json.dumps(str(element), ensure_ascii=False) + "]")
    return sanitize_line("".join(out), _UNBOUNDED).text


def _field(path: Path) -> str:
    shown = format_path(path)
    return "terms" + shown if shown.startswith("[") else "terms." + shown


def _flatten(value: Any) -> list[tuple[Path, Any]]:
    """Leaves in document order: scalars, and empty objects or arrays."""
    leaves: list[tuple[Path, Any]] = []
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Mapping) and node and len(path) < _MAX_DEPTH:
            stack.extend(reversed([((*path, str(k)), v) for k, v in node.items()]))
        elif isinstance(node, (list, tuple)) and node and len(path) < _MAX_DEPTH:
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(node)]))
        else:
            leaves.append((path, node))
    return leaves


def _dicts(value: Any) -> list[tuple[Path, Mapping[str, Any]]]:
    found: list[tuple[Path, Mapping[str, Any]]] = []
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if len(path) >= _MAX_DEPTH:
            continue
        if isinstance(node, Mapping):
            found.append((path, node))
            stack.extend(reversed([((*path, str(k)), v) for k, v in node.items()]))
        elif isinstance(node, (list, tuple)):
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(node)]))
    return found


def _norm_key(key: Any) -> str:
    """replacementSku ~ replacement_sku ~ Replacement-SKU."""
    text = unicodedata.normalize("NFKC", str(key)).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _joined(path: Path) -> str:
    return "".join(str(e) if isinstance(e, int) else _norm_key(e) for e in path)


def _leaf_key(path: Path) -> str | None:
    for element in reversed(path):
        if isinstance(element, str):
            return _norm_key(element)
    return None


_NUMBER_TEXT = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        try:
            result = Decimal(repr(value))
        except InvalidOperation:
            return None
        return result if result.is_finite() else None
    if isinstance(value, str):
        text = value.strip()
        if len(text) <= 64 and _NUMBER_TEXT.fullmatch(text):
            return Decimal(text)
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _same_value(a: Any, b: Any) -> bool:
    """Equal as a Company would read them: 2 == "2", 70 == "70.00", True == "true"."""
    if type(a) is type(b) and a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        left, right = _as_bool(a), _as_bool(b)
        return left is not None and left == right
    left_number, right_number = _decimal(a), _decimal(b)
    if left_number is not None and right_number is not None:
        return left_number == right_number
    if a is None or b is None:
        return (a is None or a == "null") and (b is None or b == "null")
    if isinstance(a, (Mapping, list, tuple)) or isinstance(b, (Mapping, list, tuple)):
        return _canonical(a) == _canonical(b)
    return False


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except RecursionError:
        return "(nested too deeply to show)"  # the protocol caps terms at 32 levels; this is not one
    except (TypeError, ValueError):
        return repr(value)


def _display(value: Any) -> str:
    """A value for a table cell or a message: text as is, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    return _canonical(value)


def _quote(value: Any) -> str:
    text = sanitize_line(_display(value), _QUOTE_CHARS).text
    return f'"{text}"' if isinstance(value, str) else text


def _shown(value: Any) -> str:
    return sanitize_line(_display(value), _UNBOUNDED).text


# --- public helpers ------------------------------------------------------------


def terms_rows(terms: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(key path, value) for every leaf of the terms, sanitised, nothing truncated."""
    if not isinstance(terms, Mapping):
        return []
    return [(format_path(path), _shown(value)) for path, value in _flatten(terms) if path]


@dataclass(frozen=True)
class _Money:
    path: Path
    amount: Decimal
    currency: str | None
    text: str  # amount as the Company wrote it


_CURRENCY_KEYS = frozenset({"currency", "currencycode", "ccy", "curr"})
_MINOR_KEYS = frozenset({"amountminor", "minorunits", "amountcents", "cents", "amountinminorunits", "minoramount"})
_MONEY_KEYS = (
    "total", "totalamount", "grandtotal", "amountdue", "charge", "pricedifference", "difference",
    "amount", "price", "cost", "fee", "refund", "subtotal", "tax", "deposit", "balance", "fare",
)
_QUANTITY_KEYS = frozenset(
    {"quantity", "qty", "count", "nights", "seats", "tickets", "guests", "passengers", "units", "pieces", "rooms"}
)
_ZERO_DECIMAL = frozenset({"JPY", "KRW", "VND", "CLP", "ISK"})
_THREE_DECIMAL = frozenset({"BHD", "KWD", "OMR", "JOD"})


def _is_quantity_key(key: str | None) -> bool:
    return key is not None and (key in _QUANTITY_KEYS or key.endswith(("quantity", "qty", "count")))


def _is_money_key(key: str) -> bool:
    if key.endswith(("rate", "percent", "pct", "ratio")):
        return False
    return key in _MONEY_KEYS or key.endswith(("amount", "price", "total", "fee", "cost"))


def _terms_money(terms: Any) -> list[_Money]:
    """Structured money in the terms: numbers next to a currency, or under money-ish keys."""
    found: list[_Money] = []
    for path, node in _dicts(terms):
        currency = None
        for key, value in node.items():
            if _norm_key(key) in _CURRENCY_KEYS and isinstance(value, str):
                currency = unicodedata.normalize("NFKC", value).strip().upper()
                break
        for key, value in node.items():
            norm = _norm_key(key)
            if norm in _CURRENCY_KEYS or _is_quantity_key(norm):
                continue
            amount = _decimal(value)
            if amount is None:
                if isinstance(value, str) and _is_money_key(norm):
                    mentions = [m for m in find_money(normalize_for_compare(value)) if m.currencies]
                    if len(mentions) == 1:
                        only = mentions[0]
                        code = next(iter(only.currencies)) if len(only.currencies) == 1 else None  # type: ignore[arg-type]
                        found.append(_Money((*path, str(key)), only.amount, code, only.text))
                continue
            if not (_is_money_key(norm) or norm in _MINOR_KEYS or (currency is not None and norm == "value")):
                continue
            if norm in _MINOR_KEYS:
                exponent = 0 if currency in _ZERO_DECIMAL else 3 if currency in _THREE_DECIMAL else 2
                amount = amount.scaleb(-exponent)
                text = f"{amount:.{exponent}f}"
            else:
                text = value.strip() if isinstance(value, str) else str(amount)
            found.append(_Money((*path, str(key)), amount, currency, text))
    return found


def _money_label(money: _Money) -> str:
    text = sanitize_line(money.text, _QUOTE_CHARS).text
    if money.currency:
        return f"{sanitize_line(money.currency, 12).text} {text}"
    return text


def key_amount(operation: Operation) -> str | None:
    """The main money amount for display, e.g. "USD 70.00", or None.

    From the terms when they have one (a total before a price difference before
    any amount); otherwise the summary's amount if it names exactly one.
    """
    try:
        moneys = _terms_money(operation.terms) if isinstance(operation.terms, Mapping) else []
        if moneys:

            def rank(money: _Money) -> int:
                names = [_norm_key(e) for e in money.path if isinstance(e, str)]
                name = names[-1] if names else ""
                if name in ("amount", "value", "amountminor", "minorunits", "amountcents", "cents") and len(names) > 1:
                    name = names[-2]
                for index, key in enumerate(_MONEY_KEYS):
                    if name == key:
                        return index
                return len(_MONEY_KEYS)

            return _money_label(min(moneys, key=rank))
        mentions = [m for m in find_money(_summary_check_text(operation.summary)) if m.currencies]
        distinct = {(abs(m.amount), m.currencies) for m in mentions}
        if len(distinct) == 1:
            return sanitize_line(mentions[0].text, _QUOTE_CHARS).text
    except Exception:  # noqa: BLE001 - a display helper must not break the inbox
        return None
    return None


# --- the checks ----------------------------------------------------------------


def _summary_check_text(summary: str) -> str:
    """The summary as the User reads it, with our visible tokens as separators."""
    formatted = format_summary(summary)
    text = formatted.text
    placeholders = sorted(formatted.placeholder_spans)
    if placeholders:
        pieces: list[str] = []
        last = 0
        for start, end in placeholders:
            if start < last:
                continue
            pieces.append(text[last:start])
            pieces.append(" ")
            last = end
        pieces.append(text[last:])
        text = "".join(pieces)
    return normalize_for_compare(text)


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._seen: set[tuple[str, str | None, str]] = set()
        self._per_code: dict[str, int] = {}

    def add(self, code: str, message: str, field: str | None = None, severity: Severity | None = None) -> None:
        key = (code, field, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(Finding(severity or CODES[code], code, message, field))

    def add_capped(self, code: str, message: str, field: str | None, severity: Severity | None = None) -> None:
        count = self._per_code.get(code, 0)
        self._per_code[code] = count + 1
        if count < _MAX_PER_CODE:
            self.add(code, message, field, severity)

    def close_caps(self) -> None:
        for code, count in self._per_code.items():
            if count > _MAX_PER_CODE:
                self.add(code, f"…and {count - _MAX_PER_CODE} more fields with the same problem.", None)


# Text safety (f).

_FLAG_FINDINGS: tuple[tuple[str, str, str], ...] = (
    ("bidi", "bidi_control", "holds bidirectional control characters, which can reorder what you see; they are shown as ⟨U+…⟩"),
    ("escape", "escape_sequence", "holds terminal escape sequences; they are shown as \\x1b… and do nothing"),
    ("control", "control_character", "holds control characters; they are shown as \\xNN"),
    ("invisible", "invisible_character", "holds invisible characters, which can hide or change text; they are shown as ⟨U+…⟩"),
    ("markup", "markup_tag", "holds text that looks like an action or link tag; it is shown as plain text and does nothing"),
)


def _text_safety(findings: _Findings, flags: frozenset[str], where: str, field: str, capped: bool, mixed_words: bool) -> None:
    add = findings.add_capped if capped else findings.add
    for flag, code, text in _FLAG_FINDINGS:
        if flag not in flags:
            continue
        if flag == "control" and "escape" in flags:
            continue
        add(code, f"{where} {text}.", field)
    if "mixed_script" in flags:
        if mixed_words:
            add("mixed_script", f"{where} mixes alphabets within a word (look-alike letters, as in a fake \"pаypal\").", field, "danger")
        else:
            add("mixed_script", f"{where} mixes letters from different alphabets; check names and amounts closely.", field, "warning")


def _check_text(findings: _Findings, operation: Operation) -> None:
    summary = sanitize(operation.summary)
    _text_safety(findings, summary.flags, "The summary", "summary", False, True)
    terms = operation.terms
    if not isinstance(terms, Mapping):
        return
    for path, node in _dicts(terms):
        for key in node:
            flags = sanitize_line(str(key), _UNBOUNDED).flags
            if flags:
                where = f"A key in the terms ({format_path((*path, str(key)))})"
                _text_safety(findings, flags, where, _field((*path, str(key))), True, bool(mixed_script_words(str(key))))
    for path, value in _flatten(terms):
        if isinstance(value, str) and path:
            flags = sanitize_line(value, _UNBOUNDED).flags
            if flags:
                where = f"The terms value {format_path(path)}"
                _text_safety(findings, flags, where, _field(path), True, bool(mixed_script_words(value)))


# Expiry (d).


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _check_expiry(findings: _Findings, operation: Operation, now: datetime | None, min_read_seconds: float) -> None:
    now = _aware(now) if now is not None else datetime.now(timezone.utc)
    expires = _aware(operation.expires_at)
    remaining = (expires - now).total_seconds()
    when = sanitize_line(getattr(operation, "expires_at_text", "") or expires.isoformat(), _QUOTE_CHARS).text
    if remaining <= 0:
        findings.add("expired", f"This operation expired at {when}; an approval would be refused.", "expires_at")
    elif remaining < min_read_seconds:
        findings.add(
            "expires_soon",
            f"Only {int(remaining)} seconds are left before this expires at {when}; "
            "don't let the deadline rush you.",
            "expires_at",
        )


# Request vs terms (a).

_GENERIC_LEAVES = frozenset(
    {"id", "type", "name", "value", "amount", "currency", "code", "key", "kind", "status", "description", "note", "notes"}
)
_ID_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.~:-]*")
_VERSION_SEGMENT = re.compile(r"v\d+(?:\.\d+)*", re.IGNORECASE)
_ID_SUFFIXES = ("", "id", "number", "no", "num", "ref", "reference", "code", "key")


class _TermsIndex:
    def __init__(self, terms: Mapping[str, Any]) -> None:
        self.leaves = [(p, v) for p, v in _flatten(terms) if p]
        self.by_joined: dict[str, list[tuple[Path, Any]]] = {}
        self.by_leaf: dict[str, list[tuple[Path, Any]]] = {}
        self.by_tail: dict[str, list[tuple[Path, Any]]] = {}
        for path, value in self.leaves:
            self.by_joined.setdefault(_joined(path), []).append((path, value))
            leaf = _leaf_key(path)
            if leaf is not None:
                self.by_leaf.setdefault(leaf, []).append((path, value))
            keys = [_norm_key(e) for e in path if isinstance(e, str)]
            self.by_tail.setdefault(keys[-1] if keys else "", []).append((path, value))
            if len(keys) >= 2:
                self.by_tail.setdefault(keys[-2] + keys[-1], []).append((path, value))


def _request_leaves(request: Any) -> list[tuple[str, Path, Any]]:
    """(where, path, value) for every field we sent."""
    out: list[tuple[str, Path, Any]] = []
    if isinstance(request, ApiRequest):
        if request.body is not None:
            out.extend(("request body field", p, v) for p, v in _flatten(request.body) if p)
        try:
            query = request.query
        except ValueError:
            query = {}
        out.extend(("query parameter", (k,), v) for k, v in query.items())
    elif isinstance(request, McpRequest) and isinstance(request.arguments, Mapping):
        out.extend(("tool argument", p, v) for p, v in _flatten(request.arguments) if p)
    return out


def _path_ids(request: Any) -> list[tuple[str | None, str]]:
    """(collection stem, segment) for URL path segments that look like IDs."""
    if not isinstance(request, ApiRequest):
        return []
    try:
        segments = [unquote(s) for s in request.path.split("/") if s]
    except ValueError:
        return []
    found: list[tuple[str | None, str]] = []
    for index, segment in enumerate(segments):
        if not _ID_SEGMENT.fullmatch(segment) or _VERSION_SEGMENT.fullmatch(segment):
            continue
        if not (any(ch.isdigit() for ch in segment) or "_" in segment):
            continue
        stem = None
        if index:
            previous = _norm_key(segments[index - 1])
            if previous.endswith("ies"):
                stem = previous[:-3] + "y"
            elif previous.endswith(("ses", "xes")):
                stem = previous[:-2]
            elif previous.endswith("s"):
                stem = previous[:-1]
            else:
                stem = previous
        found.append((stem, segment))
    return found


def _check_request(findings: _Findings, index: _TermsIndex, request: Any) -> None:
    leaves = _request_leaves(request)
    leaf_counts: dict[str, int] = {}
    for _, path, _ in leaves:
        leaf = _leaf_key(path)
        if leaf is not None:
            leaf_counts[leaf] = leaf_counts.get(leaf, 0) + 1
    for where, path, value in leaves:
        candidates = index.by_joined.get(_joined(path))
        if not candidates:
            leaf = _leaf_key(path)
            if (
                leaf
                and leaf not in _GENERIC_LEAVES
                and len(index.by_leaf.get(leaf, ())) == 1
                and leaf_counts.get(leaf) == 1
            ):
                candidates = index.by_leaf[leaf]
        if not candidates:
            continue
        if any(_same_value(value, terms_value) for _, terms_value in candidates):
            continue
        terms_path, terms_value = candidates[0]
        findings.add(
            "request_mismatch",
            f"You asked for {format_path(path)} = {_quote(value)} ({where}), "
            f"but the terms say {format_path(terms_path)} = {_quote(terms_value)}.",
            _field(terms_path),
        )
    for stem, segment in _path_ids(request):
        if not stem:
            continue
        candidates = []
        for suffix in _ID_SUFFIXES:
            candidates.extend(index.by_tail.get(stem + suffix, ()))
        if not candidates or any(_same_value(segment, v) for _, v in candidates):
            continue
        terms_path, terms_value = candidates[0]
        findings.add(
            "request_mismatch",
            f"You asked about {sanitize_line(stem, 30).text} {_quote(segment)} (in the request URL), "
            f"but the terms say {format_path(terms_path)} = {_quote(terms_value)}.",
            _field(terms_path),
        )


def _request_values(request: Any) -> set[str]:
    values = {str(v) for _, _, v in _request_leaves(request) if isinstance(v, (str, int)) and not isinstance(v, bool)}
    values.update(segment for _, segment in _path_ids(request))
    return values


# Terms vs summary (b).


def _compatible(mention: MoneyMention, currency: str | None) -> bool:
    return currency is None or mention.currencies is None or currency in mention.currencies


def _check_money(findings: _Findings, terms: Mapping[str, Any], text: str) -> None:
    moneys = _terms_money(terms)
    mentions = find_money(text)
    marked = [m for m in mentions if m.currencies is not None]
    bare = {abs(m.amount) for m in mentions if m.currencies is None}

    # Every number anywhere in the terms can explain a summary amount.
    explaining: list[tuple[Decimal, str | None]] = [(abs(m.amount), m.currency) for m in moneys]
    money_paths = {m.path for m in moneys}
    for path, value in _flatten(terms):
        if path in money_paths:
            continue  # already counted with its currency; bare, it would excuse "€70" for USD 70
        number = _decimal(value)
        if number is not None:
            explaining.append((abs(number), None))
        elif isinstance(value, str):
            for inner in find_money(normalize_for_compare(value)):
                codes = inner.currencies
                explaining.append((abs(inner.amount), next(iter(codes)) if codes and len(codes) == 1 else None))

    def explained(mention: MoneyMention) -> bool:
        return any(abs(mention.amount) == amount and _compatible(mention, code) for amount, code in explaining)

    unexplained = [m for m in marked if not explained(m)]
    used: set[int] = set()
    missing: list[_Money] = []
    for money in moneys:
        amount = abs(money.amount)
        if any(abs(m.amount) == amount and _compatible(m, money.currency) for m in marked) or (
            amount in bare and not any(abs(m.amount) == amount for m in marked)
        ):
            continue
        wrong_currency = [m for m in unexplained if abs(m.amount) == amount]
        if wrong_currency:
            for mention in wrong_currency:
                used.add(id(mention))
            findings.add(
                "currency_mismatch",
                f"The terms say {_money_label(money)} ({format_path(money.path)}), "
                f"but the summary says {_quote(wrong_currency[0].text)}: a different currency.",
                _field(money.path),
            )
            continue
        missing.append(money)
    remaining = [m for m in unexplained if id(m) not in used]
    for money in missing:
        if remaining:
            said = ", ".join(_quote(m.text) for m in remaining[:3])
            findings.add(
                "amount_mismatch",
                f"The terms say {_money_label(money)} ({format_path(money.path)}), but the summary says {said}.",
                _field(money.path),
            )
        else:
            findings.add(
                "amount_not_in_summary",
                f"The terms include {_money_label(money)} ({format_path(money.path)}), which the summary doesn't mention.",
                _field(money.path),
            )
    if missing and remaining:
        return
    for mention in remaining:
        findings.add(
            "summary_amount_not_in_terms",
            f"The summary mentions {_quote(mention.text)}, which isn't in the terms.",
            "summary",
        )


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|z|[+-]\d{2}:\d{2})?")


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
                dates.add(parsed.astimezone(timezone.utc).date())
    except ValueError:
        return set()
    return dates


def _date_matches(mention: DateMention, dates: set[date]) -> bool:
    return any(
        d.month == mention.month and d.day == mention.day and (mention.year is None or mention.year == d.year)
        for d in dates
    )


def _check_dates(findings: _Findings, terms: Mapping[str, Any], text: str, operation: Operation) -> None:
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
    allowed |= {expires.date(), expires.astimezone(timezone.utc).date()}
    unexplained = [m for m in mentions if not _date_matches(m, allowed)]
    missing = [(p, v) for p, v, dates in terms_dates if not any(_date_matches(m, dates) for m in mentions)]
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


_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1, "single": 1,
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
            noun = re.compile(_WORD_NUMBER + r"\s+" + re.escape(key.rstrip("s")) + r"s?(?![A-Za-z])", re.IGNORECASE)
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
        if any(n == wanted and re.search(rf"(?<![A-Za-z]){w}(?![A-Za-z])", lowered) for w, n in _NUMBER_WORDS.items()):
            continue
        findings.add(
            "quantity_not_in_summary",
            f"The terms say {format_path(path)} = {wanted}, which the summary doesn't mention.",
            _field(path),
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
    if (key and _norm_key(key) in _CURRENCY_KEYS) or _decimal(value) is not None or _dates_of(value):
        return False
    if _is_id_key(key):
        return True
    return bool(_ID_VALUE.fullmatch(value)) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mentions_id(text: str, value: str) -> bool:
    needle = normalize_for_compare(value)
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(needle) + r"(?![A-Za-z0-9_])", re.IGNORECASE)
    if pattern.search(text):
        return True
    parts = re.split(r"[-_]", needle)
    if len(parts) > 1 and not any(c.isdigit() for c in needle) and all(parts):
        return all(re.search(r"(?<![A-Za-z0-9])" + re.escape(p) + r"(?![A-Za-z0-9])", text, re.IGNORECASE) for p in parts)
    return False


def _check_ids(findings: _Findings, terms: Mapping[str, Any], text: str, confirmed: set[str]) -> None:
    for path, value in _flatten(terms):
        if not isinstance(value, str) or not _is_id_like(_raw_leaf(path), value):
            continue
        if _mentions_id(text, value):
            continue
        prefix = _ID_PREFIX.match(value)
        if prefix:
            others = re.findall(
                r"(?<![A-Za-z0-9_-])" + re.escape(prefix.group(1)) + r"[_-][A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*",
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
        findings.add(
            "id_not_in_summary",
            f"The terms include {format_path(path)} = {_quote(value)}, which the summary doesn't mention.",
            _field(path),
        )


# Revisions (c).


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
        summary_diff = (f"@@ the summary changed ({len(before)} lines -> {len(after)} lines); too long to compare line by line @@",)
    else:
        summary_diff = tuple(difflib.unified_diff(before, after, "previous", "current", lineterm="", n=2))
    old_leaves, new_leaves = _leaf_map(previous.terms), _leaf_map(current.terms)
    changes: list[TermsChange] = []
    for path, value in old_leaves.items():
        if path not in new_leaves:
            changes.append(TermsChange(path, "removed", _shown(value), None))
        elif _canonical(value) != _canonical(new_leaves[path]) or type(value) is not type(new_leaves[path]):
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


def _check_revision(findings: _Findings, operation: Operation, previous: Operation) -> None:
    if previous.operation_id != operation.operation_id:
        findings.add("different_operation", "This is a different operation from the one compared with, so no changes are shown.")
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
        findings.add("terms_changed", f"The terms changed since you last saw this{detail}", "terms")
        old_amount, new_amount = key_amount(previous), key_amount(operation)
        if old_amount != new_amount:
            findings.add(
                "amount_changed",
                f"The amount changed from {old_amount or 'none'} to {new_amount or 'none'} since you last saw this.",
                "terms",
            )
    if diff.summary_changed:
        findings.add("summary_changed", "The summary changed since you last saw this; read it again.", "summary")
    if not diff.terms_changed and not diff.summary_changed:
        if diff.expires_changed:
            findings.add("expiry_changed", "Only the expiry time changed since you last saw this.", "expires_at")
        else:
            findings.add("new_revision", "This is a new revision with the same summary, terms and expiry.", "revision")


def check_operation(
    operation: Operation,
    request: Any,
    previous: Operation | None = None,
    now: datetime | None = None,
    min_read_seconds: float = 60,
) -> list[Finding]:
    """Every discrepancy worth showing before approval, danger first.

    `request` is the ApiRequest, McpRequest or ConversationRequest that returned
    the operation (or None). A conversation has no structured request, so only
    the terms-vs-summary checks apply to it. Never raises: a check that fails
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
            ("dates", lambda: _check_dates(findings, terms, summary_text(), operation)),
            ("quantities", lambda: _check_quantities(findings, terms, summary_text())),
            ("ids", lambda: _check_ids(findings, terms, summary_text(), _request_values(request))),
        ]
    if previous is not None:
        stages.append(("revision", lambda: _check_revision(findings, operation, previous)))
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
