"""Amounts, numbers, dates and IDs as a reader would find them in text. Pure stdlib.

Used to compare a summary with its terms. Text is compared after NFKC (so
fullwidth "＄７０" reads as "$70", as it does to the User) and with every
decimal digit mapped to ASCII (so Arabic-Indic "٧٠" is 70, as int() would say).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

__all__ = [
    "CURRENCY_CODES",
    "DateMention",
    "MoneyMention",
    "find_dates",
    "find_money",
    "find_money_spans",
    "find_numbers",
    "normalize_for_compare",
    "parse_decimal",
    "symbol_currencies",
]

CURRENCY_CODES = frozenset(
    """USD EUR GBP JPY CNY CHF CAD AUD NZD HKD SGD SEK NOK DKK PLN CZK HUF RON BGN ISK
    INR KRW BRL MXN ARS CLP COP PEN ZAR TRY RUB UAH ILS AED SAR QAR KWD BHD OMR JOD
    EGP NGN KES THB IDR MYR PHP VND TWD PKR BDT LKR""".split()
)
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN", "ARS", "CLP", "COP"})
_SYMBOLS: dict[str, frozenset[str]] = {
    "$": _DOLLARS,
    "US$": frozenset({"USD"}),
    "CA$": frozenset({"CAD"}),
    "C$": frozenset({"CAD"}),
    "A$": frozenset({"AUD"}),
    "AU$": frozenset({"AUD"}),
    "NZ$": frozenset({"NZD"}),
    "HK$": frozenset({"HKD"}),
    "S$": frozenset({"SGD"}),
    "R$": frozenset({"BRL"}),
    "MX$": frozenset({"MXN"}),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP"}),
    "¥": frozenset({"JPY", "CNY"}),
    "₹": frozenset({"INR"}),
    "₩": frozenset({"KRW"}),
    "₽": frozenset({"RUB"}),
    "₺": frozenset({"TRY"}),
    "₪": frozenset({"ILS"}),
    "₫": frozenset({"VND"}),
    "฿": frozenset({"THB"}),
    "₱": frozenset({"PHP"}),
    "₦": frozenset({"NGN"}),
    "₴": frozenset({"UAH"}),
}
_WORDS: dict[str, frozenset[str]] = {
    "dollar": _DOLLARS,
    "dollars": _DOLLARS,
    "euro": frozenset({"EUR"}),
    "euros": frozenset({"EUR"}),
    "yen": frozenset({"JPY"}),
    "rupee": frozenset({"INR", "PKR", "LKR"}),
    "rupees": frozenset({"INR", "PKR", "LKR"}),
}

_SYM = r"(?:US|CA|AU|NZ|HK|MX|C|A|S|R)?\$|[€£¥₹₩₽₺₪₫฿₱₦₴]"
_CODE = r"(?<![A-Za-z])(?:" + "|".join(sorted(CURRENCY_CODES)) + r")(?![A-Za-z])"
_WORD = r"(?i:dollars?|euros?|yen|rupees?)(?![A-Za-z])"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:[.,]\d+)?"
# A number with the currency before or after it. Without one before, the number
# must not continue a word, decimal, date or time ("ord_70", "2026-10-08", "12:20").
_MONEY_RE = re.compile(
    rf"(?:(?P<pre>{_SYM}|{_CODE})[ \u00a0]?(?P<neg>[-−])?|(?<![\w.,/:])(?<!\d-))"
    rf"(?P<num>{_NUM})"
    rf"(?:[ \u00a0]?(?P<post>{_SYM}|{_CODE}|{_WORD})|(?!\w)(?![/:]\d)(?!-\d))"
)
_GROUPED_COMMA = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_GROUPED_DOT = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?")

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_DATE_RES = (
    re.compile(r"(?<![\d])(?P<year>\d{4})-(?P<m>\d{1,2})-(?P<day>\d{1,2})(?!\d)"),
    re.compile(rf"(?<![A-Za-z]){_MONTH}\s+{_DAY}(?![\d:]){_YEAR}", re.IGNORECASE),
    re.compile(rf"(?<![\d.]){_DAY}\s+(?:of\s+)?{_MONTH}(?![A-Za-z]){_YEAR}", re.IGNORECASE),
    re.compile(r"(?<![\d/.])(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{4})(?![\d/.])"),
)


@dataclass(frozen=True)
class MoneyMention:
    amount: Decimal
    currencies: frozenset[str] | None  # None: a bare number, no currency given
    text: str  # as written, for messages (sanitise before showing)


@dataclass(frozen=True)
class DateMention:
    year: int | None
    month: int
    day: int
    text: str


def normalize_for_compare(text: str) -> str:
    """NFKC, then every decimal digit as ASCII."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    table = {}
    for ch in set(text):
        if ch.isdecimal() and not ch.isascii():
            table[ord(ch)] = str(unicodedata.decimal(ch))
    return text.translate(table) if table else text


