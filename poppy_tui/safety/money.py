"""Money: amounts in the terms against amounts in the summary (Ops §5), and the
key amount shown in the inbox. No Textual."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any
from collections.abc import Mapping

from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.extract import MoneyMention, find_money, normalize_for_compare
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.money_direction import (
    Direction,
    is_rate,
    mention_direction,
    mentions_of,
    rate_label,
    said_as_zero,
    terms_direction,
    zero_direction,
)
from poppy_tui.safety.quantities import _is_quantity_key
from poppy_tui.safety.sanitize import reading_text, sanitize_line
from poppy_tui.safety.summary_reading import _summary_check_text
from poppy_tui.safety.terms_values import (
    _QUOTE_CHARS,
    Path,
    _decimal,
    _dicts,
    _field,
    _flatten,
    _norm_key,
    _quote,
    format_path,
)

__all__ = ["key_amount"]


@dataclass(frozen=True)
class _Money:
    path: Path
    amount: Decimal
    currency: str | None
    text: str  # amount as the Company wrote it


_CURRENCY_KEYS = frozenset({"currency", "currencycode", "ccy", "curr"})
_MINOR_KEYS = frozenset(
    {"amountminor", "minorunits", "amountcents", "cents", "amountinminorunits", "minoramount"}
)
_MONEY_KEYS = (
    "total",
    "totalamount",
    "grandtotal",
    "amountdue",
    "charge",
    "pricedifference",
    "difference",
    "amount",
    "price",
    "cost",
    "fee",
    "refund",
    "subtotal",
    "tax",
    "deposit",
    "balance",
    "fare",
    "credit",
)

_ZERO_DECIMAL = frozenset({"JPY", "KRW", "VND", "CLP", "ISK"})
_THREE_DECIMAL = frozenset({"BHD", "KWD", "OMR", "JOD"})


def _is_money_key(key: str) -> bool:
    if key.endswith(("rate", "percent", "pct", "ratio")):
        return False
    return key in _MONEY_KEYS or key.endswith(("amount", "price", "total", "fee", "cost"))


def _as_read(value: Any) -> Any:
    """A terms string as a reader takes it: "70\u200b0.00" is 700.00, not "no amount"."""
    return reading_text(value) if isinstance(value, str) else value


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
            amount = _decimal(_as_read(value))
            if amount is None:
                if isinstance(value, str) and _is_money_key(norm):
                    mentions = [
                        m
                        for m in find_money(normalize_for_compare(reading_text(value)))
                        if m.currencies
                    ]
                    if len(mentions) == 1:
                        only = mentions[0]
                        code = next(iter(only.currencies)) if len(only.currencies) == 1 else None  # type: ignore[arg-type]
                        found.append(_Money((*path, str(key)), only.amount, code, only.text))
                continue
            if not (
                _is_money_key(norm)
                or norm in _MINOR_KEYS
                or (currency is not None and norm == "value")
            ):
                continue
            if norm in _MINOR_KEYS:
                exponent = (
                    0 if currency in _ZERO_DECIMAL else 3 if currency in _THREE_DECIMAL else 2
                )
                amount = amount.scaleb(-exponent)
                text = f"{amount:.{exponent}f}"
            else:
                text = value.strip() if isinstance(value, str) else str(amount)
            found.append(_Money((*path, str(key)), amount, currency, text))
    return found


def _money_label(money: _Money) -> str:
    text = sanitize_line(money.text, _QUOTE_CHARS).text
    read = reading_text(money.text).strip()
    if read != money.text.strip():  # a hidden character changes the amount: say how it reads
        text = f"{text} (read as {sanitize_line(read, _QUOTE_CHARS).text})"
    if money.currency:
        return f"{sanitize_line(money.currency, 12).text} {text}"
    return text


_AMOUNT_LEAVES = ("amount", "value", "amountminor", "minorunits", "amountcents", "cents")


def _money_name(money: _Money) -> str:
    """The key that says what the money is: "price_difference" for price_difference.amount."""
    names = [_norm_key(e) for e in money.path if isinstance(e, str)]
    name = names[-1] if names else ""
    if name in _AMOUNT_LEAVES and len(names) > 1:
        name = names[-2]
    return name


def _rank(money: _Money) -> int:
    name = _money_name(money)
    for index, key in enumerate(_MONEY_KEYS):
        if name == key:
            return index
    return len(_MONEY_KEYS)


def key_amount(operation: Operation) -> str | None:
    """What the person pays, for display, e.g. "USD 70.00"; a negative amount ("USD -5.00")
    when money only comes back to them; None when nothing is paid or refunded.

    From the terms when they have money: the best paid amount (a total before a
    price difference before any amount) that isn't a rate the summary gives per
    period, so cancelling an "$18.00 a month" plan shows no amount. Otherwise a
    non-zero refund, as a negative payment. A plan whose only price is a rate,
    with nothing refunded, shows the rate ("USD 18.00 a month"). Without terms
    money, the summary's amount if it names exactly one.
    """
    try:
        moneys = _terms_money(operation.terms) if isinstance(operation.terms, Mapping) else []
        if moneys:
            text = _summary_check_text(operation.summary)
            paid, refunds, rates = [], [], []
            for money in moneys:
                name = _money_name(money)
                direction = (
                    terms_direction(name, money.amount) if money.amount else zero_direction(name)
                )
                if direction == "receives":
                    refunds.append(money)
                    continue
                spans = mentions_of(
                    text, money.amount, partial(_compatible, currency=money.currency)
                )
                if is_rate(text, spans):
                    rates.append((money, rate_label(text, spans)))
                else:
                    paid.append(money)
            if paid:
                return _money_label(min(paid, key=_rank))
            given_back = [m for m in refunds if m.amount]
            if given_back:
                refund = min(given_back, key=_rank)
                # Paying -24.00 is getting 24.00 back; short enough for the inbox's Amount column.
                unsigned = refund.text.strip().lstrip("-−+")
                return _money_label(
                    _Money(refund.path, -abs(refund.amount), refund.currency, "-" + unsigned)
                )
            if rates and not refunds:
                money, period = min(rates, key=lambda pair: _rank(pair[0]))
                return f"{_money_label(money)} {sanitize_line(period, 20).text}".rstrip()
            return None
        mentions = [m for m in find_money(_summary_check_text(operation.summary)) if m.currencies]
        distinct = {(abs(m.amount), m.currencies) for m in mentions}
        if len(distinct) == 1:
            return sanitize_line(mentions[0].text, _QUOTE_CHARS).text
    except Exception:  # noqa: BLE001 - a display helper must not break the inbox
        return None
    return None


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
        number = _decimal(_as_read(value))
        if number is not None:
            explaining.append((abs(number), None))
        elif isinstance(value, str):
            for inner in find_money(normalize_for_compare(reading_text(value))):
                codes = inner.currencies
                explaining.append(
                    (abs(inner.amount), next(iter(codes)) if codes and len(codes) == 1 else None)
                )

    def explained(mention: MoneyMention) -> bool:
        return any(
            abs(mention.amount) == amount and _compatible(mention, code)
            for amount, code in explaining
        )

    unexplained = [m for m in marked if not explained(m)]
    used: set[int] = set()
    missing: list[_Money] = []
    for money in moneys:
        amount = abs(money.amount)
        if any(abs(m.amount) == amount and _compatible(m, money.currency) for m in marked) or (
            amount in bare and not any(abs(m.amount) == amount for m in marked)
        ):
            continue
        if amount == 0 and said_as_zero(text, zero_direction(_money_name(money))):
            continue  # "at no extra cost", "isn't refunded": zero, said in words
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


def _check_direction(findings: _Findings, terms: Mapping[str, Any], text: str) -> None:
    """A charge the summary calls a refund, or a refund it calls a charge (Ops §5)."""
    for money in _terms_money(terms):
        expected = terms_direction(_money_name(money), money.amount)
        if expected is None:
            continue
        spans = mentions_of(text, money.amount, partial(_compatible, currency=money.currency))
        said = {mention_direction(text, start, end): mention for mention, start, end in spans}
        opposite: Direction = "receives" if expected == "pays" else "pays"
        if expected in said or opposite not in said:
            continue
        quoted = _quote(said[opposite].text)
        if expected == "pays":
            message = (
                f"The terms have you pay {_money_label(money)} ({format_path(money.path)}), "
                f"but the summary presents {quoted} as money coming back to you."
            )
        else:
            message = (
                f"The terms give you {_money_label(money)} back ({format_path(money.path)}), "
                f"but the summary presents {quoted} as a charge."
            )
        findings.add("direction_mismatch", message, _field(money.path))