def parse_decimal(text: str) -> Decimal | None:
    """A number as written, with "," or "." grouping or a decimal comma."""
    return _parse_decimal(text)


@lru_cache(maxsize=4096)
def _parse_decimal(text: str) -> Decimal | None:
    if text.isdigit():
        return Decimal(text)
    if _GROUPED_COMMA.fullmatch(text):
        text = text.replace(",", "")
    elif _GROUPED_DOT.fullmatch(text):
        text = text.replace(".", "").replace(",", ".")
    else:
        text = text.replace(",", ".")
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def symbol_currencies(marker: str) -> frozenset[str] | None:
    marker_upper = marker.upper()
    if marker_upper in CURRENCY_CODES:
        return frozenset({marker_upper})
    if marker_upper in _SYMBOLS:
        return _SYMBOLS[marker_upper]
    if marker in _SYMBOLS:
        return _SYMBOLS[marker]
    return _WORDS.get(marker.lower())


def find_money(text: str) -> list[MoneyMention]:
    """Every distinct number in `text`; those with a currency next to them carry it.

    Expects text already passed through normalize_for_compare. Distinct, because
    the checks only ask "is this amount there", and a hostile summary repeating
    "$1 " a million times must not cost a million objects.
    """
    return list(_find_money(text))


@lru_cache(maxsize=4)
def _find_money(text: str) -> tuple[MoneyMention, ...]:
    found: dict[tuple[str, str | None], MoneyMention] = {}
    for match in _MONEY_RE.finditer(text):
        number = match.group("num")
        marker = match.group("pre") or match.group("post")
        key = (number, marker)
        if key in found:
            continue
        amount = _parse_decimal(number)
        if amount is None:
            continue
        currencies = symbol_currencies(marker) if marker else None
        found[key] = MoneyMention(amount, currencies, match.group().strip())
    return tuple(found.values())


def find_money_spans(text: str, limit: int = 1000) -> list[tuple[MoneyMention, int, int]]:
    """Each number with its (start, end) in `text`, in order, at most `limit` of them
    (a hostile summary repeating "$1 " must not cost a million objects)."""
    spans: list[tuple[MoneyMention, int, int]] = []
    for match in _MONEY_RE.finditer(text):
        if len(spans) >= limit:
            break
        amount = _parse_decimal(match.group("num"))
        if amount is None:
            continue
        marker = match.group("pre") or match.group("post")
        currencies = symbol_currencies(marker) if marker else None
        spans.append(
            (MoneyMention(amount, currencies, match.group().strip()), match.start(), match.end())
        )
    return spans


def find_numbers(text: str) -> set[Decimal]:
    return {mention.amount for mention in find_money(text)}


def find_dates(text: str) -> list[DateMention]:
    """Distinct calendar dates written as ISO, "October 8[, 2026]", "8 Oct 2026" or d/m/yyyy.

    A numeric d/m/yyyy date is ambiguous, so it yields both readings.
    """
    return list(_find_dates(text))


@lru_cache(maxsize=4)
def _find_dates(text: str) -> tuple[DateMention, ...]:
    found: dict[tuple[int | None, int, int], DateMention] = {}
    for pattern in _DATE_RES:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            year = int(groups["year"]) if groups.get("year") else None
            if "mon" in groups and groups.get("mon"):
                readings = [(_MONTHS[groups["mon"].lower().rstrip(".")], int(groups["day"]))]
            elif "m" in groups and groups.get("m"):
                readings = [(int(groups["m"]), int(groups["day"]))]
            else:
                a, b = int(groups["a"]), int(groups["b"])
                readings = [(a, b), (b, a)]
            for month, day in readings:
                if 1 <= month <= 12 and 1 <= day <= 31 and (year, month, day) not in found:
                    found[(year, month, day)] = DateMention(year, month, day, match.group())
    return tuple(found.values())
